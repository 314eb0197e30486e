import { LOG_LEVELS } from '../observability/pino-logger.js';
import type { Settings } from './types.js';
import {
  parseBaseUrl,
  parseBoolean,
  parseEmailAddress,
  parseHostPorts,
  parseInteger,
  parseNonEmpty,
  parseSecretList,
  parseUrlWithScheme,
} from './parse.js';

/**
 * One configurable property: its name, environment variables, default, documentation, and how its
 * raw text becomes a typed value in {@link Settings}. This table is the single home of every option;
 * `docs/configuration.md` is generated from it (`npm run docs:config`) and a test keeps both in step.
 */
export interface PropertyDefinition {
  /** The property name, e.g. `svc.redis.url`. */
  name: string;
  /** The environment variable the contract names, when it differs from the rule-derived one. */
  env?: string;
  /** The default, as a person reads it in the configuration reference. */
  defaultText: string;
  /** What the property does. */
  doc: string;
  /** `true` for secrets: their values are never echoed in errors. */
  secret?: boolean;
  /** Parses the raw value and stores it in `settings`; throws an `Error` describing a bad value. */
  apply(settings: Settings, raw: string): void;
}

/**
 * The rule-derived environment variable of a property: upper-cased, `.` and `-` turned into `_`
 * (`svc.redis.url` → `SVC_REDIS_URL`).
 */
export function ruleDerivedEnv(name: string): string {
  return name.toUpperCase().replace(/[.-]/g, '_');
}

/** Every property svc-connect understands, in the order of the configuration reference. */
export const PROPERTY_DEFINITIONS: readonly PropertyDefinition[] = [
  {
    name: 'svc.port',
    env: 'PORT',
    defaultText: '`3000`',
    doc: 'TCP port the example server listens on.',
    apply: (s, raw) => {
      s.port = parseInteger(raw, 0, 65535);
    },
  },
  {
    name: 'svc.base-url',
    env: 'SVC_BASE_URL',
    defaultText: '`http://localhost:{port}`',
    doc: 'Public base URL of the provider. The issuer is `{base-url}/oidc/v1`.',
    apply: (s, raw) => {
      s.baseUrl = parseBaseUrl(raw);
    },
  },
  {
    name: 'svc.redis.url',
    env: 'REDIS_URL',
    defaultText: 'unset → embedded in-memory store (one process, lost on restart; warned, refused in production)',
    doc: 'Standalone Redis holding all provider state, e.g. `redis://127.0.0.1:6379/0`.',
    apply: (s, raw) => {
      s.redis.url = parseUrlWithScheme(raw, ['redis:', 'rediss:']);
    },
  },
  {
    name: 'svc.redis.cluster-nodes',
    env: 'SVC_REDIS_CLUSTER_NODES',
    defaultText: 'unset',
    doc: 'Redis Cluster seed nodes as `host:port,host:port`; takes precedence over `svc.redis.url`.',
    apply: (s, raw) => {
      s.redis.clusterNodes = parseHostPorts(raw);
    },
  },
  {
    name: 'svc.redis.key-prefix',
    env: 'SVC_REDIS_KEY_PREFIX',
    defaultText: '`svc:`',
    doc: 'Prefix of every Redis key the provider writes.',
    apply: (s, raw) => {
      const prefix = parseNonEmpty(raw);
      if (/[\s{}]/.test(prefix)) throw new Error('must not contain whitespace or braces');
      s.redis.keyPrefix = prefix;
    },
  },
  {
    name: 'svc.mail.smtp-url',
    env: 'SMTP_URL',
    defaultText: 'unset → mails are written as `.eml` files to `svc.mail.outbox-dir` (warned, refused in production)',
    doc: 'SMTP server for invitation mails, e.g. `smtp://user:pass@mail.example.com:587`.',
    secret: true,
    apply: (s, raw) => {
      s.mail.smtpUrl = parseUrlWithScheme(raw, ['smtp:', 'smtps:']);
    },
  },
  {
    name: 'svc.mail.outbox-dir',
    env: 'SVC_MAIL_OUTBOX_DIR',
    defaultText: '`./outbox`',
    doc: 'Folder for `.eml` files when no SMTP server is configured.',
    apply: (s, raw) => {
      s.mail.outboxDir = parseNonEmpty(raw);
    },
  },
  {
    name: 'svc.mail.from',
    env: 'SVC_MAIL_FROM',
    defaultText: '`no-reply@localhost`',
    doc: 'Sender address of invitation mails.',
    apply: (s, raw) => {
      s.mail.from = parseEmailAddress(raw);
    },
  },
  {
    name: 'svc.management.user',
    env: 'SVC_MANAGEMENT_USER',
    defaultText: '`admin` (warned, refused in production)',
    doc: 'HTTP Basic user name of the management endpoint (role `MANAGEMENT`).',
    apply: (s, raw) => {
      const user = parseNonEmpty(raw);
      if (user.includes(':')) throw new Error('must not contain ":"');
      s.management.user = user;
    },
  },
  {
    name: 'svc.management.password',
    env: 'SVC_MANAGEMENT_PASSWORD',
    defaultText: '`admin` (warned, refused in production)',
    doc: 'HTTP Basic password of the management endpoint.',
    secret: true,
    apply: (s, raw) => {
      s.management.password = parseNonEmpty(raw);
    },
  },
  {
    name: 'svc.management.lockout-threshold',
    defaultText: '`5`',
    doc: 'Failed management logins from one client before it gets 429 for the cool-down.',
    apply: (s, raw) => {
      s.management.lockoutThreshold = parseInteger(raw, 1, 1000);
    },
  },
  {
    name: 'svc.management.lockout-seconds',
    defaultText: '`300`',
    doc: 'Cool-down of a management lockout, in seconds.',
    apply: (s, raw) => {
      s.management.lockoutSeconds = parseInteger(raw, 1, 86400);
    },
  },
  {
    name: 'svc.stage.include-scopes-in-user-info',
    env: 'SVC_STAGE_INCLUDE_SCOPES_IN_USER_INFO',
    defaultText: '`false`',
    doc: '`true`: the granted scopes travel as a `scope` claim in UserInfo instead of the ID token.',
    apply: (s, raw) => {
      s.stage.includeScopesInUserInfo = parseBoolean(raw);
    },
  },
  {
    name: 'svc.keys.file',
    env: 'SVC_KEYS_FILE',
    defaultText: 'unset → ephemeral keys generated at each start (warned, refused in production)',
    doc: 'A JWKS file with the private signing keys of the provider (RSA for RS256/PS256, EC P-256 for ES256).',
    apply: (s, raw) => {
      s.keys.file = parseNonEmpty(raw);
    },
  },
  {
    name: 'svc.cookies.keys',
    env: 'SVC_COOKIES_KEYS',
    defaultText: 'unset → ephemeral keys (warned, refused in production)',
    doc: 'Comma-separated cookie signing keys, newest first, each at least 32 characters.',
    secret: true,
    apply: (s, raw) => {
      s.cookies.keys = parseSecretList(raw, 32);
    },
  },
  {
    name: 'svc.access-token.ttl',
    env: 'SVC_ACCESS_TOKEN_TTL',
    defaultText: '`3600`',
    doc: 'Access token lifetime in seconds (60 to 86400).',
    apply: (s, raw) => {
      s.accessToken.ttl = parseInteger(raw, 60, 86400);
    },
  },
  {
    name: 'svc.demo.enabled',
    env: 'SVC_DEMO_ENABLED',
    defaultText: '`true` unless `NODE_ENV=production`',
    doc: 'Serve the demo accounts and the `/oidcdemo/login` page.',
    apply: (s, raw) => {
      s.demo.enabled = parseBoolean(raw);
    },
  },
  {
    name: 'svc.fetch.allow-private-network',
    env: 'SVC_FETCH_ALLOW_PRIVATE_NETWORK',
    defaultText: '`false`',
    doc: 'Allow `jwks_uri`/`x5u` fetches over http and to loopback or private addresses. Tests and local development only.',
    apply: (s, raw) => {
      s.fetch.allowPrivateNetwork = parseBoolean(raw);
    },
  },
  {
    name: 'svc.proxy',
    env: 'SVC_PROXY',
    defaultText: '`false`',
    doc: 'Trust `X-Forwarded-*` headers (set when running behind a TLS-terminating proxy).',
    apply: (s, raw) => {
      s.proxy = parseBoolean(raw);
    },
  },
  {
    name: 'svc.proxy.hops',
    env: 'SVC_PROXY_HOPS',
    defaultText: '`1`',
    doc: 'Trusted proxies in front (with `svc.proxy=true`): the client address is the `X-Forwarded-For` entry this many from the right, never the client-written left end.',
    apply: (s, raw) => {
      s.proxyHops = parseInteger(raw, 1, 10);
    },
  },
  {
    name: 'svc.login.lockout-threshold',
    defaultText: '`5`',
    doc: 'Failed sign-ins for one login name, or from one client address, within the window before further attempts get 429 (C8).',
    apply: (s, raw) => {
      s.login.lockoutThreshold = parseInteger(raw, 1, 1000);
    },
  },
  {
    name: 'svc.login.lockout-window',
    defaultText: '`900`',
    doc: 'The window failed sign-ins are counted in, in seconds (15 minutes).',
    apply: (s, raw) => {
      s.login.lockoutWindowSeconds = parseInteger(raw, 1, 86400);
    },
  },
  {
    name: 'svc.login.lockout-seconds',
    defaultText: '`60`',
    doc: 'Cool-down of the first sign-in lockout, in seconds; each further lockout within a day doubles it.',
    apply: (s, raw) => {
      s.login.lockoutSeconds = parseInteger(raw, 1, 86400);
    },
  },
  {
    name: 'svc.login.lockout-max-seconds',
    defaultText: '`3600`',
    doc: 'Longest sign-in cool-down, in seconds.',
    apply: (s, raw) => {
      s.login.lockoutMaxSeconds = parseInteger(raw, 1, 86400);
    },
  },
  {
    name: 'svc.metrics.enabled',
    defaultText: '`false`',
    doc: 'Serve Prometheus metrics at `/metrics` (keep that path off the public internet).',
    apply: (s, raw) => {
      s.metrics.enabled = parseBoolean(raw);
    },
  },
  {
    name: 'svc.log.level',
    defaultText: '`info`',
    doc: 'Lowest log level written: `trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`.',
    apply: (s, raw) => {
      const level = raw.trim().toLowerCase();
      if (!LOG_LEVELS.includes(level as (typeof LOG_LEVELS)[number])) throw new Error(`expected one of ${LOG_LEVELS.join(', ')}`);
      s.log.level = level as (typeof LOG_LEVELS)[number];
    },
  },
  {
    name: 'svc.clients.file',
    defaultText: 'unset',
    doc: 'A JSON file holding an array of client metadata objects provisioned statically at start.',
    apply: (s, raw) => {
      s.clients.file = parseNonEmpty(raw);
    },
  },
];

/**
 * The defaults of every property. `svc.base-url` and `svc.demo.enabled` depend on the port and on
 * `NODE_ENV`, so they are resolved by the loader after the other properties.
 */
export function defaultSettings(production: boolean): Settings {
  return {
    port: 3000,
    baseUrl: '',
    redis: { keyPrefix: 'svc:' },
    mail: { outboxDir: './outbox', from: 'no-reply@localhost' },
    management: { user: 'admin', password: 'admin', lockoutThreshold: 5, lockoutSeconds: 300 },
    stage: { includeScopesInUserInfo: false },
    keys: {},
    cookies: {},
    accessToken: { ttl: 3600 },
    demo: { enabled: !production },
    fetch: { allowPrivateNetwork: false },
    proxy: false,
    proxyHops: 1,
    login: { lockoutThreshold: 5, lockoutWindowSeconds: 900, lockoutSeconds: 60, lockoutMaxSeconds: 3600 },
    metrics: { enabled: false },
    log: { level: 'info' },
    clients: {},
    production,
  };
}

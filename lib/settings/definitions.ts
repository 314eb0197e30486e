import { LOG_LEVELS } from '../logger.js';
import { parsePrivateHosts } from '../net/private-hosts.js';
import type { PathKind } from './relative-paths.js';
import { REDIS_DEFAULTS, type Settings } from './types.js';
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
  /**
   * Set when the value names a file, folder or ES module: relative values in a configuration file
   * resolve against that file's folder (see `relative-paths.ts`).
   */
  path?: PathKind;
  /** Parses the raw value and stores it in `settings`; throws an `Error` describing a bad value. */
  apply(settings: Settings, raw: string): void;
  /** The effective value in `settings` (what `svc-connect config check` prints; secrets are redacted there). */
  read(settings: Settings): unknown;
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
    read: (s) => s.port,
    apply: (s, raw) => {
      s.port = parseInteger(raw, 0, 65535);
    },
  },
  {
    name: 'svc.base-url',
    env: 'SVC_BASE_URL',
    defaultText: '`http://localhost:{port}`',
    doc: 'Public base URL of the provider. The issuer is `{base-url}/oidc/v1`. An `http` URL on a host other than loopback is warned about, and refused under `NODE_ENV=production` (the issuer is https even when TLS ends at a proxy).',
    read: (s) => s.baseUrl,
    apply: (s, raw) => {
      s.baseUrl = parseBaseUrl(raw);
    },
  },
  {
    name: 'svc.redis.url',
    env: 'REDIS_URL',
    defaultText: 'unset → embedded in-memory store (one process, lost on restart; warned, refused in production)',
    doc: 'Standalone Redis holding all provider state, e.g. `redis://127.0.0.1:6379/0`.',
    read: (s) => s.redis.url,
    apply: (s, raw) => {
      s.redis.url = parseUrlWithScheme(raw, ['redis:', 'rediss:']);
    },
  },
  {
    name: 'svc.redis.cluster-nodes',
    env: 'SVC_REDIS_CLUSTER_NODES',
    defaultText: 'unset',
    doc: 'Redis Cluster seed nodes as `host:port,host:port`; takes precedence over `svc.redis.url`.',
    read: (s) => s.redis.clusterNodes,
    apply: (s, raw) => {
      s.redis.clusterNodes = parseHostPorts(raw);
    },
  },
  {
    name: 'svc.redis.key-prefix',
    env: 'SVC_REDIS_KEY_PREFIX',
    defaultText: `\`${REDIS_DEFAULTS.keyPrefix}\``,
    doc: 'Prefix of every Redis key the provider writes.',
    read: (s) => s.redis.keyPrefix,
    apply: (s, raw) => {
      const prefix = parseNonEmpty(raw);
      if (/[\s{}]/.test(prefix)) throw new Error('must not contain whitespace or braces');
      s.redis.keyPrefix = prefix;
    },
  },
  {
    name: 'svc.redis.operation-timeout-ms',
    env: 'SVC_REDIS_OPERATION_TIMEOUT_MS',
    defaultText: `\`${REDIS_DEFAULTS.operationTimeoutMs}\``,
    doc: 'Longest wait for one Redis operation before the request fails with 503 `server_error` (fail fast while Redis is away). Raise it only for slow links; test suites on a busy machine use a few seconds.',
    read: (s) => s.redis.operationTimeoutMs,
    apply: (s, raw) => {
      s.redis.operationTimeoutMs = parseInteger(raw, 50, 60000);
    },
  },
  {
    name: 'svc.mail.smtp-url',
    env: 'SMTP_URL',
    defaultText: 'unset → mails are written as `.eml` files to `svc.mail.outbox-dir` (warned, refused in production)',
    doc: 'SMTP server for invitation mails, e.g. `smtp://user:pass@mail.example.com:587`.',
    secret: true,
    read: (s) => s.mail.smtpUrl,
    apply: (s, raw) => {
      s.mail.smtpUrl = parseUrlWithScheme(raw, ['smtp:', 'smtps:']);
    },
  },
  {
    name: 'svc.mail.outbox-dir',
    env: 'SVC_MAIL_OUTBOX_DIR',
    defaultText: '`./outbox`',
    doc: 'Folder for `.eml` files when no SMTP server is configured.',
    path: 'file',
    read: (s) => s.mail.outboxDir,
    apply: (s, raw) => {
      s.mail.outboxDir = parseNonEmpty(raw);
    },
  },
  {
    name: 'svc.mail.from',
    env: 'SVC_MAIL_FROM',
    defaultText: '`no-reply@localhost`',
    doc: 'Sender address of invitation mails.',
    read: (s) => s.mail.from,
    apply: (s, raw) => {
      s.mail.from = parseEmailAddress(raw);
    },
  },
  {
    name: 'svc.management.user',
    env: 'SVC_MANAGEMENT_USER',
    defaultText: '`admin` (warned, refused in production)',
    doc: 'HTTP Basic user name of the management endpoint (role `MANAGEMENT`).',
    read: (s) => s.management.user,
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
    read: (s) => s.management.password,
    apply: (s, raw) => {
      s.management.password = parseNonEmpty(raw);
    },
  },
  {
    name: 'svc.management.lockout-threshold',
    defaultText: '`5`',
    doc: 'Failed management logins from one client before it gets 429 for the cool-down.',
    read: (s) => s.management.lockoutThreshold,
    apply: (s, raw) => {
      s.management.lockoutThreshold = parseInteger(raw, 1, 1000);
    },
  },
  {
    name: 'svc.management.lockout-seconds',
    defaultText: '`300`',
    doc: 'Cool-down of a management lockout, in seconds.',
    read: (s) => s.management.lockoutSeconds,
    apply: (s, raw) => {
      s.management.lockoutSeconds = parseInteger(raw, 1, 86400);
    },
  },
  {
    name: 'svc.stage.include-scopes-in-user-info',
    env: 'SVC_STAGE_INCLUDE_SCOPES_IN_USER_INFO',
    defaultText: '`false`',
    doc: '`true`: the granted scopes travel as a `scope` claim in UserInfo instead of the ID token.',
    read: (s) => s.stage.includeScopesInUserInfo,
    apply: (s, raw) => {
      s.stage.includeScopesInUserInfo = parseBoolean(raw);
    },
  },
  {
    name: 'svc.keys.file',
    env: 'SVC_KEYS_FILE',
    defaultText: 'unset → ephemeral keys generated at each start (warned, refused in production)',
    doc: 'A JWKS file with the private keys of the provider (`svc-connect keys generate`): signing keys (`use: "sig"`; RSA for RS256/PS256, EC P-256 for ES256) and decryption keys for encrypted request objects (`use: "enc"`; RSA for RSA-OAEP*, EC for ECDH-ES*). Without `enc` keys, encrypted request objects are not offered.',
    path: 'file',
    read: (s) => s.keys.file,
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
    read: (s) => s.cookies.keys,
    apply: (s, raw) => {
      s.cookies.keys = parseSecretList(raw, 32);
    },
  },
  {
    name: 'svc.subject.default-type',
    defaultText: '`pairwise`',
    doc: 'The `subject_type` a client registered without one gets: `pairwise` (each sector sees its own `sub` for a person, OpenID Connect Core 8.1) or `public` (every client sees the account id). A client whose redirect URIs span several hosts and that gives no `sector_identifier_uri` gets `public` instead, and its registration response says so. Applies to static clients too; a client keeps the type it was registered with.',
    read: (s) => s.subject.defaultType,
    apply: (s, raw) => {
      if (raw !== 'public' && raw !== 'pairwise') throw new Error('expected public or pairwise');
      s.subject.defaultType = raw;
    },
  },
  {
    name: 'svc.subject.pairwise-key',
    defaultText: 'unset → an ephemeral key generated at each start: pairwise `sub`s change at every restart (warned, refused in production)',
    doc: 'The secret (at least 32 characters) pairwise `sub` values are derived with (HMAC-SHA-256 of the sector and the account id). Keep it for the life of the deployment: replacing it changes every pairwise `sub`, and relying parties then see each person as a new one. Not the cookie keys, which rotate.',
    secret: true,
    read: (s) => s.subject.pairwiseKey,
    apply: (s, raw) => {
      const [key, ...more] = parseSecretList(raw, 32);
      if (more.length > 0) throw new Error('expected one key (it is never rotated: a new key changes every pairwise sub)');
      s.subject.pairwiseKey = key;
    },
  },
  {
    name: 'svc.access-token.ttl',
    env: 'SVC_ACCESS_TOKEN_TTL',
    defaultText: '`3600`',
    doc: 'Access token lifetime in seconds (60 to 86400).',
    read: (s) => s.accessToken.ttl,
    apply: (s, raw) => {
      s.accessToken.ttl = parseInteger(raw, 60, 86400);
    },
  },
  {
    name: 'svc.par.required',
    defaultText: '`false`',
    doc: '`true`: every client must push its authorization requests to `/oidc/v1/par` (RFC 9126) and send only `client_id` and `request_uri` to `/authorize`, as if each had registered `require_pushed_authorization_requests`; discovery then says `require_pushed_authorization_requests: true`. Applies to clients registered before the change too.',
    read: (s) => s.par.required,
    apply: (s, raw) => {
      s.par.required = parseBoolean(raw);
    },
  },
  {
    name: 'svc.demo.enabled',
    env: 'SVC_DEMO_ENABLED',
    defaultText: '`true` unless `NODE_ENV=production`',
    doc: 'Serve the demo accounts and the `/oidcdemo/login` page. Warned about at start; `true` stops the start under `NODE_ENV=production`.',
    read: (s) => s.demo.enabled,
    apply: (s, raw) => {
      s.demo.enabled = parseBoolean(raw);
    },
  },
  {
    name: 'svc.fetch.allow-private-network',
    env: 'SVC_FETCH_ALLOW_PRIVATE_NETWORK',
    defaultText: '`false`',
    doc: 'Allow `jwks_uri`/`x5u` fetches over http and to loopback or private addresses. Tests and local development only: warned about at start; `true` stops the start under `NODE_ENV=production`.',
    read: (s) => s.fetch.allowPrivateNetwork,
    apply: (s, raw) => {
      s.fetch.allowPrivateNetwork = parseBoolean(raw);
    },
  },
  {
    name: 'svc.fetch.private-hosts',
    defaultText: 'unset (none)',
    doc: 'Comma-separated `host` or `host:port` (port 443 when absent; IPv6 literals in brackets) of relying parties on your own network: their `jwks_uri`, `x5u` and `sector_identifier_uri` may resolve to an RFC 1918 or `fd00::/8` address. https, the limits and every other address rule still apply; loopback, link-local and metadata addresses are never opened. Allowed in production.',
    read: (s) => s.fetch.privateHosts,
    apply: (s, raw) => {
      s.fetch.privateHosts = parsePrivateHosts(raw);
    },
  },
  {
    name: 'svc.proxy',
    env: 'SVC_PROXY',
    defaultText: '`false`',
    doc: 'Trust `X-Forwarded-*` headers (set when running behind a TLS-terminating proxy).',
    read: (s) => s.proxy,
    apply: (s, raw) => {
      s.proxy = parseBoolean(raw);
    },
  },
  {
    name: 'svc.proxy.hops',
    env: 'SVC_PROXY_HOPS',
    defaultText: '`1`',
    doc: 'Trusted proxies in front (with `svc.proxy=true`): the client address is the `X-Forwarded-For` entry this many from the right, never the client-written left end.',
    read: (s) => s.proxyHops,
    apply: (s, raw) => {
      s.proxyHops = parseInteger(raw, 1, 10);
    },
  },
  {
    name: 'svc.login.lockout-threshold',
    defaultText: '`5`',
    doc: 'Failed sign-ins for one login name from browsers without a device cookie for it, and for one device, within the window before further such attempts get 429 (C8). Only completed failures count.',
    read: (s) => s.login.lockoutThreshold,
    apply: (s, raw) => {
      s.login.lockoutThreshold = parseInteger(raw, 1, 1000);
    },
  },
  {
    name: 'svc.login.address-threshold',
    defaultText: '`100`',
    doc: 'Failed sign-ins from one client address (an IPv6 /64), of attempts without a valid device cookie, within the window before further such attempts get 429 (C8): high enough that a crowd behind one NAT does not reach it by typos.',
    read: (s) => s.login.addressThreshold,
    apply: (s, raw) => {
      s.login.addressThreshold = parseInteger(raw, 1, 100000);
    },
  },
  {
    name: 'svc.login.consecutive-limit',
    defaultText: '`100`',
    doc: 'Failed sign-ins in a row for one login name (NIST SP 800-63B 5.2.2) after which only browsers with a device cookie for it may try, until a success or an operator\'s reset (C8); a device has the same limit of its own.',
    read: (s) => s.login.consecutiveLimit,
    apply: (s, raw) => {
      s.login.consecutiveLimit = parseInteger(raw, 1, 100000);
    },
  },
  {
    name: 'svc.login.device-cookie-days',
    defaultText: '`180`',
    doc: 'How long the device cookie set after a successful sign-in stays valid, in days; a browser with one is judged by its own budget for that name (C8).',
    read: (s) => s.login.deviceCookieDays,
    apply: (s, raw) => {
      s.login.deviceCookieDays = parseInteger(raw, 1, 400);
    },
  },
  {
    name: 'svc.login.lockout-window',
    defaultText: '`900`',
    doc: 'The window failed sign-ins are counted in, in seconds (15 minutes).',
    read: (s) => s.login.lockoutWindowSeconds,
    apply: (s, raw) => {
      s.login.lockoutWindowSeconds = parseInteger(raw, 1, 86400);
    },
  },
  {
    name: 'svc.login.lockout-seconds',
    defaultText: '`60`',
    doc: 'Cool-down of the first sign-in lockout, in seconds; each further lockout within a day doubles it.',
    read: (s) => s.login.lockoutSeconds,
    apply: (s, raw) => {
      s.login.lockoutSeconds = parseInteger(raw, 1, 86400);
    },
  },
  {
    name: 'svc.login.lockout-max-seconds',
    defaultText: '`3600`',
    doc: 'Longest sign-in cool-down, in seconds.',
    read: (s) => s.login.lockoutMaxSeconds,
    apply: (s, raw) => {
      s.login.lockoutMaxSeconds = parseInteger(raw, 1, 86400);
    },
  },
  {
    name: 'svc.metrics.enabled',
    defaultText: '`false`',
    doc: 'Serve Prometheus metrics at `/metrics` (keep that path off the public internet).',
    read: (s) => s.metrics.enabled,
    apply: (s, raw) => {
      s.metrics.enabled = parseBoolean(raw);
    },
  },
  {
    name: 'svc.ops.port',
    defaultText: 'unset → `/healthz`, `/readyz` and `/metrics` on the public listener',
    doc: 'Port of a separate operations listener for `/healthz`, `/readyz` and `/metrics` (Keycloak uses 9000); the public listener then answers 404 for them. The operator API (`/oidc/v1/management/*`) stays public.',
    read: (s) => s.ops.port,
    apply: (s, raw) => {
      s.ops.port = parseInteger(raw, 0, 65535);
    },
  },
  {
    name: 'svc.ops.host',
    defaultText: '`127.0.0.1`',
    doc: 'Address the operations listener (`svc.ops.port`) binds to; keep it off the public network.',
    read: (s) => s.ops.host,
    apply: (s, raw) => {
      s.ops.host = parseNonEmpty(raw);
    },
  },
  {
    name: 'svc.log.level',
    defaultText: '`info`',
    doc: 'Lowest log level written: `trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`.',
    read: (s) => s.log.level,
    apply: (s, raw) => {
      const level = raw.trim().toLowerCase();
      if (!LOG_LEVELS.includes(level as (typeof LOG_LEVELS)[number])) throw new Error(`expected one of ${LOG_LEVELS.join(', ')}`);
      s.log.level = level as (typeof LOG_LEVELS)[number];
    },
  },
  {
    name: 'svc.log.format',
    defaultText: '`pretty` when standard output is a terminal and `NODE_ENV` is not `production`, else `json`',
    doc: 'How log lines are written: `json` (one JSON object a line, for collectors) or `pretty` (time, level, event and fields on one readable line, for a person at a terminal).',
    read: (s) => s.log.format,
    apply: (s, raw) => {
      const format = raw.trim().toLowerCase();
      if (format !== 'pretty' && format !== 'json') throw new Error('expected pretty or json');
      s.log.format = format;
    },
  },
  {
    name: 'svc.clients.file',
    defaultText: 'unset',
    doc: 'A JSON file holding an array of client metadata objects provisioned statically at start.',
    path: 'file',
    read: (s) => s.clients.file,
    apply: (s, raw) => {
      s.clients.file = parseNonEmpty(raw);
    },
  },
  {
    name: 'svc.authenticator.module',
    defaultText: 'unset → the demo accounts while `svc.demo.enabled`, else an authenticator given in code is required',
    path: 'module',
    doc: 'The ES module that signs people in: a module specifier (see [paths](#paths)): a path, `file:` URL or package name, whose default export is an `Authenticator` (`authenticate`, `exists`) or a function returning one, given `{ settings, logger }`. Loaded at start; a module that cannot be loaded or does not fit stops the start naming this property. Replaces the demo accounts; `options.authenticator` in code wins over it. `examples/authenticator-file.ts` signs in users of a JSON file with scrypt hashes.',
    read: (s) => s.authenticator.module,
    apply: (s, raw) => {
      s.authenticator.module = parseNonEmpty(raw);
    },
  },
  {
    name: 'svc.claims.modules',
    defaultText: 'unset → no claim modules (the example server: the demo modules while `svc.demo.enabled`)',
    path: 'modules',
    doc: 'Comma-separated ES modules providing claims (C5), each a module specifier (see [paths](#paths)): a path, `file:` URL or package name, whose default export is a `ClaimModule`, a list of them, or a function returning either, given `{ settings, logger }`. Loaded at start in this order, after the modules given in code; a module that cannot be loaded or does not fit stops the start naming this property. `examples/claims-file.ts` provides the claims of the users file.',
    read: (s) => s.claims.modules,
    apply: (s, raw) => {
      const modules = raw.split(',').map((m) => m.trim());
      if (modules.some((m) => !m)) throw new Error('expected comma-separated module paths, none of them empty');
      s.claims.modules = modules;
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
    redis: { ...REDIS_DEFAULTS },
    mail: { outboxDir: './outbox', from: 'no-reply@localhost' },
    management: { user: 'admin', password: 'admin', lockoutThreshold: 5, lockoutSeconds: 300 },
    stage: { includeScopesInUserInfo: false },
    keys: {},
    cookies: {},
    subject: { defaultType: 'pairwise' },
    accessToken: { ttl: 3600 },
    par: { required: false },
    demo: { enabled: !production },
    fetch: { allowPrivateNetwork: false, privateHosts: [] },
    proxy: false,
    proxyHops: 1,
    login: { lockoutThreshold: 5, addressThreshold: 100, consecutiveLimit: 100, deviceCookieDays: 180, lockoutWindowSeconds: 900, lockoutSeconds: 60, lockoutMaxSeconds: 3600 },
    metrics: { enabled: false },
    ops: { host: '127.0.0.1' },
    log: { level: 'info' },
    clients: {},
    authenticator: {},
    claims: {},
    production,
  };
}

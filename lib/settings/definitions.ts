import { LOG_LEVELS, type LogLevel } from '../logger.js';
import { isLoopbackHost } from '../net/addresses.js';
import { parsePrivateHosts } from '../net/private-hosts.js';
import type { PathKind } from './relative-paths.js';
import { MEMORY_STORE_DEFAULT_MAX_MB, REDIS_DEFAULTS, type Settings } from './types.js';
import {
  parseBaseUrl,
  parseBoolean,
  parseEmailAddress,
  parseClusterNodes,
  parseInteger,
  parseNonEmpty,
  parseSecretList,
  parseSmtpUrl,
  parseUrlWithScheme,
} from './parse.js';

/** What the caller supplies in code instead of through properties. */
export interface SuppliedParts {
  /** An adapter/store was passed in code (so the memory-store default does not apply). */
  store?: boolean;
  keys?: boolean;
  /** An authenticator was passed in code (the demo accounts then do not sign in). */
  authenticator?: boolean;
  /** The management router and mailer are served by this app. */
  management?: boolean;
  /** A mailer that sends (not the outbox) was passed in code: no SMTP URL is needed, and its sender is judged as over SMTP. */
  mailer?: boolean;
}

/**
 * One configurable property: its name, environment variables, default, documentation, unsafe-default
 * rule, and where its parsed value lives in {@link Settings} (`place`: `port` or `redis.url`).
 * {@link Settings} is derived from the table of these rows, and `docs/configuration.md` is generated
 * from it (`npm run docs:config`).
 */
export interface PropertyDefinition<P extends string = string, V = unknown, R extends boolean = boolean> {
  /** The property name, e.g. `svc.redis.url`. */
  readonly name: string;
  readonly place: P;
  /** The environment variable the contract names, when it differs from the rule-derived one. */
  readonly env?: string;
  /** Every environment variable of the property: the contract's, then {@link ruleDerivedEnv}'s. */
  readonly envs: readonly string[];
  /** The default, as a person reads it in the configuration reference. */
  readonly defaultText: string;
  readonly doc: string;
  /** Secret values are never echoed, in errors or by `config check`. */
  readonly secret?: boolean;
  /** The value names a file, folder or ES module: relative values in a configuration file resolve against its folder. */
  readonly path?: PathKind;
  /** The typed value of the raw text; throws an `Error` describing a bad value. */
  parse: (raw: string) => V;
  /** The default, given the properties above it in the table; `undefined` leaves the member unset. */
  fallback: (settings: Settings) => V | undefined;
  /** Why the value in force is unsafe for production, or `undefined` when it is not (`unsafe.ts`). */
  unsafe?: (settings: Settings, supplied: SuppliedParts) => string | undefined;
  /** What to set when {@link unsafe} refuses, after `set ` (`svc.demo.enabled=false`); the name when unset will do. */
  readonly fix?: string;
  /** Whether {@link Settings} always holds the value (the row has a default). */
  readonly required: R;
}

/** What a row says besides its name, place and parser; the reference shows `default` in backticks unless `defaultText` says more. */
type Facts<V> = Pick<PropertyDefinition, 'env' | 'doc' | 'secret' | 'path' | 'unsafe' | 'fix'> & Partial<Pick<PropertyDefinition, 'defaultText'>> & {
  default?: V | ((settings: Settings) => V);
};

function row<P extends string, V>(name: string, place: P, parse: (raw: string) => V, facts: Facts<NoInfer<V>> & { default: Facts<NoInfer<V>>['default'] }): PropertyDefinition<P, V, true>;
function row<P extends string, V>(name: string, place: P, parse: (raw: string) => V, facts: Facts<NoInfer<V>>): PropertyDefinition<P, V, false>;
function row<P extends string, V>(name: string, place: P, parse: (raw: string) => V, facts: Facts<V>): PropertyDefinition<P, V> {
  const { default: value, defaultText, unsafe, ...rest } = facts;
  return {
    name,
    place,
    ...rest,
    envs: [...new Set([rest.env ?? ruleDerivedEnv(name), ruleDerivedEnv(name)])],
    defaultText: defaultText ?? (typeof value === 'object' || value === undefined ? 'unset' : `\`${String(value)}\``),
    required: value !== undefined,
    parse,
    fallback: (settings) => (typeof value === 'function' ? (value as (s: Settings) => V)(settings) : Array.isArray(value) ? ([...value] as V) : value),
    ...(unsafe ? { unsafe } : {}),
  };
}

/** The object holding the member at `place` in `settings`, and that member's key. */
function locate(settings: Settings, place: string): [Record<string, unknown>, string] {
  const [group, member] = place.split('.') as [string, string | undefined];
  const root = settings as unknown as Record<string, Record<string, unknown>>;
  if (member === undefined) return [root, group];
  root[group] ??= {};
  return [root[group], member];
}

/** Stores `value` at the row's place in `settings` (`undefined` leaves it unset). */
export function writeValue(settings: Settings, definition: PropertyDefinition, value: unknown): void {
  const [holder, key] = locate(settings, definition.place);
  if (value !== undefined) holder[key] = value;
}

/** The effective value of the row's property in `settings`. */
export function readValue(settings: Settings, definition: PropertyDefinition): unknown {
  const [holder, key] = locate(settings, definition.place);
  return holder[key];
}

/** A parser accepting one of `choices` in any letter case, surrounding spaces ignored. */
const oneOf = <T extends string>(choices: readonly T[], expected: string) => (raw: string): T => {
  const value = raw.trim().toLowerCase();
  if (!(choices as readonly string[]).includes(value)) throw new Error(`expected ${expected}`);
  return value as T;
};
const integer = (min: number, max: number) => (raw: string) => parseInteger(raw, min, max);
const check = (parse: (raw: string) => string, bad: RegExp, message: string) => (raw: string) => {
  const value = parse(raw);
  if (bad.test(value)) throw new Error(message);
  return value;
};
const subjectType = (raw: string) => {
  const value = raw.trim();
  if (value !== 'public' && value !== 'pairwise') throw new Error('expected public or pairwise');
  return value;
};
const oneSecret = (raw: string) => {
  const [key, ...more] = parseSecretList(raw, 32);
  if (more.length > 0) throw new Error('expected one key (it is never rotated: a new key changes every pairwise sub)');
  return key;
};
const redisUrl = (raw: string) => {
  const url = parseUrlWithScheme(raw, ['redis:', 'rediss:']);
  if (!/^(\/\d*)?$/.test(new URL(url).pathname)) throw new Error('the path is not a database number (redis://host:6379/0)');
  return url;
};
const moduleList = (raw: string) => {
  const modules = raw.split(',').map((m) => m.trim());
  if (modules.some((m) => !m)) throw new Error('expected comma-separated module paths, none of them empty');
  return modules;
};

/** True for an `http:` URL whose host is not on the loopback interface ({@link isLoopbackHost}). */
function httpOffLoopback(baseUrl: string): boolean {
  const url = new URL(baseUrl);
  return url.protocol === 'http:' && !isLoopbackHost(url.hostname);
}

/**
 * The rule-derived environment variable of a property: upper-cased, `.` and `-` turned into `_`
 * (`svc.redis.url` → `SVC_REDIS_URL`).
 */
export function ruleDerivedEnv(name: string): string {
  return name.toUpperCase().replace(/[.-]/g, '_');
}

/** `svc.base-url` when unset, for the port the server listens on. */
export const defaultBaseUrl = (port: number): string => `http://localhost:${port}`;

/** Every property svc-connect understands, in the order of the configuration reference. */
export const PROPERTY_DEFINITIONS = [
  row('svc.port', 'port', integer(0, 65535), { env: 'PORT', default: 3000, doc: 'TCP port the server (`svc-connect serve`, `npm start`) listens on; `0` lets the system choose one, which the default `svc.base-url` then names (the server listens before it builds the app, answering 503 until it is ready).' }),
  row('svc.base-url', 'baseUrl', parseBaseUrl, {
    env: 'SVC_BASE_URL',
    default: (s): string => defaultBaseUrl(s.port),
    defaultText: '`http://localhost:{port}`',
    doc: 'Public base URL of the provider. The issuer is `{base-url}/oidc/v1`. Its path may end in slashes but hold no empty segment (`//`), which would make every endpoint name another host. An `http` URL on a host other than loopback is warned about, and refused under `NODE_ENV=production` (the issuer is https even when TLS ends at a proxy).',
    unsafe: (s): string | undefined =>
      httpOffLoopback(s.baseUrl)
        ? 'the public issuer is http on a host other than loopback: browsers, relying parties and cookies then travel in clear (use https, also when TLS ends at a proxy)'
        : undefined,
    fix: 'svc.base-url to an https URL',
  }),
  row('svc.redis.url', 'redis.url', redisUrl, {
    env: 'REDIS_URL',
    defaultText: 'unset → embedded in-memory store (one process, lost on restart; warned, refused in production)',
    doc: 'Standalone Redis holding all provider state, e.g. `redis://127.0.0.1:6379/0`.',
    unsafe: (s, supplied): string | undefined =>
      !supplied.store && !s.redis.url && !s.redis.clusterNodes ? 'the embedded in-memory store serves one process and loses everything on restart' : undefined,
    fix: 'svc.redis.url or svc.redis.cluster-nodes',
  }),
  row('svc.redis.cluster-nodes', 'redis.clusterNodes', parseClusterNodes, {
    env: 'SVC_REDIS_CLUSTER_NODES',
    doc: 'Redis Cluster seed nodes as `host:port,host:port`, or as `redis://` URLs carrying the user name and password every node is reached with (alike in every item, e.g. `redis://svc:secret@10.0.0.1:6379,redis://svc:secret@10.0.0.2:6379`), or as `rediss://` URLs to reach every node over TLS (a seed\'s certificate is verified for its name here, each node\'s for the endpoint the Cluster announces, hostname or IP address, against Node\'s CAs and `NODE_EXTRA_CA_CERTS`); takes precedence over `svc.redis.url`.',
  }),
  row('svc.redis.key-prefix', 'redis.keyPrefix', check(parseNonEmpty, /[\s{}]/, 'must not contain whitespace or braces'), {
    env: 'SVC_REDIS_KEY_PREFIX',
    default: REDIS_DEFAULTS.keyPrefix,
    doc: 'Prefix of every Redis key the provider writes.',
  }),
  row('svc.redis.previous-base-url', 'redis.previousBaseUrl', parseBaseUrl, {
    doc: 'The `svc.base-url` the provider had, while moving it to a new one. The first start on a key prefix records its issuer there, and a provider of another issuer is refused on it (it would honour the first one\'s clients, codes, tokens and sessions); a start with this set takes over a prefix recorded for the issuer of this base URL, keeping what it holds ([one issuer per key prefix](operations/redis.md#one-issuer-per-key-prefix)).',
  }),
  row('svc.redis.operation-timeout-ms', 'redis.operationTimeoutMs', integer(50, 60000), {
    env: 'SVC_REDIS_OPERATION_TIMEOUT_MS',
    default: REDIS_DEFAULTS.operationTimeoutMs,
    doc: 'Longest wait for one Redis operation before the request fails with 503 `server_error` (fail fast while Redis is away). Raise it only for slow links; test suites on a busy machine use a few seconds.',
  }),
  row('svc.memory-store.max-mb', 'memoryStore.maxMb', integer(1, 1_048_576), {
    default: MEMORY_STORE_DEFAULT_MAX_MB,
    doc: 'Most the embedded in-memory store (no Redis configured) holds, in MiB of approximate record size; beyond it writes get 503 `server_error` and `/readyz` 503, as on a full Redis under `noeviction`, and new sign-ins are refused at nine tenths of it so those under way can finish ([limits](operations/redis.md#the-embedded-stores-limit)).',
  }),
  row('svc.mail.smtp-url', 'mail.smtpUrl', parseSmtpUrl, {
    env: 'SMTP_URL',
    defaultText: 'unset → mails are written as `.eml` files to `svc.mail.outbox-dir` (warned, refused in production)',
    doc: 'SMTP server for invitation mails, e.g. `smtp://user:pass@mail.example.com:587` (with credentials STARTTLS is required: a server that does not offer it gets no password and no mail; `?requireTLS=false` allows plain text, for a relay on the same machine) or `smtps://…:465`; a query turning on nodemailer\'s logging (`logger`, `debug`, `transactionLog`) is refused: it would write each token to the output; so is one naming another transport (`jsonTransport`, `streamTransport`, `sendmail`), or another way to the server (`proxy`, `connection`, `socket`, `service`, `url`, and `host` or `port`, which nodemailer takes where the URL names none: svc-connect connects straight to the host and port of the URL, so its deadlines can close the connection and its receipts name the server reached), or a URL naming no host, or `secure=true` on `smtp://` (nodemailer ignores it: write `smtps://`).',
    secret: true,
    unsafe: (s, supplied): string | undefined => (supplied.management && !supplied.mailer && !s.mail.smtpUrl ? `invitation mails are written to ${s.mail.outboxDir} instead of being sent` : undefined),
  }),
  row('svc.mail.outbox-dir', 'mail.outboxDir', parseNonEmpty, {
    env: 'SVC_MAIL_OUTBOX_DIR',
    default: './outbox',
    doc: 'Folder for `.eml` files when no SMTP server is configured.',
    path: 'file',
  }),
  row('svc.mail.from', 'mail.from', parseEmailAddress, {
    env: 'SVC_MAIL_FROM',
    default: 'no-reply@localhost',
    defaultText: '`no-reply@localhost` (with `svc.mail.smtp-url` set or a mailer passed in code: warned, refused in production)',
    doc: 'Sender address of invitation mails. Once they are sent (over SMTP, or by a mailer passed in code), a sender at `localhost` is unsafe: no mail server can verify it or answer to it.',
    unsafe: (s, supplied): string | undefined =>
      supplied.management && (s.mail.smtpUrl || supplied.mailer) && /@(?:.+\.)?localhost$/.test(s.mail.from)
        ? `invitation mails go out from ${s.mail.from}, an address at localhost: relays and the invitees' servers refuse such mail or file it as spam`
        : undefined,
    fix: 'svc.mail.from to an address of your own domain',
  }),
  row('svc.management.user', 'management.user', check(parseNonEmpty, /:/, 'must not contain ":"'), {
    env: 'SVC_MANAGEMENT_USER',
    default: 'admin',
    defaultText: '`admin` (warned, refused in production)',
    doc: 'HTTP Basic user name of the management endpoint (role `MANAGEMENT`).',
  }),
  row('svc.management.password', 'management.password', parseNonEmpty, {
    env: 'SVC_MANAGEMENT_PASSWORD',
    default: 'admin',
    defaultText: '`admin` (warned, refused in production, whatever the user)',
    doc: 'HTTP Basic password of the management endpoint.',
    secret: true,
    // The shipped password whatever the user: a user of one's own is no secret (it is the first word guessed).
    unsafe: (s, supplied): string | undefined =>
      supplied.management && s.management.password === 'admin'
        ? 'the management endpoint still uses the shipped password admin'
        : undefined,
    fix: 'svc.management.password to a password of your own',
  }),
  row('svc.management.lockout-threshold', 'management.lockoutThreshold', integer(1, 1000), {
    default: 5,
    doc: 'Failed management logins from one client within 15 minutes (or the cool-down, if longer) before it gets 429 for the cool-down; a right password does not reset the count. Failures from addresses where the credentials were not right within 30 days also count on the account: 100 (or this threshold, if higher) per window lock such addresses out for the cool-down.',
  }),
  row('svc.management.lockout-seconds', 'management.lockoutSeconds', integer(1, 86400), { default: 300, doc: 'Cool-down of a management lockout, in seconds.' }),
  row('svc.stage.include-scopes-in-user-info', 'stage.includeScopesInUserInfo', parseBoolean, {
    env: 'SVC_STAGE_INCLUDE_SCOPES_IN_USER_INFO',
    default: false,
    doc: '`true`: the granted scopes travel as a `scope` claim in UserInfo instead of the ID token.',
  }),
  row('svc.keys.file', 'keys.file', parseNonEmpty, {
    env: 'SVC_KEYS_FILE',
    defaultText: 'unset → ephemeral keys generated at each start (warned, refused in production)',
    doc: 'A JWKS file with the private keys of the provider (`svc-connect keys generate`): signing keys (`use: "sig"`; RSA for RS256/PS256, EC P-256 for ES256) and decryption keys for encrypted request objects (`use: "enc"`; RSA for RSA-OAEP*, EC for ECDH-ES*). Without `enc` keys, encrypted request objects are not offered.',
    path: 'file',
    unsafe: (s, supplied): string | undefined => (!supplied.keys && !s.keys.file ? 'signing keys are generated at each start, so tokens stop verifying after a restart' : undefined),
  }),
  row('svc.cookies.keys', 'cookies.keys', (raw) => parseSecretList(raw, 32), {
    env: 'SVC_COOKIES_KEYS',
    defaultText: 'unset → ephemeral keys (warned, refused in production)',
    doc: 'Comma-separated cookie signing keys, newest first, each at least 32 characters.',
    secret: true,
    unsafe: (s): string | undefined => (!s.cookies.keys ? 'cookie keys are generated at each start, so sessions end on restart' : undefined),
  }),
  row('svc.subject.default-type', 'subject.defaultType', subjectType, {
    default: 'pairwise',
    doc: 'The `subject_type` a client registered without one gets: `pairwise` (each sector sees its own `sub` for a person, OpenID Connect Core 8.1) or `public` (every client sees the account id). A client whose redirect URIs span several hosts and that gives no `sector_identifier_uri` gets `public` instead, and its registration response says so. Applies to static clients too; a client keeps the type it was registered with.',
  }),
  row('svc.subject.pairwise-key', 'subject.pairwiseKey', oneSecret, {
    defaultText: 'unset → an ephemeral key generated at each start: pairwise `sub`s change at every restart (warned, refused in production)',
    doc: 'The secret (at least 32 characters) pairwise `sub` values are derived with (HMAC-SHA-256 of the sector and the account id). Keep it for the life of the deployment: replacing it changes every pairwise `sub`, and relying parties then see each person as a new one. Not the cookie keys, which rotate.',
    secret: true,
    unsafe: (s): string | undefined => (!s.subject.pairwiseKey ? 'the pairwise key is generated at each start, so every pairwise sub changes on restart' : undefined),
  }),
  row('svc.access-token.ttl', 'accessToken.ttl', integer(60, 86400), {
    env: 'SVC_ACCESS_TOKEN_TTL',
    default: 3600,
    doc: 'Access token lifetime in seconds (60 to 86400).',
  }),
  row('svc.par.required', 'par.required', parseBoolean, {
    default: false,
    doc: '`true`: every client must push its authorization requests to `/oidc/v1/par` (RFC 9126) and send only `client_id` and `request_uri` to `/authorize`, as if each had registered `require_pushed_authorization_requests`; discovery then says `require_pushed_authorization_requests: true`. Applies to clients registered before the change too.',
  }),
  row('svc.client-assertion.endpoint-audience', 'clientAssertion.endpointAudience', parseBoolean, {
    default: false,
    doc: "`true`: a `private_key_jwt` assertion may also name the token endpoint or the endpoint it is sent to as its `aud`, or list the issuer in an array, as older client libraries do (Authlib). Otherwise its `aud` is exactly the issuer identifier, a string (OpenID Connect Core 9 as corrected after CVE-2025-27370, RFC 7523bis, FAPI 2.0): an assertion a client made for another server, which named our token endpoint as its own, is refused here. `true` reopens that replay for clients that use one key with several servers.",
  }),
  row('svc.demo.enabled', 'demo.enabled', parseBoolean, {
    env: 'SVC_DEMO_ENABLED',
    default: (s): boolean => !s.production,
    defaultText: '`true` unless `NODE_ENV=production`',
    doc: 'Serve the demo accounts and the `/oidcdemo/login` page. Warned about at start; `true` stops the start under `NODE_ENV=production`.',
    unsafe: (s, supplied): string | undefined => {
      if (!s.demo.enabled) return undefined;
      return supplied.authenticator || s.authenticator.module !== undefined
        ? '/oidcdemo/login registers clients and runs flows for anyone who can sign in (the demo accounts do not: an authenticator is configured)'
        : 'the demo accounts demo/demo and demo-basic/demo-basic sign in, and /oidcdemo/login registers clients';
    },
    fix: 'svc.demo.enabled=false',
  }),
  row('svc.fetch.allow-private-network', 'fetch.allowPrivateNetwork', parseBoolean, {
    env: 'SVC_FETCH_ALLOW_PRIVATE_NETWORK',
    default: false,
    doc: 'Allow `jwks_uri`/`x5u` fetches over http and to loopback or private addresses. Tests and local development only: warned about at start; `true` stops the start under `NODE_ENV=production`.',
    unsafe: (s): string | undefined =>
      s.fetch.allowPrivateNetwork
        ? 'jwks_uri and x5u are fetched over http and from loopback and private addresses (a server-side request forgery surface)'
        : undefined,
    fix: 'svc.fetch.allow-private-network=false',
  }),
  row('svc.fetch.private-hosts', 'fetch.privateHosts', parsePrivateHosts, {
    default: [],
    defaultText: 'unset (none)',
    doc: 'Comma-separated `host` or `host:port` (port 443 when absent; IPv6 literals in brackets) of relying parties on your own network: their `jwks_uri`, `x5u` and `sector_identifier_uri` may resolve to an RFC 1918 or `fd00::/8` address. https, the limits and every other address rule still apply; loopback, link-local and metadata addresses are never opened. Allowed in production.',
  }),
  row('svc.proxy', 'proxy', parseBoolean, {
    env: 'SVC_PROXY',
    default: false,
    doc: 'Trust `X-Forwarded-*` headers (set when running behind a TLS-terminating proxy): the client address, and the `X-Request-Id` the proxy sets (have it set or replace the header; one a client sent passes many proxies unchanged). Off, neither is read, and the first request carrying `X-Forwarded-For` or `Forwarded` is logged once (`proxy_headers_ignored`).',
  }),
  row('svc.proxy.hops', 'proxyHops', integer(1, 10), {
    env: 'SVC_PROXY_HOPS',
    default: 1,
    doc: 'Trusted proxies in front (with `svc.proxy=true`): the client address is the `X-Forwarded-For` entry this many from the right, never the client-written left end.',
  }),
  row('svc.login.lockout-threshold', 'login.lockoutThreshold', integer(1, 1000), {
    default: 5,
    doc: 'Failed sign-ins for one login name from browsers without a device cookie for it, and for one device, within the window before further such attempts get 429 (C8). Only completed failures count.',
  }),
  row('svc.login.address-threshold', 'login.addressThreshold', integer(1, 100000), {
    default: 100,
    doc: 'Failed sign-ins from one client address (an IPv6 /64), of attempts without a valid device cookie, within the window before further such attempts get 429 (C8): high enough that a crowd behind one NAT does not reach it by typos.',
  }),
  row('svc.login.start-threshold', 'login.startThreshold', integer(1, 1_000_000), {
    default: 200,
    doc: 'Sign-ins one client address (an IPv6 /64) may start an hour while the store holds half its limit (an authorization request that needs a sign-in, a pushed request, a sign-out page without a session), before further ones get 429 `temporarily_unavailable` (one the store refuses at nine tenths is not counted; an IPv6 /48, and a signed-in account for its own new sessions and interactions, eight times as many): so one host cannot fill the store until nobody may start ([limits](operations/redis.md#the-embedded-stores-limit)).',
  }),
  row('svc.login.consecutive-limit', 'login.consecutiveLimit', integer(1, 100000), {
    default: 100,
    doc: "Failed sign-ins in a row for one login name (NIST SP 800-63B 5.2.2) after which only browsers with a device cookie for it may try, until a success or an operator's reset (C8); a device has the same limit of its own.",
  }),
  row('svc.login.device-cookie-days', 'login.deviceCookieDays', integer(1, 400), {
    default: 180,
    doc: 'How long the device cookie set after a successful sign-in stays valid, in days; a browser with one is judged by its own budget for that name (C8).',
  }),
  row('svc.login.lockout-window', 'login.lockoutWindowSeconds', integer(1, 86400), {
    default: 900,
    doc: 'The window failed sign-ins are counted in, in seconds (15 minutes).',
  }),
  row('svc.login.lockout-seconds', 'login.lockoutSeconds', integer(1, 86400), {
    default: 60,
    doc: 'Cool-down of the first sign-in lockout, in seconds; each further lockout within a day doubles it.',
  }),
  row('svc.login.lockout-max-seconds', 'login.lockoutMaxSeconds', integer(1, 86400), { default: 3600, doc: 'Longest sign-in cool-down, in seconds.' }),
  row('svc.metrics.enabled', 'metrics.enabled', parseBoolean, {
    default: false,
    doc: 'Serve Prometheus metrics at `/metrics` (keep that path off the public internet: `svc.ops.port`, or a proxy rule; no other spelling, `/METRICS` or `/metrics/`, is served).',
  }),
  row('svc.ops.port', 'ops.port', integer(0, 65535), {
    defaultText: 'unset → `/healthz`, `/readyz` and `/metrics` on the public listener',
    doc: 'Port of a separate operations listener for `/healthz`, `/readyz` and `/metrics` (Keycloak uses 9000); the public listener then answers 404 for them. The operator API (`/oidc/v1/management/*`) stays public. `svc.port` itself is refused (the start names `svc.ops.port`); `0` lets the system choose, as for `svc.port`.',
  }),
  row('svc.ops.host', 'ops.host', parseNonEmpty, {
    default: '127.0.0.1',
    doc: 'Address the operations listener (`svc.ops.port`) binds to; keep it off the public network. An address this machine does not have, or a name that does not resolve, stops the start naming this property.',
  }),
  row('svc.log.level', 'log.level', oneOf<LogLevel>(LOG_LEVELS, `one of ${LOG_LEVELS.join(', ')}`), {
    default: 'info',
    doc: 'Lowest log level written: `trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`.',
  }),
  row('svc.log.format', 'log.format', oneOf<'pretty' | 'json'>(['pretty', 'json'], 'pretty or json'), {
    defaultText: '`pretty` when standard output is a terminal and `NODE_ENV` is not `production`, else `json`',
    doc: 'How log lines are written: `json` (one JSON object a line, for collectors) or `pretty` (time, level, event and fields on one readable line, for a person at a terminal).',
  }),
  row('svc.clients.file', 'clients.file', parseNonEmpty, {
    doc: 'A JSON file holding an array of client metadata objects provisioned statically at start. Their inline `jwks` are judged by the key rules of registration ([registration](registration.md#key-vetting)) and held as registration stores them; a key that breaks a rule, or encryption asked without keys, stops the start naming the client and the rule. Each is then built as oidc-provider serves it, so metadata it refuses (a grant it does not offer) stops the start too; one with a `sector_identifier_uri` is built at its first use, when its document is fetched.',
    path: 'file',
  }),
  row('svc.authenticator.module', 'authenticator.module', parseNonEmpty, {
    defaultText: 'unset → the demo accounts while `svc.demo.enabled`, else an authenticator given in code is required',
    path: 'module',
    doc: 'The ES module that signs people in: a module specifier (see [paths](#paths)): a path, `file:` URL or package name, whose default export is an `Authenticator` (`authenticate`, `exists`) or a function returning one, given `{ baseUrl, production, logger }` (never a secret). Loaded at start; a module that cannot be loaded or does not fit stops the start naming this property. Replaces the demo accounts; `options.authenticator` in code wins over it. `examples/authenticator-file.ts` signs in users of a JSON file with scrypt hashes.',
  }),
  row('svc.authenticator.timeout-ms', 'authenticator.timeoutMs', integer(1, 600000), {
    default: 10000,
    doc: 'Longest wait for one call into the authenticator (`authenticate`, `exists`) before it counts as failed (a sign-in shows the login page again with status 500, another request fails with 500 `server_error`), logged as `AuthenticatorError` with `cause_name` `AuthenticatorTimeout`. A sign-in it did not answer in time counts as a failed attempt for the login throttle.',
  }),
  row('svc.claims.module-timeout-ms', 'claims.moduleTimeoutMs', integer(1, 600000), {
    default: 10000,
    doc: 'Longest wait for one call into a claim module (its claims or its verified data) before the token or UserInfo request fails with 500 `server_error`, the module named in the log as failed with `ClaimModuleTimeout`.',
  }),
  row('svc.claims.modules', 'claims.modules', moduleList, {
    defaultText: 'unset → no claim modules (the example server: the demo modules while `svc.demo.enabled`)',
    path: 'modules',
    doc: 'Comma-separated ES modules providing claims (C5), each a module specifier (see [paths](#paths)): a path, `file:` URL or package name, whose default export is a `ClaimModule`, a list of them, or a function returning either, given `{ baseUrl, production, logger }` (never a secret). Loaded at start in this order, after the modules given in code; a module that cannot be loaded or does not fit stops the start naming this property. `examples/claims-file.ts` provides the claims of the users file.',
  }),
];

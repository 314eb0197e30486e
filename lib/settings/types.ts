/**
 * The typed settings of svc-connect. Every member has exactly one home: its property definition in
 * `definitions.ts`, where its default and documentation live.
 */
export interface Settings {
  /** TCP port of the example server (`svc.port`). */
  port: number;
  /** Public base URL; the issuer is `{baseUrl}/oidc/v1` (`svc.base-url`). No trailing slash. */
  baseUrl: string;
  redis: {
    /** Standalone Redis URL (`svc.redis.url`); unset → embedded in-memory store. */
    url?: string;
    /** Redis Cluster seed nodes (`svc.redis.cluster-nodes`). */
    clusterNodes?: { host: string; port: number }[];
    /** Prefix of every key this provider writes (`svc.redis.key-prefix`). */
    keyPrefix: string;
    /** Fail-fast wait for one Redis operation in ms (`svc.redis.operation-timeout-ms`). */
    operationTimeoutMs: number;
  };
  mail: {
    /** SMTP URL (`svc.mail.smtp-url`); unset → mails are written to `outboxDir`. */
    smtpUrl?: string;
    /** Folder for `.eml` files when no SMTP is configured (`svc.mail.outbox-dir`). */
    outboxDir: string;
    /** Sender address (`svc.mail.from`). */
    from: string;
  };
  management: {
    /** HTTP Basic user of the management endpoint (`svc.management.user`). */
    user: string;
    /** HTTP Basic password of the management endpoint (`svc.management.password`). */
    password: string;
    /** Failed logins from one client before it is locked out (`svc.management.lockout-threshold`). */
    lockoutThreshold: number;
    /** How long a lockout lasts, in seconds (`svc.management.lockout-seconds`). */
    lockoutSeconds: number;
  };
  stage: {
    /** Deliver the `scope` claim in UserInfo instead of the ID token. */
    includeScopesInUserInfo: boolean;
  };
  keys: {
    /** A JWKS file with the provider's private signing keys (`svc.keys.file`). */
    file?: string;
  };
  cookies: {
    /** Keys that sign cookies, newest first (`svc.cookies.keys`); unset → ephemeral. */
    keys?: string[];
  };
  subject: {
    /** The subject type of a client registered without `subject_type` (`svc.subject.default-type`). */
    defaultType: 'public' | 'pairwise';
    /** The key pairwise `sub` values are derived with (`svc.subject.pairwise-key`); unset → ephemeral. */
    pairwiseKey?: string;
  };
  accessToken: {
    /** Access token lifetime in seconds (`svc.access-token.ttl`). */
    ttl: number;
  };
  par: {
    /** Every client must push its authorization requests to `/oidc/v1/par` first (`svc.par.required`). */
    required: boolean;
  };
  demo: {
    /** Serve the demo accounts and the demo page (`svc.demo.enabled`). */
    enabled: boolean;
  };
  fetch: {
    /** Allow outbound fetches to private and loopback addresses (`svc.fetch.allow-private-network`). */
    allowPrivateNetwork: boolean;
    /** Canonical `host:port` entries whose names may resolve to a private address (`svc.fetch.private-hosts`). */
    privateHosts: string[];
  };
  /** Trust `X-Forwarded-*` headers (`svc.proxy`). */
  proxy: boolean;
  /** Trusted proxies in front; the client address is the `X-Forwarded-For` entry this many from the right (`svc.proxy.hops`). */
  proxyHops: number;
  login: {
    /** Failed sign-ins per login name (without a device cookie) or per device before a lockout (`svc.login.lockout-threshold`). */
    lockoutThreshold: number;
    /** Failed sign-ins per client address, without a device cookie (`svc.login.address-threshold`). */
    addressThreshold: number;
    /** Failures in a row for one name after which only device-cookie browsers may try (`svc.login.consecutive-limit`). */
    consecutiveLimit: number;
    /** Device cookie lifetime, days (`svc.login.device-cookie-days`). */
    deviceCookieDays: number;
    /** Counting window, seconds (`svc.login.lockout-window`). */
    lockoutWindowSeconds: number;
    /** First cool-down, seconds; doubles with each lockout (`svc.login.lockout-seconds`). */
    lockoutSeconds: number;
    /** Longest cool-down, seconds (`svc.login.lockout-max-seconds`). */
    lockoutMaxSeconds: number;
  };
  metrics: {
    /** Serve Prometheus metrics at `/metrics` (`svc.metrics.enabled`). */
    enabled: boolean;
  };
  ops: {
    /** The operations listener's port (`svc.ops.port`); unset: health and metrics stay on the public listener. */
    port?: number;
    /** The operations listener's address (`svc.ops.host`). */
    host: string;
  };
  log: {
    /** Lowest level written (`svc.log.level`). */
    level: 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
    /** `pretty` or `json` (`svc.log.format`); unset: `pretty` on a terminal outside production, else `json`. */
    format?: 'pretty' | 'json';
  };
  clients: {
    /** A JSON file holding an array of statically provisioned client metadata (`svc.clients.file`). */
    file?: string;
  };
  authenticator: {
    /** The ES module whose default export signs people in (`svc.authenticator.module`). */
    module?: string;
  };
  claims: {
    /** ES modules whose default exports provide claims, in order (`svc.claims.modules`). */
    modules?: string[];
  };
  /** `true` when `NODE_ENV=production`: unsafe defaults are refused instead of warned about. */
  production: boolean;
}

/** Defaults of the Redis store, shared by the settings and the store's own options (one home). */
export const REDIS_DEFAULTS = {
  /** Prefix of every key (`svc.redis.key-prefix`). */
  keyPrefix: 'svc:',
  /** Longest wait for one store operation, in ms (`svc.redis.operation-timeout-ms`). */
  operationTimeoutMs: 800,
} as const;

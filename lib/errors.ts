import { errors } from 'oidc-provider';

/**
 * A configuration property is unknown, malformed or unsafe. Thrown at start, before anything
 * listens; the message names the property (and never echoes a secret value).
 */
export class SettingsError extends TypeError {
  /** The offending property names, e.g. `['svc.port']`. */
  readonly properties: string[];

  constructor(message: string, properties: string[]) {
    super(message);
    this.name = 'SettingsError';
    this.properties = properties;
  }
}

/**
 * The store (memory or Redis) failed or is unreachable. Rendered by oidc-provider and by our own
 * routes as 503 `{"error":"server_error"}` with a fixed description; the cause stays in logs.
 */
export class StoreUnavailableError extends errors.OIDCProviderError {
  /** Stable code for logs and metrics. */
  readonly code = 'SVC_STORE_UNAVAILABLE';

  constructor(options?: { cause?: unknown }) {
    super(503, 'server_error');
    this.name = 'StoreUnavailableError';
    // oidc-provider hides errors of status 500 and above; this one is safe to show (fixed text).
    this.expose = true;
    this.error_description = 'the provider store is temporarily unavailable, try again shortly';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * An authorization code or other single-use artifact was consumed by a concurrent request first.
 * The loser of the race fails with `invalid_grant`.
 */
export class AlreadyConsumedError extends errors.InvalidGrant {
  constructor(kind: string) {
    super(`${kind} already consumed`);
    this.name = 'AlreadyConsumedError';
  }
}

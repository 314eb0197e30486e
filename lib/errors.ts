import { errors } from 'oidc-provider';

import { clip } from './terminal-text.js';

/** A configuration property is unknown, malformed or unsafe. The message names it, never a secret value. */
export class SettingsError extends TypeError {
  static readonly code = 'SVC_SETTINGS_INVALID';
  readonly code = SettingsError.code;
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
  static readonly code = 'SVC_STORE_UNAVAILABLE';
  readonly code = StoreUnavailableError.code;
  /** The store's host and port, for logs (never credentials); unset for a store without an address. */
  readonly where?: { readonly host?: string; readonly port?: number };

  constructor(options?: { cause?: unknown; where?: { host?: string; port?: number } }) {
    super(503, 'server_error');
    this.name = 'StoreUnavailableError';
    if (options?.where) this.where = options.where;
    this.expose = true; // oidc-provider hides 5xx errors; this fixed text is safe to show
    this.error_description = 'the provider store is temporarily unavailable, try again shortly';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * A disabled client presented its own registration access token at its client configuration
 * endpoint. Answered 403 `client_disabled` (not 401 `invalid_token`, which tells an RFC 7592 client
 * to throw the token away): the token is left as it was and works again once the client is enabled.
 */
export class ClientDisabledError extends errors.OIDCProviderError {
  static readonly code = 'SVC_CLIENT_DISABLED';
  readonly code = ClientDisabledError.code;

  constructor() {
    super(403, 'client_disabled');
    this.name = 'ClientDisabledError';
    this.error_description = 'the client is disabled by the operator; its registration access token is kept and works again once the client is enabled';
  }
}

/** A single-use artifact (an authorization code, …) was consumed by a concurrent request first: the loser fails with `invalid_grant`. */
export class AlreadyConsumedError extends errors.InvalidGrant {
  static readonly code = 'SVC_ALREADY_CONSUMED';
  readonly code = AlreadyConsumedError.code;

  constructor(kind: string) {
    super(`${kind} already consumed`);
    this.name = 'AlreadyConsumedError';
  }
}

/** Why an outbound fetch failed; the message names the URL and the rule, never a response body. */
export class OutboundFetchError extends Error {
  static readonly code = 'SVC_OUTBOUND_FETCH_FAILED';
  readonly code = OutboundFetchError.code;

  constructor(
    /** The URL that was (or would have been) fetched. */
    readonly url: string,
    /** The rule it broke or what failed, e.g. `resolves to a private address`. */
    readonly reason: string,
  ) {
    super(`${url}: ${reason}`);
    this.name = 'OutboundFetchError';
  }
}

/** Why a refreshed JWK Set was refused as a whole: no key in it passed the key rules. */
export class ClientKeysRefusedError extends Error {
  static readonly code = 'SVC_CLIENT_KEYS_REFUSED';
  readonly code = ClientKeysRefusedError.code;

  constructor(
    /** The client's `jwks_uri`. */
    readonly url: string,
    /** "key #1 ("enc-1"): RSA public exponent 1 is below 65537", bounded in length. */
    readonly rule: string,
  ) {
    super(`jwks_uri ${url}: no key passed the key rules (${rule})`);
    this.name = 'ClientKeysRefusedError';
  }
}

/** An invitation address is missing, malformed or too long (answered 400 `invalid_request`). */
export class InvalidInvitationAddressError extends Error {
  static readonly code = 'SVC_INVALID_INVITATION_ADDRESS';
  readonly code = InvalidInvitationAddressError.code;

  constructor(reason: string) {
    super(reason);
    this.name = 'InvalidInvitationAddressError';
  }
}

/** The invitation mail could not be sent; the token issued for it was destroyed. */
export class MailDeliveryError extends Error {
  static readonly code = 'SVC_MAIL_FAILED';
  readonly code = MailDeliveryError.code;
  /** The SMTP server's host and port, for logs (never credentials); unset for the outbox or a mailer of code. */
  readonly where?: { readonly host?: string; readonly port?: number };

  constructor(options?: { cause?: unknown; where?: { host?: string; port?: number } }) {
    super('the invitation mail could not be sent', options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MailDeliveryError';
    if (options?.where) this.where = options.where;
  }
}

/** The `name` and `code` of what a plug-in threw, each kept only when it is an identifier (never its message). */
export interface ThrownShape {
  name?: string;
  code?: string;
}

const identifier = (value: unknown): string | undefined => (typeof value === 'string' && /^[A-Za-z][\w.-]{0,63}$/.test(value) ? value : undefined);
/** Member `key` of what was thrown; a read that throws (a getter, a Proxy) reads as nothing, what it threw dropped. */
const memberOf = (thrown: object, key: 'name' | 'code'): unknown => {
  try {
    return (thrown as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
};
const shapeOf = (thrown: unknown): ThrownShape =>
  thrown !== null && typeof thrown === 'object' ? { name: identifier(memberOf(thrown, 'name')), code: identifier(memberOf(thrown, 'code')) } : {};

/** A claim module threw: its message and cause are not kept, as they may say what her record holds. */
export class ClaimModuleError extends Error {
  static readonly code = 'SVC_CLAIM_MODULE_FAILED';
  readonly code = ClaimModuleError.code;
  readonly plugin: string;
  readonly thrown: ThrownShape;

  constructor(module: string, thrown: unknown) {
    super(`claim module ${module} failed`);
    this.name = 'ClaimModuleError';
    this.plugin = module;
    this.thrown = shapeOf(thrown);
  }
}

/** The authenticator threw: its message and cause are not kept, as they may name the account. */
export class AuthenticatorError extends Error {
  static readonly code = 'SVC_AUTHENTICATOR_FAILED';
  readonly code = AuthenticatorError.code;
  readonly plugin = 'authenticator';
  readonly thrown: ThrownShape;

  constructor(thrown: unknown) {
    super('the authenticator failed');
    this.name = 'AuthenticatorError';
    this.thrown = shapeOf(thrown);
  }
}

/**
 * What an authenticator throws when its directory could not judge a sign-in (it refused the connection, its pool or
 * its own timeout gave up): answered 503 `server_error` with a fixed text and, as a store outage is, never counted as a
 * failed attempt. Never throw it for a wrong password or an unknown login (answer `undefined`): anything else an
 * authenticator throws counts as a failure. Of its `cause` only the name and code are kept, for the log.
 */
export class AuthenticatorUnavailableError extends errors.OIDCProviderError {
  static readonly code = 'SVC_AUTHENTICATOR_UNAVAILABLE';
  readonly code = AuthenticatorUnavailableError.code;
  readonly plugin = 'authenticator';
  readonly thrown: ThrownShape;

  constructor(options?: { cause?: unknown }) {
    super(503, 'server_error');
    this.name = 'AuthenticatorUnavailableError';
    this.expose = true; // oidc-provider hides 5xx errors; this fixed text is safe to show
    this.error_description = 'the sign-in service is temporarily unavailable, try again shortly';
    this.thrown = shapeOf(options?.cause);
  }
}

/** A listing cursor that was not handed out by this store (or no longer fits it). */
export class InvalidCursorError extends Error {
  static readonly code = 'SVC_INVALID_CURSOR';
  readonly code = InvalidCursorError.code;

  constructor() {
    super('the cursor is not one this store handed out; start the listing again without a cursor');
    this.name = 'InvalidCursorError';
  }
}

/**
 * A value under one of the Redis store's record keys is not a record it wrote (an operator's edit, another program on
 * the prefix, a damaged restore). Read as no record, a disabling or revocation mark would stop counting: the read fails
 * instead (500 `server_error`), and the store logs `store_record_unreadable` with the model and the key's reference.
 */
export class StoreRecordUnreadableError extends Error {
  static readonly code = 'SVC_STORE_RECORD_UNREADABLE';
  readonly code = StoreRecordUnreadableError.code;

  constructor() {
    super('a stored value is not a record this store wrote');
    this.name = 'StoreRecordUnreadableError';
  }
}

/** A toolbox action that cannot be done, with the HTTP answer it gets (`status`, `error`, the message as description). */
export class ToolboxError extends Error {
  static readonly code = 'SVC_TOOLBOX_REFUSED';
  readonly code = ToolboxError.code;

  constructor(readonly status: number, readonly error: string, description: string) {
    super(description);
    this.name = 'ToolboxError';
  }
}

/** A malformed svc.* claim name: the reason and the 0-based offset of the fault. */
export class ClaimSyntaxError extends Error {
  static readonly code = 'SVC_CLAIM_SYNTAX';
  readonly code = ClaimSyntaxError.code;

  constructor(
    /** The claim name as given (the message shows at most 80 characters of it). */
    readonly claim: string,
    readonly offset: number,
    readonly reason: string,
  ) {
    super(`claim ${clip(claim, 80)}: ${reason} at offset ${offset}`);
    this.name = 'ClaimSyntaxError';
  }
}

/** A failure the command line reports as one line on stderr, with its exit code. */
export class CliError extends Error {
  static readonly code = 'SVC_CLI_FAILED';
  readonly code = CliError.code;

  constructor(
    message: string,
    /** 1: the operation failed; 2: the command line was wrong. */
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** A demo flow failed: the provider's OAuth error, or what went wrong on the way. */
export class DemoFlowError extends Error {
  static readonly code = 'SVC_DEMO_FLOW_FAILED';
  readonly code = DemoFlowError.code;

  constructor(
    /** The OAuth `error` (the provider's, or one naming the failed step). */
    readonly error: string,
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
    this.name = 'DemoFlowError';
  }
}

const SVC_ERRORS = [
  SettingsError,
  StoreUnavailableError,
  ClientDisabledError,
  AlreadyConsumedError,
  OutboundFetchError,
  ClientKeysRefusedError,
  InvalidInvitationAddressError,
  MailDeliveryError,
  ClaimModuleError,
  AuthenticatorError,
  AuthenticatorUnavailableError,
  InvalidCursorError,
  StoreRecordUnreadableError,
  ToolboxError,
  ClaimSyntaxError,
  CliError,
  DemoFlowError,
];

/**
 * The `code` of an error class of svc-connect (each class's static `code`, e.g. `SettingsError.code`).
 * Logs, metrics and callers key on these strings; a code is never part of a response.
 */
export type SvcErrorCode = (
  | typeof SettingsError
  | typeof StoreUnavailableError
  | typeof ClientDisabledError
  | typeof AlreadyConsumedError
  | typeof OutboundFetchError
  | typeof ClientKeysRefusedError
  | typeof InvalidInvitationAddressError
  | typeof MailDeliveryError
  | typeof ClaimModuleError
  | typeof AuthenticatorError
  | typeof AuthenticatorUnavailableError
  | typeof InvalidCursorError
  | typeof StoreRecordUnreadableError
  | typeof ToolboxError
  | typeof ClaimSyntaxError
  | typeof CliError
  | typeof DemoFlowError
)['code'];

/** True for an error thrown by svc-connect itself (an instance of one of the classes of this module). */
export function isSvcError(err: unknown): err is Error & { readonly code: SvcErrorCode } {
  return SVC_ERRORS.some((type) => err instanceof type);
}

/**
 * Why a start failed, as `serve` and `config check` print it: the message of a {@link SettingsError} or `TypeError`
 * (it names the property), else only the error's name.
 */
export function startFailureReason(err: unknown): string {
  return err instanceof SettingsError || err instanceof TypeError ? err.message : err instanceof Error ? err.name : 'error';
}

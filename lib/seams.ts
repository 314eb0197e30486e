import Provider, { type KoaContextWithOIDC } from 'oidc-provider';

/*
 * What svc-connect relies on in oidc-provider beyond its typed configuration. The seams test pins
 * each against the installed oidc-provider, so an upgrade that changes one fails it, not production.
 */

/** The oidc-provider minor svc-connect is tested against, and that of `@types/oidc-provider` (which has no 9.13). */
export const OIDC_PROVIDER_VERSIONS = { runtime: '9.13', types: '9.12' } as const;

/** `ctx.oidc.route` values we key on (oidc-provider's router names, not paths). */
export const ROUTE_NAMES = {
  authorization: 'authorization',
  /** `POST /token` */
  token: 'token',
  /** `GET` or `POST /userinfo` */
  userinfo: 'userinfo',
  /** `GET /authorize/{uid}`: an authorization resumed after its interaction */
  resume: 'resume',
  /** `GET` or `POST /logout` (RP-initiated logout) */
  endSession: 'end_session',
  /** `POST /logout/confirm`: her answer on the sign-out page */
  endSessionConfirm: 'end_session_confirm',
  pushedAuthorizationRequest: 'pushed_authorization_request',
  /** `POST /register` */
  registration: 'registration',
  /** `GET /register/{id}` */
  clientRead: 'client',
  /** `PUT /register/{id}` */
  clientUpdate: 'client_update',
  /** `DELETE /register/{id}` */
  clientDelete: 'client_delete',
  /** `GET /jwks`: the provider's public keys */
  jwks: 'jwks',
} as const;

/**
 * Provider events we listen to. The `*.success` of registration pass `(ctx, client)`,
 * `grant.success` passes `(ctx)`, the `*.error` events and `server_error` pass `(ctx, err)`.
 */
export const PROVIDER_EVENTS = {
  registrationCreated: 'registration_create.success',
  registrationUpdated: 'registration_update.success',
  registrationDeleted: 'registration_delete.success',
  grantSucceeded: 'grant.success',
  authorizationFailed: 'authorization.error',
  grantFailed: 'grant.error',
  registrationCreateFailed: 'registration_create.error',
  registrationUpdateFailed: 'registration_update.error',
  endSessionFailed: 'end_session.error',
  userinfoFailed: 'userinfo.error',
  serverError: 'server_error',
} as const;

/** Model names (adapter factory argument) and `ctx.oidc.entities` names we treat specially. */
export const MODEL_NAMES = {
  client: 'Client',
  grant: 'Grant',
  authorizationCode: 'AuthorizationCode',
  initialAccessToken: 'InitialAccessToken',
  registrationAccessToken: 'RegistrationAccessToken',
  /** Also the name of its entity in `ctx.oidc.entities` once `/authorize` loaded a `request_uri`. */
  pushedAuthorizationRequest: 'PushedAuthorizationRequest',
} as const;

/** The member of an interaction's `session` into which oidc-provider copies the session's id (her cookie's value); it never reads it back. */
export const INTERACTION_SESSION_ID = 'cookie';

/** oidc-provider keeps a client's JWK Set from `jwks_uri` fresh at least this many seconds (longer by `max-age`/`Expires`). */
export const CLIENT_JWKS_MIN_FRESH_SECONDS = 60;

/** The lifetime oidc-provider gives a pushed authorization request (`expires_in` of `/par`). */
export const PUSHED_REQUEST_TTL_SECONDS = 60;

/**
 * oidc-provider accepts a stored token up to this many seconds past its `exp` (its default `clockTolerance`):
 * a token ends on time because the store expires its record at its TTL.
 */
export const PROVIDER_CLOCK_TOLERANCE_SECONDS = 15;

/** Largest request body oidc-provider's own parser reads, in bytes (it refuses larger ones). */
export const PROVIDER_BODY_LIMIT_BYTES = 56 * 1024;

/**
 * How oidc-provider's `form_post` answer page opens its one form, the one that posts to an action it escaped for HTML
 * into `escapedAction` (`&`, `<`, `>`, `"` and `'` as entities, as `escapeHtml` of lib/pages/html.ts does).
 */
export function formPostOpening(escapedAction: string): string {
  return `<form method="post" action="${escapedAction}">`;
}

/** The provider request being served (`Provider.ctx`, `ctx.oidc` as far as the route got); `undefined` outside one. */
export function currentRequest(): KoaContextWithOIDC | undefined {
  return Provider.ctx;
}

/** The keys of `client` oidc-provider would encrypt an ID token or UserInfo to with `alg` (its `selectForEncrypt`); none: it fails. */
export function encryptionKeysFor(client: NonNullable<KoaContextWithOIDC['oidc']['client']>, alg: string): readonly unknown[] {
  // oidc-provider's types do not declare the client's key store; the seams test pins it.
  const store = (client as unknown as { asymmetricKeyStore: { selectForEncrypt(by: { alg: string; use: 'enc' }): unknown[] } }).asymmetricKeyStore;
  return store.selectForEncrypt({ alg, use: 'enc' });
}

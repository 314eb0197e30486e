import type { JWK } from 'jose';
import type { Middleware } from 'koa';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type Provider from 'oidc-provider';

import { decorateAdapter, type SvcStore } from '../../adapters/store.js';
import type { Logger } from '../logger.js';
import { deleteClientRecords } from '../management/client-deletion.js';
import { DELETION_MODEL, SUSPENSION_MODEL, suspendedClients, tokensOfDeletedClients, withdrawTokensOfDisabledClients } from '../management/client-suspension.js';
import type { Metrics } from '../observability/metrics.js';
import { requestLogging } from '../observability/request-log.js';
import { hashedClientSecrets } from '../registration/client-secrets.js';
import { GRANT_REVOCATION_MODEL, markedGrantRevocations } from '../management/grant-revocation.js';
import { endedSignIns, REVOCATION_MODEL, revokedSessions } from '../management/subject-revocation.js';
import { currentPolicies } from '../registration/current-policies.js';
import { settleSingleUseTokens } from '../registration/settle-single-use-tokens.js';
import { SINGLE_USE_MODELS, singleUseTokens, TRACKED_WRITES } from '../registration/single-use-tokens.js';
import { REISSUE_MODEL, reissuedTokens } from '../registration/token-reissue.js';
import { currentRequest, INTERACTION_SESSION_ID, MODEL_NAMES, ROUTE_NAMES } from '../seams.js';
import { publicPathsOf } from '../settings/paths.js';
import { bodyLimit } from '../web/body-limit.js';
import { CookieKeyring, ownCookieKeys } from '../web/cookie-keyring.js';
import { hostParsedBody } from '../web/host-parsed-body.js';
import { pinPublicOrigin } from '../web/public-origin.js';
import { hostOpenerPolicyKept, noCachePragma, securityHeaders } from '../web/security-headers.js';
import { resumedRedirectGuard } from '../interactions/redirect-check.js';
import { boundSessions, boundSignIns } from '../interactions/sign-in-binding.js';
import { retractedLogoutTargets } from '../pages/logout-pages.js';
import { clientAuthChallenge } from './client-auth-challenge.js';
import { laxCookiesOnHttp } from './http-cookies.js';
import { publishedKeysOnly } from './published-keys.js';
import { pushByPostOnly, PUSHED_REQUEST_USE_MODEL, pushedLifetimeAnswer, pushedRequests } from './pushed-requests.js';
import { onceOnly, REPLAY_DETECTION_MODEL } from './replay-detection.js';
import { normalizeProviderRequests } from './request-normalizer.js';
import { readCookieRecordsAhead } from './cookie-reads-ahead.js';
import { storeBatch } from './store-batch.js';
import { explainUnfitClientKeys } from './unfit-client-keys.js';
import { dropTokensOfFailedAnswers } from './failed-token-answers.js';
import { flowShare, type FlowShareParts } from './flow-share.js';
import { framedFormPostAnswers } from './form-post-frames.js';
import { explainRefusedClientKeys } from './vetted-jwks-fetch.js';

/** One row of a wrapping: a layer and, in one line, why it is there. */
export interface Wrapper<T> {
  readonly why: string;
  readonly wrap: T;
}

/** oidc-provider's adapter factory: one adapter per model name. */
export type AdapterFactory = (model: string) => Adapter;

/** What {@link wrappedAdapter} is built from: the store, and how a crowded store is shared out by client address. */
export interface AdapterParts {
  store: Pick<SvcStore, 'adapter' | 'unconsume' | 'insert' | 'batch' | 'inventory' | 'flush' | 'readAhead' | 'attempts' | 'crowded' | 'refusesStart'>;
  /** Whose address a request is and the counters' MAC key; without it, a crowded store is not shared out by address. */
  flowShare?: Omit<FlowShareParts, 'store'>;
}

/** What the layers around oidc-provider are built from: the store, logs, `svc.base-url` and `svc.proxy`, and the provider's keys. */
export interface WrappingParts extends AdapterParts {
  /** The provider's private keys: those not for signing decrypt request objects. */
  keys: readonly JWK[];
  /** The kids of the keys the JWKS leaves out: decryption keys not yet or no longer current. */
  unpublished?: readonly string[];
  /** The kids of the keys the JWKS lists as `use: "sig"`: keys not current that would also decrypt. */
  signingOnly?: readonly string[];
  logger: Logger;
  metrics?: Metrics;
  baseUrl: string;
  proxy: boolean;
}

/** What the front door is built from: the provider's keys are not among it, `svc.cookieKeys` are. */
export type FrontDoorParts = Omit<WrappingParts, 'keys'> & { cookieKeys: readonly string[] };

/** A row of {@link ADAPTER_WRAPPING}: the models it wraps; `below` makes any model's adapter as the rows below do. */
interface AdapterWrapper extends Wrapper<(inner: Adapter, model: string, below: AdapterFactory, parts: AdapterParts) => Partial<Adapter>> {
  readonly models: ReadonlySet<string>;
}

const TOKENS = new Set([MODEL_NAMES.initialAccessToken, MODEL_NAMES.registrationAccessToken]);
const CLIENTS = new Set([MODEL_NAMES.client]);

/**
 * The adapters oidc-provider is given, outermost first (the last row wraps the store's): each rule
 * is kept when oidc-provider touches the entity, whatever path spelling reached it.
 */
export const ADAPTER_WRAPPING: readonly AdapterWrapper[] = [
  {
    why: 'a pushed request is stored checked, used once, bound to its client, and not kept for one deleted or disabled meanwhile (RFC 9126)',
    models: new Set([MODEL_NAMES.pushedAuthorizationRequest]),
    wrap: (inner, _model, below) => pushedRequests(inner, below(PUSHED_REQUEST_USE_MODEL), below(DELETION_MODEL), below(SUSPENSION_MODEL)),
  },
  { why: "registration and update run today's policies, whatever their token was issued with", models: TOKENS, wrap: currentPolicies },
  {
    why: 'initial and registration access tokens are claimed when looked up, their writes undoable (C6)',
    models: new Set([...SINGLE_USE_MODELS, ...TRACKED_WRITES]),
    wrap: (inner, model, _below, { store }) => singleUseTokens(inner, model, store),
  },
  {
    why: 'a client assertion (private_key_jwt) is accepted once, also by concurrent requests',
    models: new Set([REPLAY_DETECTION_MODEL]),
    wrap: (_inner, model, _below, { store }) => onceOnly(model, store),
  },
  { why: 'client secrets are stored hashed, never in clear', models: CLIENTS, wrap: hashedClientSecrets },
  {
    why: 'a client deleting itself (RFC 7592) leaves nothing behind, as the toolbox delete: no grant, token, code or pushed request of it',
    models: CLIENTS,
    wrap: (inner, _model, _below, { store }) => ({
      // Only its delete route: a registration undone after a store failure removes a client nobody received.
      destroy: async (id) => void (currentRequest()?.oidc?.route === ROUTE_NAMES.clientDelete ? await deleteClientRecords(store, id, 'client', () => inner.destroy(id)) : await inner.destroy(id)),
    }),
  },
  {
    why: 'a disabled client is not found, on every route; a deleted one is not written back',
    models: CLIENTS,
    wrap: (inner, _model, below) => suspendedClients(inner, below(SUSPENSION_MODEL), below(DELETION_MODEL)),
  },
  {
    why: 'her answer on a sign-out page goes to no post-logout redirect URI its client took out or client gone since the page',
    models: new Set(['Session']),
    wrap: (inner) => retractedLogoutTargets(inner),
  },
  {
    why: 'a sign-in ends 14 days after it: a session saved again across that instant is not found after it',
    models: new Set(['Session']),
    wrap: (inner) => endedSignIns(inner),
  },
  {
    why: 'a session signed in before its person was revoked is not found, also one a request in flight wrote back',
    models: new Set(['Session']),
    wrap: (inner, _model, below) => revokedSessions(inner, below(REVOCATION_MODEL)),
  },
  {
    why: "a registration access token works only while of its client's generation: the operator's reissue ends every earlier one at once",
    models: new Set([MODEL_NAMES.registrationAccessToken]),
    wrap: (inner, _model, below) => reissuedTokens(inner, below(REISSUE_MODEL)),
  },
  {
    why: 'a registration access token or grant of a client deleted meanwhile is not written back',
    models: new Set([MODEL_NAMES.registrationAccessToken, MODEL_NAMES.grant]),
    wrap: (inner, model, below, { store }) => tokensOfDeletedClients(inner, below(DELETION_MODEL), model, store),
  },
  // Below the deletion check (its mark mostly cached): on Redis this mark is read in the round trip of the grant's write.
  {
    why: 'a grant is marked revoked before it is destroyed outside the token endpoint (a logout): a token answer of it in flight is withdrawn',
    models: new Set([MODEL_NAMES.grant]),
    wrap: (inner, _model, below, { store }) => markedGrantRevocations(inner, below(GRANT_REVOCATION_MODEL), store),
  },
  {
    why: 'over https a signed-in session is found only in the browser it was signed in in, not in one its cookie was planted in',
    models: new Set(['Session']),
    wrap: (inner) => boundSessions(inner),
  },
  {
    why: 'a sign-in is resumed only in the browser that signed in, not in one that planted its interaction cookie in hers',
    models: new Set(['Interaction']),
    wrap: (inner) => boundSignIns(inner),
  },
  {
    why: 'while the store holds half its limit, each client address may start only so many flows an hour, so one host cannot fill it',
    models: new Set(['Interaction', 'Session', MODEL_NAMES.pushedAuthorizationRequest]),
    wrap: (inner, model, _below, { store, flowShare: share }) => (share ? flowShare(inner, model, { store, ...share }) : {}),
  },
  {
    why: "an interaction is stored without her session's id, which oidc-provider copies into it and never reads: no record holds a session cookie's value",
    models: new Set(['Interaction']),
    wrap: (inner) => ({ upsert: (id, payload, expiresIn) => inner.upsert(id, withoutSessionId(payload), expiresIn) }),
  },
];

/** An interaction's `payload` without the session id in its `session` ({@link INTERACTION_SESSION_ID}). */
function withoutSessionId(payload: AdapterPayload): AdapterPayload {
  if (!payload.session || !(INTERACTION_SESSION_ID in payload.session)) return payload;
  const { [INTERACTION_SESSION_ID]: _id, ...session } = payload.session;
  return { ...payload, session };
}

/**
 * The `provider.use()` chain, in order, all before oidc-provider's router. Mounted by `createApp`,
 * `mountProvider` comes first: the URLs oidc-provider prints are built under the path of `svc.base-url`.
 */
export const PROVIDER_MIDDLEWARE: readonly Wrapper<(parts: WrappingParts) => Middleware | undefined>[] = [
  { why: "each provider request is one unit of store work (joining the front door's)", wrap: ({ store, logger }) => storeBatch(store, logger) },
  // Outside every layer that may replace an answer, so it judges the answer that goes out.
  { why: 'an answer not to be stored says so to HTTP/1.0 caches too (Pragma: no-cache, RFC 6749 5.1)', wrap: () => noCachePragma() },
  { why: 'a 401 invalid_client carries a Basic challenge, however the client authenticated (RFC 6749 5.2)', wrap: () => clientAuthChallenge() },
  { why: 'on http, SameSite=None cookies go out as Lax (browsers refuse None without Secure); a /logout POST without them is sent again as a GET', wrap: ({ baseUrl }) => (baseUrl.startsWith('https:') ? undefined : laxCookiesOnHttp()) },
  { why: 'a request to /par by another method than POST is answered 405 (RFC 9126 2.3), its body unread', wrap: ({ logger }) => pushByPostOnly(logger) },
  { why: 'secrets hashed, ignored parameters (and a claims parameter that requests nothing) dropped, a hint encrypted to the client read as its client_id, JSON too deep to clone or holding a __proto__ member refused, POST on a configuration path served as PUT', wrap: ({ logger, keys, baseUrl }) => normalizeProviderRequests(logger, keys, publicPathsOf(baseUrl).issuer) },
  {
    why: 'a decryption key is published only while current: a process reloaded first never lists one another process lacks; a key is listed with its public key_ops',
    wrap: ({ unpublished = [], signingOnly = [], keys = [] }) => (unpublished.length + signingOnly.length > 0 || keys.some((k) => k.key_ops !== undefined) ? publishedKeysOnly(unpublished, signingOnly) : undefined),
  },
  { why: "a /par answer's expires_in is how long the pushed request is kept (never past its object's exp)", wrap: () => pushedLifetimeAnswer() },
  { why: 'a claimed single-use token is kept or given back by the resolved route and status; a request whose token died meanwhile is undone', wrap: ({ logger, metrics, store }) => settleSingleUseTokens(logger, metrics, store.adapter(REISSUE_MODEL)) },
  { why: 'nothing of a resumed authorization reaches a redirect URI the client retracted meanwhile', wrap: () => resumedRedirectGuard() },
  { why: "the form_post answer of /authorize may be framed by its redirect URI's origin (silent renew in an iframe), no other page", wrap: () => framedFormPostAnswers() },
  { why: 'a token answer other than a success leaves no token stored (oidc-provider stores the access token before the ID token can fail)', wrap: () => dropTokensOfFailedAnswers() },
  { why: 'a token or UserInfo answer for a client disabled or deleted, or of a grant revoked, while it was served is withdrawn (C2)', wrap: ({ store, logger }) => withdrawTokensOfDisabledClients(store, logger) },
  { why: 'a token or UserInfo answer refused for want of a key fitting the encryption asked names the key needed, and is logged', wrap: ({ logger }) => explainUnfitClientKeys(logger) },
  { why: 'a registration refused for its jwks_uri keys names the key rule that refused them', wrap: () => explainRefusedClientKeys() },
];

/** The front door: what every request passes, in order, before the provider, our pages, health or management serve it. */
export const FRONT_DOOR: readonly Wrapper<(parts: FrontDoorParts) => Middleware>[] = [
  { why: 'Host and scheme (and X-Forwarded-Proto) pinned to svc.base-url before anything reads them', wrap: ({ baseUrl, proxy, logger }) => pinPublicOrigin(baseUrl, proxy, logger) },
  // Paths are seen relative to where the front door is mounted (createApp mounts it at the base path).
  { why: 'each request gets its id (the one a trusted proxy set, else a new one) and one log line', wrap: ({ logger, proxy, metrics }) => requestLogging(logger, proxy, metrics) },
  { why: 'security headers on every response', wrap: () => securityHeaders() },
  { why: "a body the host app's parser read first is put back from its raw text, or refused: never served empty", wrap: ({ logger }) => hostParsedBody(logger) },
  { why: 'an oversized body is refused before anything reads it', wrap: () => bodyLimit() },
  { why: 'each request is one unit of store work, stored before its answer goes out', wrap: ({ store, logger }) => storeBatch(store, logger) },
  { why: "an interaction and her session, both named by the request's cookies, are read together (oidc-provider reads one after the other)", wrap: ({ store, cookieKeys }) => readCookieRecordsAhead(store, cookieKeys) },
];

/**
 * The adapter factory oidc-provider is given: {@link ADAPTER_WRAPPING} around the store's. Give it to
 * `createConfiguration` as `adapter` in a configuration of your own, so the store rules hold there too.
 */
export function wrappedAdapter(parts: AdapterParts): (model: string) => Adapter {
  return ADAPTER_WRAPPING.reduceRight<AdapterFactory>(
    (below, row) => (model) => {
      const inner = below(model);
      return row.models.has(model) ? decorateAdapter(inner, row.wrap(inner, model, below, parts)) : inner;
    },
    parts.store.adapter,
  );
}

/** Adds {@link PROVIDER_MIDDLEWARE} to `provider`, in order. */
export function useProviderMiddleware(provider: Provider, parts: WrappingParts): void {
  for (const row of PROVIDER_MIDDLEWARE) {
    const middleware = row.wrap(parts);
    if (middleware) provider.use(middleware);
  }
}

/**
 * {@link FRONT_DOOR} in front of `dispatch`, without koa-compose (a pass-through layer that is not async adds no
 * promise), its cookies signed and read with `svc.cookieKeys` whatever the host app's keys ({@link ownCookieKeys}), the
 * host's own routes after it answering with the host's `Cross-Origin-Opener-Policy` ({@link hostOpenerPolicyKept}).
 */
export function frontDoor(parts: FrontDoorParts, dispatch: Middleware): Middleware {
  const rows = FRONT_DOOR.map((row) => row.wrap(parts)).reduceRight<Middleware>((inner, layer) => (ctx, next) => layer(ctx, () => inner(ctx, next) as Promise<void>) as Promise<void>, dispatch);
  return ownCookieKeys(new CookieKeyring(parts.cookieKeys), hostOpenerPolicyKept(rows));
}

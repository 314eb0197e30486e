import { decodeProtectedHeader, UnsecuredJWT } from 'jose';
import type { Context, Middleware } from 'koa';
import { errors, type Adapter, type AdapterPayload, type KoaContextWithOIDC } from 'oidc-provider';

import type { SvcStore } from '../../adapters/store.js';
import type { Logger } from '../logger.js';
import { pusherOf } from '../management/client-deletion.js';
import { claim } from '../registration/single-use-tokens.js';
import { currentRequest, MODEL_NAMES, PUSHED_REQUEST_TTL_SECONDS, ROUTE_NAMES } from '../seams.js';
import { ROUTES } from '../settings/paths.js';
import { logErrorAnswer, sendError } from '../web/error-response.js';
import { pushedRequestExpiry } from './request-objects.js';

/** The single-use mark of a pushed request, stored beside it with the same lifetime. */
export const PUSHED_REQUEST_USE_MODEL = 'PushedAuthorizationRequestUse';

const epoch = (): number => Math.floor(Date.now() / 1000);

/**
 * What a pushed request is stored as: its parameters after every check of `/par` (`claims` in its
 * stored form, ignored parameters dropped), as an unsecured JWT from the client to the issuer, as
 * oidc-provider stores plain pushed requests. The client's own request object is never stored: it
 * holds the raw `claims` request, values included (C5: a requested value is never stored).
 */
function checkedRequest(ctx: KoaContextWithOIDC | undefined, expiresIn: number): string {
  const client = ctx?.oidc.client;
  const params = ctx?.oidc.params;
  if (ctx?.oidc.route !== ROUTE_NAMES.pushedAuthorizationRequest || !client || !params) {
    throw new TypeError('a pushed authorization request is stored only by the pushed authorization request endpoint');
  }
  const payload: Record<string, unknown> = Object.fromEntries(Object.entries(params).filter(([, value]) => value !== undefined));
  if (typeof payload.claims === 'string') payload.claims = JSON.parse(payload.claims) as unknown;
  payload.client_id = client.clientId;
  const now = epoch();
  return new UnsecuredJWT(payload).setIssuedAt(now).setNotBefore(now).setIssuer(client.clientId).setAudience(ctx.oidc.issuer).setExpirationTime(now + expiresIn).encode();
}

/** How long a pushed request is kept, by request: what the `/par` answer says in `expires_in`. */
const lifetimes = new WeakMap<object, number>();

/**
 * How long the request of `ctx` is kept: oidc-provider's lifetime, but never past the pushed request object's `exp`
 * (for an `exp` with a fraction of a second oidc-provider falls back to 60 s).
 * @throws `invalid_request_object` when that `exp` has passed meanwhile.
 */
function keptFor(ctx: KoaContextWithOIDC | undefined, expiresIn: number): number {
  const exp = ctx ? pushedRequestExpiry(ctx) : undefined;
  const ttl = exp === undefined ? expiresIn : Math.min(expiresIn, exp - epoch());
  if (!(ttl > 0)) throw new errors.InvalidRequestObject('the request object has expired (its exp is not in the future)');
  if (ctx) lifetimes.set(ctx, ttl);
  return ttl;
}

/** The paths oidc-provider's router serves the push at: `/par` in any ASCII letter case, with one trailing slash or none. */
const PUSH_PATH = new RegExp(`^${ROUTES.pushed_authorization_request}/?$`, 'i');

/**
 * `provider.use` middleware: a request to `/par` by any method but POST is answered 405 with `Allow: POST`
 * (RFC 9126 2.3) before anything reads it, and logged as a refusal, on every spelling a POST is served at
 * ({@link PUSH_PATH}). `OPTIONS` passes on: oidc-provider answers the CORS preflight there. Other spellings of the
 * path reach no route (404), as before.
 */
export function pushByPostOnly(logger: Logger): Middleware {
  return async (ctx, next) => {
    if (PUSH_PATH.test(ctx.path) && ctx.method !== 'POST' && ctx.method !== 'OPTIONS') {
      ctx.set('Allow', 'POST');
      sendError(ctx, 405, 'method_not_allowed', 'the pushed authorization request endpoint accepts POST only (RFC 9126 2.3)');
      logErrorAnswer(logger, ctx);
      return;
    }
    await next();
  };
}

/** `provider.use` middleware: a `/par` answer's `expires_in` says how long the pushed request is kept ({@link keptFor}). */
export function pushedLifetimeAnswer(): Middleware {
  return async (ctx, next) => {
    await next();
    const kept = lifetimes.get(ctx);
    const body = ctx.body as { expires_in?: unknown } | undefined;
    if (kept !== undefined && body && typeof body === 'object' && typeof body.expires_in === 'number') body.expires_in = kept;
  };
}

/**
 * Our rules for pushed authorization requests (RFC 9126) on their adapter, with `uses` the adapter
 * of their use marks; decided by the route oidc-provider resolved and by the store, never the path:
 * - stored checked ({@link checkedRequest}), without oidc-provider's unchecked copy of `dpop_jkt`; a write outside
 *   the `/par` route fails;
 * - single use: the first `/authorize` that loads the `request_uri` consumes its mark atomically (a push whose write
 *   is refused leaves no mark); every later one, concurrent ones included, gets `invalid_request_uri`;
 * - bound to the client: another client's `client_id` gets `invalid_request_uri`, the mark unspent;
 * - not kept for a client deleted or disabled while the push was served (a mark in `deletions` or `suspensions`): 401
 *   `invalid_client`, as a push after the mark; one kept would start a sign-in after `enable`.
 */
export function pushedRequests(inner: Adapter, uses: Adapter, deletions: Adapter, suspensions: Adapter): Partial<Adapter> {
  return {
    upsert: async (id, payload, expiresIn) => {
      const ctx = currentRequest();
      const ttl = keptFor(ctx, expiresIn ?? PUSHED_REQUEST_TTL_SECONDS);
      const request = checkedRequest(ctx, ttl);
      const now = epoch();
      await uses.upsert(id, { iat: now, exp: now + ttl }, ttl);
      // `dpopJkt` is oidc-provider's copy of a member of the client's request object, kept unchecked; DPoP is not offered.
      const { dpopJkt: _unchecked, ...kept } = payload as AdapterPayload & { dpopJkt?: unknown };
      // A push refused (a crowded store's share by address) leaves no use mark behind; the refusal is what answers.
      await inner.upsert(id, { ...kept, request }, ttl).catch(async (err: unknown) => {
        await uses.destroy(id).catch(() => undefined);
        throw err;
      });
      // A push whose client was deleted or disabled while it was served (found before, waiting on its jwks_uri): the
      // delete's scan of pushed requests, which its mark precedes, may have run before this write.
      const clientId = String(ctx?.oidc.client?.clientId);
      if (!(await Promise.all([deletions.find(clientId), suspensions.find(clientId)])).some(Boolean)) return;
      await inner.destroy(id);
      await uses.destroy(id);
      throw new errors.InvalidClientAuth('the client has been deleted or disabled');
    },
    consume: async (id) => {
      await inner.consume(id);
      const ctx = currentRequest();
      if (ctx) consumedBy.set(ctx, id);
    },
    find: async (id) => {
      const ctx = currentRequest();
      if (ctx?.oidc?.route !== ROUTE_NAMES.authorization) return inner.find(id);
      const payload = await inner.find(id);
      if (!payload) return undefined;
      if (pusherOf(payload) !== ctx.oidc.client?.clientId) throw new errors.InvalidRequestUri('request_uri was pushed by another client');
      if (!(await claim(uses, id))) return undefined; // oidc-provider: "request_uri is invalid, expired, or was already used"
      return payload;
    },
  };
}

/** The pushed request each request consumed (oidc-provider's `respond`, at `/authorize` or at the resume after it). */
const consumedBy = new WeakMap<object, string>();

/** Requests whose pushed request was given back: once only, or a second give-back could reopen it after a reload spent it. */
const givenBack = new WeakSet<Context>();

/**
 * Gives back what a request answered 5xx spent of a pushed request, with the store's atomic `unconsume`, at most once
 * per request: the use mark an `/authorize` took, and the pushed request itself when this request consumed it (a code
 * issued at once, or at the resume after her sign-in): nothing of that answer went on, and the reload it invites may
 * repeat the request (RFC 9126 4). A use refused as a replay loaded no pushed request, so it gives nothing back.
 * @returns `false` when there was nothing to give back (nothing of a pushed request spent, given back already).
 */
export async function giveBackPushedRequest(ctx: Context, store: Pick<SvcStore, 'unconsume'>): Promise<boolean> {
  const { oidc } = ctx as unknown as Partial<KoaContextWithOIDC>;
  const used = oidc?.route === ROUTE_NAMES.authorization ? oidc.entities?.PushedAuthorizationRequest?.jti : undefined;
  const consumed = consumedBy.get(ctx);
  if ((typeof used !== 'string' && consumed === undefined) || givenBack.has(ctx)) return false;
  givenBack.add(ctx);
  if (typeof used === 'string') await store.unconsume(PUSHED_REQUEST_USE_MODEL, used);
  if (consumed !== undefined) await store.unconsume(MODEL_NAMES.pushedAuthorizationRequest, consumed);
  return true;
}

/** True when the request carries a pushed request stored checked at `/par` (an unsecured object). */
function isCheckedPushedRequest(ctx: KoaContextWithOIDC): boolean {
  const pushed = ctx.oidc.entities[MODEL_NAMES.pushedAuthorizationRequest] as { request?: unknown } | undefined;
  if (!pushed || typeof pushed.request !== 'string') return false;
  try {
    return decodeProtectedHeader(pushed.request).alg === 'none';
  } catch {
    return false;
  }
}

/**
 * Runs the `claims` parameter check once per request: on a pushed request's stored form, when `/authorize` loads it
 * ({@link isCheckedPushedRequest}), only `again`: what may have changed since `/par` checked it (the registration).
 */
export function checkedOnce<A extends unknown[]>(assert: (ctx: KoaContextWithOIDC, ...rest: A) => Promise<void>, again: (ctx: KoaContextWithOIDC, ...rest: A) => void) {
  return async (ctx: KoaContextWithOIDC, ...rest: A): Promise<void> => {
    if (isCheckedPushedRequest(ctx)) again(ctx, ...rest);
    else await assert(ctx, ...rest);
  };
}

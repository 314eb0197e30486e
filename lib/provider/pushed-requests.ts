import { decodeJwt, decodeProtectedHeader, UnsecuredJWT } from 'jose';
import { errors, type Adapter, type AdapterPayload, type KoaContextWithOIDC } from 'oidc-provider';

import { claim } from '../registration/single-use-tokens.js';
import { currentRequest, MODEL_NAMES, PUSHED_REQUEST_TTL_SECONDS, ROUTE_NAMES } from '../seams.js';

/** oidc-provider's model of a pushed authorization request (RFC 9126). */
export const PUSHED_REQUEST_MODEL = MODEL_NAMES.pushedAuthorizationRequest;
/**
 * The single-use mark of a pushed request, written beside it with the same lifetime: the first
 * `/authorize` request that presents the `request_uri` consumes it atomically in the store.
 */
export const PUSHED_REQUEST_USE_MODEL = 'PushedAuthorizationRequestUse';

const epoch = (): number => Math.floor(Date.now() / 1000);

/**
 * The request object a pushed request is stored as: the request's parameters as they stand after
 * every check of `/par` (the `claims` parameter in its stored form, with requested values only as
 * keyed MACs; none of the ignored parameters such as `login_hint`; the content of a request object in place of the object), as an
 * unsecured JWT from the client to the issuer, as oidc-provider stores plain pushed requests.
 * The client's signed (and perhaps encrypted) request object itself is never stored: it holds the
 * raw `claims` request, values included (C5: a requested value is never stored).
 */
function checkedRequest(ctx: KoaContextWithOIDC, expiresIn: number): string {
  const client = ctx.oidc.client;
  const params = ctx.oidc.params;
  if (ctx.oidc.route !== ROUTE_NAMES.pushedAuthorizationRequest || !client || !params) {
    throw new TypeError('a pushed authorization request is stored only by the pushed authorization request endpoint');
  }
  const payload: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) if (value !== undefined) payload[name] = value;
  if (typeof payload.claims === 'string') payload.claims = JSON.parse(payload.claims) as unknown;
  payload.client_id = client.clientId;
  const now = epoch();
  return new UnsecuredJWT(payload).setIssuedAt(now).setNotBefore(now).setIssuer(client.clientId).setAudience(ctx.oidc.issuer).setExpirationTime(now + expiresIn).encode();
}

/** The client a stored pushed request belongs to (its `iss`), or undefined when unreadable. */
function ownerOf(payload: AdapterPayload): string | undefined {
  try {
    const iss = decodeJwt(String((payload as { request?: unknown }).request)).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What keeps our rules for pushed authorization requests (RFC 9126) on their adapter, beside the
 * adapter of their use marks (`uses`, {@link PUSHED_REQUEST_USE_MODEL}),
 * whatever path spelling reached `/par` or `/authorize` (they are decided by the route
 * oidc-provider resolved and by the store, never by the path):
 *
 * - **stored checked**: what `/par` stores is the request's parameters after every check
 *   ({@link checkedRequest}), never the client's request object; writing one outside the `/par`
 *   route fails;
 * - **single use**: a use mark is written beside each pushed request with the same lifetime (at
 *   most 60 s, oidc-provider's), and the first `/authorize` request that loads the `request_uri`
 *   consumes it atomically; every later one, concurrent ones included, gets `invalid_request_uri`;
 * - **bound to the client**: `/authorize` with another client's `client_id` gets
 *   `invalid_request_uri` without spending the mark.
 *
 * The rest of the flow (login, consent, `/authorize/{uid}`) reads the pushed request as
 * oidc-provider does, and oidc-provider consumes it when it issues the code.
 */
export function pushedRequests(inner: Adapter, uses: Adapter): Partial<Adapter> {
  return {
    upsert: async (id, payload, expiresIn) => {
      const ctx = currentRequest();
      if (!ctx) throw new TypeError('a pushed authorization request is stored only by the pushed authorization request endpoint');
      // oidc-provider always gives a pushed request a lifetime (60 s).
      const ttl = expiresIn ?? PUSHED_REQUEST_TTL_SECONDS;
      const request = checkedRequest(ctx, ttl);
      const now = epoch();
      await uses.upsert(id, { iat: now, exp: now + ttl }, ttl);
      await inner.upsert(id, { ...payload, request }, ttl);
    },
    find: async (id) => {
      const ctx = currentRequest();
      if (ctx?.oidc?.route !== ROUTE_NAMES.authorization) return inner.find(id);
      const payload = await inner.find(id);
      if (!payload) return undefined;
      if (ownerOf(payload) !== ctx.oidc.client?.clientId) throw new errors.InvalidRequestUri('request_uri was pushed by another client');
      if (!(await claim(uses, id))) return undefined; // oidc-provider: "request_uri is invalid, expired, or was already used"
      return payload;
    },
  };
}

/**
 * True when the request carries a pushed request that the provider stored after checking it at
 * `/par` (an unsecured object, see {@link pushedRequests}): its `claims` parameter is already
 * in its stored form and must not be checked (and rewritten) a second time.
 */
export function isCheckedPushedRequest(ctx: KoaContextWithOIDC): boolean {
  const pushed = ctx.oidc.entities[MODEL_NAMES.pushedAuthorizationRequest] as { request?: unknown } | undefined;
  if (!pushed || typeof pushed.request !== 'string') return false;
  try {
    return decodeProtectedHeader(pushed.request).alg === 'none';
  } catch {
    return false;
  }
}

/**
 * Wraps the `claims` parameter check so that it runs once per request: on the parameters of an
 * authorization request, of a request object and of a pushed request at `/par`, but not again on a
 * pushed request's stored form when `/authorize` loads it ({@link isCheckedPushedRequest}).
 */
export function checkedOnce<A extends unknown[]>(assert: (ctx: KoaContextWithOIDC, ...rest: A) => Promise<void>) {
  return async (ctx: KoaContextWithOIDC, ...rest: A): Promise<void> => {
    if (isCheckedPushedRequest(ctx)) return;
    await assert(ctx, ...rest);
  };
}

import { decodeProtectedHeader } from 'jose';
import type { Context } from 'koa';
import { errors, type Client, type KoaContextWithOIDC } from 'oidc-provider';

import { MODEL_NAMES } from '../seams.js';

/**
 * The authorization parameters svc-connect accepts and ignores (C3). Being ignored, they are
 * dropped before oidc-provider reads or stores anything, so none of them is ever stored in clear:
 * a `login_hint` is often the person's e-mail address, an `id_token_hint` may be an ID token
 * encrypted to the client, and the locales and display wishes say something about her too.
 */
export const IGNORED_AUTHORIZATION_PARAMETERS = ['id_token_hint', 'login_hint', 'display', 'ui_locales', 'claims_locales', 'acr_values'] as const;

/**
 * Longest lifetime a request object may claim: its `exp` at most this many seconds ahead. A signed
 * request object sent by value travels through the browser and is valid for anyone who holds it
 * until it expires, so it must expire, and soon.
 */
export const REQUEST_OBJECT_MAX_LIFETIME = 3600;

/** The JWE header of an encrypted request object, by request (the decrypted object replaces it). */
const envelopes = new WeakMap<object, { alg?: unknown; enc?: unknown } | 'malformed'>();

/**
 * Remembers the protected header of an encrypted `request` parameter (five parts) for this
 * request, before oidc-provider decrypts it and replaces the parameter with its content; the
 * request-object check compares it with the client's registered `request_object_encryption_alg`
 * and `_enc`. Called by the request normalizer for the query and for form bodies, on every path.
 */
export function recordRequestEnvelope(ctx: Context, request: unknown): void {
  if (typeof request !== 'string' || request.split('.').length !== 5) return;
  try {
    envelopes.set(ctx, decodeProtectedHeader(request));
  } catch {
    envelopes.set(ctx, 'malformed'); // oidc-provider refuses to decrypt it itself
  }
}

function checkEnvelope(ctx: object, client: Client): void {
  const envelope = envelopes.get(ctx);
  const alg = client.requestObjectEncryptionAlg;
  if (envelope === undefined || envelope === 'malformed' || alg === undefined) return;
  if (envelope.alg !== alg) {
    throw new errors.InvalidRequestObject(`the request object is encrypted with ${String(envelope.alg)}, but the client registered request_object_encryption_alg ${alg}`);
  }
  const enc = client.requestObjectEncryptionEnc;
  if (enc !== undefined && envelope.enc !== enc) {
    throw new errors.InvalidRequestObject(`the request object is encrypted with enc ${String(envelope.enc)}, but the client registered request_object_encryption_enc ${enc}`);
  }
}

function checkLifetime(claims: Record<string, unknown>): void {
  const { exp } = claims;
  if (exp === undefined) throw new errors.InvalidRequestObject(`the request object must carry exp (at most ${REQUEST_OBJECT_MAX_LIFETIME} seconds ahead)`);
  const ahead = Number(exp) - Math.floor(Date.now() / 1000);
  if (ahead > REQUEST_OBJECT_MAX_LIFETIME) {
    throw new errors.InvalidRequestObject(`the request object expires ${ahead} seconds from now; at most ${REQUEST_OBJECT_MAX_LIFETIME} are allowed`);
  }
}

/**
 * oidc-provider's `features.requestObjects.assertJwtClaimsAndHeader`: runs for every request
 * object, by value at `/authorize` or `/par` and pushed ones when `/authorize` loads them, after
 * oidc-provider has decrypted it and checked `iss` (the client), `aud` (the issuer), `exp`, `nbf`
 * and the signing algorithm, and before it verifies the signature and replaces the request's
 * parameters with the object's (so every later check sees the object's values).
 *
 * - A request object sent by the client must carry `exp`, at most
 *   {@link REQUEST_OBJECT_MAX_LIFETIME} seconds ahead.
 * - An encrypted one must use the client's registered `request_object_encryption_alg` and `_enc`,
 *   when it registered them.
 * - the ignored parameters inside the object (`login_hint`, `id_token_hint`, …; C3) are removed
 *   from the request's parameters, as in the query or a form body, so oidc-provider neither reads
 *   nor stores them (neither in an interaction nor in a pushed request).
 *
 * A pushed request loaded at `/authorize` was written by the provider from parameters already
 * checked at `/par` (`pushed-requests.ts`); only the hint rule applies to it again.
 */
export function assertRequestObject(ctx: KoaContextWithOIDC, claims: Record<string, unknown>, _header: unknown, client: Client): void {
  const pushed = MODEL_NAMES.pushedAuthorizationRequest in ctx.oidc.entities;
  if (!pushed) {
    checkLifetime(claims);
    checkEnvelope(ctx, client);
  }
  const params = ctx.oidc.params;
  if (params) for (const name of IGNORED_AUTHORIZATION_PARAMETERS) if (name in params) delete params[name];
}

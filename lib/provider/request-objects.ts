import { decodeProtectedHeader } from 'jose';
import type { Context } from 'koa';
import { errors, type Client, type KoaContextWithOIDC } from 'oidc-provider';

import { requestsNoClaims } from '../claims/budget.js';
import { MODEL_NAMES, PROVIDER_CLOCK_TOLERANCE_SECONDS, ROUTE_NAMES } from '../seams.js';

/**
 * The authorization parameters accepted and ignored (C3), dropped before oidc-provider reads or
 * stores anything: a `login_hint` is often the person's e-mail address, an `id_token_hint` may be
 * an ID token encrypted to the client, and locales and display wishes say something about her too.
 */
export const IGNORED_AUTHORIZATION_PARAMETERS = ['id_token_hint', 'login_hint', 'display', 'ui_locales', 'claims_locales', 'acr_values'] as const;

/** The parameters of authorization request `params` dropped before oidc-provider reads them: the ignored ones, and a `claims` that requests nothing. */
export function droppedParameters(params: Readonly<Record<string, unknown>>): string[] {
  const names: string[] = IGNORED_AUTHORIZATION_PARAMETERS.filter((name) => params[name] !== undefined);
  return requestsNoClaims(params.claims) ? [...names, 'claims'] : names;
}

/**
 * Longest lifetime a request object may claim, in seconds: one sent by value travels through the
 * browser and is valid for anyone who holds it until it expires.
 */
const REQUEST_OBJECT_MAX_LIFETIME = 3600;

/** The JWE header of an encrypted request object, by request (the decrypted object replaces it). */
const envelopes = new WeakMap<object, { alg?: unknown; enc?: unknown } | 'malformed'>();

/** Remembers the protected header of an encrypted `request` parameter, before oidc-provider decrypts it, for {@link assertRequestObject}. */
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

/** The `exp` of the request object pushed in a request, in whole seconds (rounded down), by request. */
const pushedExpiries = new WeakMap<object, number>();

/** When the request object pushed in `ctx` expires (epoch seconds, whole), or undefined when none was pushed. */
export function pushedRequestExpiry(ctx: object): number | undefined {
  return pushedExpiries.get(ctx);
}

function checkLifetime(claims: Record<string, unknown>, pushed: boolean): void {
  if (claims.exp === undefined) {
    throw new errors.InvalidRequestObject(`the request object must carry exp (at most ${REQUEST_OBJECT_MAX_LIFETIME} seconds ahead)`);
  }
  const ahead = Math.floor(Number(claims.exp)) - Math.floor(Date.now() / 1000);
  // A client whose clock runs ahead by as much as oidc-provider lets its nbf be may still date the whole hour from it.
  if (ahead > REQUEST_OBJECT_MAX_LIFETIME + PROVIDER_CLOCK_TOLERANCE_SECONDS) {
    throw new errors.InvalidRequestObject(`the request object expires ${ahead} seconds from now; at most ${REQUEST_OBJECT_MAX_LIFETIME} are allowed`);
  }
  // oidc-provider's clock tolerance lets an object a few seconds past its exp through; pushed, it would be stored
  // with a lifetime of zero or less, a request_uri dead on arrival (RFC 9126: expires_in is positive).
  if (pushed && !(ahead > 0)) throw new errors.InvalidRequestObject('the request object has expired (its exp is not in the future)');
}

/**
 * oidc-provider's `assertJwtClaimsAndHeader`, run after its own checks: a client's request object must
 * carry `exp` at most {@link REQUEST_OBJECT_MAX_LIFETIME} seconds ahead (and {@link PROVIDER_CLOCK_TOLERANCE_SECONDS} for
 * a client's clock running ahead) and use its registered encryption;
 * the ignored parameters inside, and a `claims` that requests nothing, are dropped (C3, {@link droppedParameters}). A pushed request loaded at `/authorize` was checked at
 * `/par`: only the drop applies again.
 */
export function assertRequestObject(ctx: KoaContextWithOIDC, claims: Record<string, unknown>, _header: unknown, client: Client): void {
  if (!(MODEL_NAMES.pushedAuthorizationRequest in ctx.oidc.entities)) {
    const pushed = ctx.oidc.route === ROUTE_NAMES.pushedAuthorizationRequest;
    checkLifetime(claims, pushed);
    if (pushed) pushedExpiries.set(ctx, Math.floor(Number(claims.exp)));
    checkEnvelope(ctx, client);
  }
  const params = ctx.oidc.params;
  // A deleted key is not copied from the object into the request's parameters.
  if (params) for (const name of droppedParameters(claims)) delete params[name];
}

import type { JWK } from 'jose';
import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { ROUTE_NAMES } from '../seams.js';

/**
 * `provider.use` middleware: the JWKS answer leaves out the keys whose kids are `unpublished` (see `unpublishedKids`),
 * and lists those whose kids are `signingOnly` with `use: "sig"` (see `signingOnlyKids`).
 */
export function publishedKeysOnly(unpublished: readonly string[], signingOnly: readonly string[] = []): Middleware {
  const hidden = new Set(unpublished);
  const verifyOnly = new Set(signingOnly);
  return async (ctx, next) => {
    await next();
    const body = ctx.body as { keys?: unknown } | undefined;
    if ((ctx as KoaContextWithOIDC).oidc?.route !== ROUTE_NAMES.jwks || !Array.isArray(body?.keys)) return;
    // A new array of new objects on oidc-provider's answer object: the provider's own list, served again next time, stays whole.
    body.keys = (body.keys as JWK[]).filter((k) => !hidden.has(String(k.kid))).map((k) => (verifyOnly.has(String(k.kid)) ? { ...k, use: 'sig' } : k));
  };
}

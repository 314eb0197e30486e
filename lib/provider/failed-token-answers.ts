import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { ROUTE_NAMES } from '../seams.js';

/**
 * `provider.use` middleware: a token answer other than a success leaves no token in the store. oidc-provider stores
 * the access token before it builds the ID token, so a request that failed there (no key of the client fits its
 * encryption, say) kept a token nobody was given until it expired.
 */
export function dropTokensOfFailedAnswers(): Middleware {
  return async (ctx, next) => {
    await next();
    const { oidc } = ctx as KoaContextWithOIDC;
    if (oidc?.route !== ROUTE_NAMES.token || ctx.status === 200) return;
    const { AccessToken, RefreshToken, ClientCredentials } = oidc.entities;
    for (const token of [AccessToken, RefreshToken, ClientCredentials]) if (token) await token.destroy();
  };
}

import type { Context, Next } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { ROUTE_NAMES } from '../seams.js';

/**
 * `provider.use` middleware for http base URLs: browsers refuse `SameSite=None` cookies without `Secure`,
 * so they go out as `SameSite=Lax` (a cross-site form POST to `/authorize` or `/logout` then carries no session).
 * A POST to `/logout` that carried no session is answered by a redirect to the same request as a GET, which a
 * browser sends with her Lax session, so she is asked; ended there, the fresh session's cookie replaced hers,
 * signing her out unasked and leaving her session, grants and tokens in the store. The GET names the client the hint
 * named instead of the `id_token_hint` (decrypted by then when it came encrypted) and drops `logout_hint`: what the
 * relying party posted in a body does not go into a URL, her history and the access logs in front of the provider.
 * It drops `ui_locales` too (no page reads it): unbounded, it made a Location longer than any server reads.
 */
export function laxCookiesOnHttp(): (ctx: Context, next: Next) => Promise<void> {
  return async (ctx, next) => {
    await next();
    const { oidc } = ctx as KoaContextWithOIDC;
    if (oidc?.route === ROUTE_NAMES.endSession && ctx.method === 'POST' && ctx.status === 200 && !ctx.cookies.get(oidc.provider.cookieName('session'))) {
      const named = { ...oidc.params, id_token_hint: undefined, logout_hint: undefined, ui_locales: undefined, client_id: oidc.client?.clientId };
      const query = new URLSearchParams(Object.entries(named).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
      ctx.remove('Set-Cookie');
      ctx.status = 303;
      ctx.redirect(`${oidc.urlFor(ROUTE_NAMES.endSession)}${query.size ? `?${query}` : ''}`);
      return;
    }
    const cookies = ctx.response.headers['set-cookie'];
    if (!Array.isArray(cookies) || !cookies.some((c) => /;\s*samesite=none/i.test(c))) return;
    ctx.set('Set-Cookie', cookies.map((c) => c.replace(/;\s*samesite=none/gi, '; samesite=lax')));
  };
}

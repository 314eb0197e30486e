import type { Context, Next } from 'koa';

/**
 * `provider.use` middleware for http base URLs (local development): oidc-provider serves POST at
 * `/authorize` and `/logout` only with a `SameSite=None` session cookie, which browsers refuse
 * without `Secure`, and `Secure` needs https. On http the cookies it sets are therefore sent as
 * `SameSite=Lax` instead: POST works, and a cross-site form POST simply carries no session (the
 * person signs in again). https deployments keep `SameSite=None; Secure` (docs/spec-decisions.md).
 */
export function laxCookiesOnHttp(): (ctx: Context, next: Next) => Promise<void> {
  return async (ctx, next) => {
    await next();
    const cookies = ctx.response.headers['set-cookie'];
    if (!Array.isArray(cookies) || !cookies.some((c) => /;\s*samesite=none/i.test(c))) return;
    ctx.set('Set-Cookie', cookies.map((c) => c.replace(/;\s*samesite=none/gi, '; samesite=lax')));
  };
}

import type { Context, Next } from 'koa';

/**
 * `provider.use` middleware for http base URLs: oidc-provider's `SameSite=None` cookies (needed for
 * POST at `/authorize` and `/logout`) are refused by browsers without `Secure`, which needs https,
 * so on http they go out as `SameSite=Lax` (a cross-site form POST then carries no session).
 */
export function laxCookiesOnHttp(): (ctx: Context, next: Next) => Promise<void> {
  return async (ctx, next) => {
    await next();
    const cookies = ctx.response.headers['set-cookie'];
    if (!Array.isArray(cookies) || !cookies.some((c) => /;\s*samesite=none/i.test(c))) return;
    ctx.set('Set-Cookie', cookies.map((c) => c.replace(/;\s*samesite=none/gi, '; samesite=lax')));
  };
}

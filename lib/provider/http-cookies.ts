import type { Context, Next } from 'koa';

/**
 * `provider.use` middleware for http base URLs: browsers refuse `SameSite=None` cookies without `Secure`,
 * so they go out as `SameSite=Lax` (a cross-site form POST to `/authorize` or `/logout` then carries no session).
 */
export function laxCookiesOnHttp(): (ctx: Context, next: Next) => Promise<void> {
  return async (ctx, next) => {
    await next();
    const cookies = ctx.response.headers['set-cookie'];
    if (!Array.isArray(cookies) || !cookies.some((c) => /;\s*samesite=none/i.test(c))) return;
    ctx.set('Set-Cookie', cookies.map((c) => c.replace(/;\s*samesite=none/gi, '; samesite=lax')));
  };
}

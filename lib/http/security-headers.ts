import type { Middleware } from 'koa';

/** The CSP for responses that set none of their own (JSON, oidc-provider's own pages). */
export const DEFAULT_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * Security headers on every response: no sniffing, no framing, no referrer, a restrictive default
 * CSP (pages of ours replace it with a nonce-based one), and HSTS when served over https.
 */
export function securityHeaders(): Middleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
    ctx.set('Content-Security-Policy', DEFAULT_CSP);
    if (ctx.secure) ctx.set('Strict-Transport-Security', 'max-age=31536000');
    await next();
  };
}

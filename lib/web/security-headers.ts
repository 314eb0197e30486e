import type { Context, Middleware } from 'koa';

/** The CSP for responses that set none of their own (JSON, oidc-provider's own pages). */
const DEFAULT_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'";

const HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // Nothing to other origins; our own forms post their Origin, which browsers without Fetch Metadata are judged by.
  'Referrer-Policy': 'same-origin',
  'Content-Security-Policy': DEFAULT_CSP,
};
const SECURE_HEADERS = { ...HEADERS, 'Strict-Transport-Security': 'max-age=31536000' };
const OPENER_POLICY = 'Cross-Origin-Opener-Policy';

/** Security headers on every response: a restrictive default CSP (our pages set their own) and HSTS over https; no COOP. */
export function securityHeaders(): Middleware {
  // Not async, as every pass-through layer of ours: no promise of its own on every request.
  return (ctx, next) => {
    setSecurityHeaders(ctx);
    return next();
  };
}

/**
 * The step of {@link securityHeaders}: sets the headers on `ctx`'s response, and takes off a
 * `Cross-Origin-Opener-Policy` the host app's middleware set before (helmet's `same-origin`): a relying party that signs
 * her in within a popup hears of the result through `window.opener`, which any page of ours carrying it would sever.
 */
export function setSecurityHeaders(ctx: Context): void {
  const headers = ctx.secure ? SECURE_HEADERS : HEADERS;
  for (const name in headers) ctx.res.setHeader(name, headers[name as keyof typeof headers]);
  ctx.res.removeHeader(OPENER_POLICY);
}

/**
 * `inner` (the front door) with the `Cross-Origin-Opener-Policy` the host app's middleware set before it, which
 * {@link setSecurityHeaders} takes off, put back for the host's own routes after it (a request none of ours answered).
 */
export function hostOpenerPolicyKept(inner: Middleware): Middleware {
  return (ctx, next) => {
    const hostPolicy = ctx.res.getHeader(OPENER_POLICY);
    if (hostPolicy === undefined) return inner(ctx, next) as Promise<void>;
    return inner(ctx, () => {
      if (!ctx.res.headersSent) ctx.res.setHeader(OPENER_POLICY, hostPolicy);
      return next() as Promise<void>;
    }) as Promise<void>;
  };
}

/**
 * `provider.use` middleware: an answer that must not be stored (`Cache-Control: no-store`) also carries
 * `Pragma: no-cache`, which RFC 6749 5.1 requires beside it on every answer holding tokens or credentials.
 */
export function noCachePragma(): Middleware {
  return async (ctx, next) => {
    await next();
    if (/\bno-store\b/i.test(ctx.response.get('Cache-Control'))) ctx.set('Pragma', 'no-cache');
  };
}

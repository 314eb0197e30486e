import type { Middleware } from 'koa';

/**
 * Pins every request to the public origin of `svc.base-url`: `Host` set to its host, a client-sent
 * `X-Forwarded-Host` dropped, and behind a trusted proxy `X-Forwarded-Proto` set to its scheme.
 * oidc-provider builds its URLs from the request: a `Host: evil.example` would otherwise reach
 * discovery and registration responses.
 */
export function pinPublicOrigin(baseUrl: string, proxy: boolean): Middleware {
  const base = new URL(baseUrl);
  const scheme = base.protocol.slice(0, -1);
  return (ctx, next) => {
    const headers = ctx.req.headers;
    headers.host = base.host;
    delete headers['x-forwarded-host'];
    if (proxy) headers['x-forwarded-proto'] = scheme;
    return next();
  };
}

import type { Middleware } from 'koa';

/**
 * Pins every request to the public origin of `svc.base-url` before anything reads it: `Host` is
 * set to the base URL's host and a client-sent `X-Forwarded-Host` is dropped; behind a trusted proxy
 * (`svc.proxy=true`) `X-Forwarded-Proto` is set to the base URL's scheme. oidc-provider builds its
 * endpoint URLs (discovery, `registration_client_uri`, redirects to our pages) from the request, so
 * without this a `Host: evil.example` would put the attacker's host into discovery and into a
 * registration response (C2: discovery is authoritative).
 */
export function pinPublicOrigin(baseUrl: string, proxy: boolean): Middleware {
  const base = new URL(baseUrl);
  const scheme = base.protocol.slice(0, -1);
  // Not async: a pass-through layer on every request should not add a promise of its own.
  return (ctx, next) => {
    const headers = ctx.req.headers;
    headers.host = base.host;
    delete headers['x-forwarded-host'];
    if (proxy) headers['x-forwarded-proto'] = scheme;
    return next();
  };
}

import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

const quoted = (value: string): string => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/**
 * `provider.use` middleware: a 401 `invalid_client` carries a `Basic` challenge, as oidc-provider gives one to a client
 * that used the Authorization header, also when the client authenticated in the body or not at all. RFC 6749 5.2 answers
 * 401 "to indicate which HTTP authentication schemes are supported", and HTTP has no 401 without a challenge (RFC 9110
 * 15.5.2).
 */
export function clientAuthChallenge(): Middleware {
  return async (ctx, next) => {
    await next();
    const body = ctx.body as { error?: unknown; error_description?: unknown } | undefined;
    const issuer = (ctx as KoaContextWithOIDC).oidc?.issuer;
    if (ctx.status !== 401 || body?.error !== 'invalid_client' || ctx.response.get('WWW-Authenticate') || !issuer) return;
    const description = typeof body.error_description === 'string' ? `, error_description=${quoted(body.error_description)}` : '';
    ctx.set('WWW-Authenticate', `Basic realm=${quoted(issuer)}, error="invalid_client"${description}`);
  };
}

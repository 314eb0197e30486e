import { createHash } from 'node:crypto';

import type { Context, Next } from 'koa';
import type { Adapter, ClientMetadata } from 'oidc-provider';

import { decorateAdapter } from '../../adapters/store.js';
import { readBodyText } from '../http/form-body.js';

const PREFIX = 'sha256:';
const FORM_LIMIT = 56 * 1024;

/**
 * The form a client secret is kept in: `sha256:` and the base64url SHA-256 of the secret. Client
 * secrets are random 512-bit values (oidc-provider's `secretFactory`), so a plain hash is enough to
 * make a store dump useless for authentication.
 */
export function hashClientSecret(secret: string): string {
  return `${PREFIX}${createHash('sha256').update(secret, 'utf8').digest('base64url')}`;
}

/** True for a value produced by {@link hashClientSecret}. */
export function isHashedClientSecret(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

/**
 * Wraps an adapter factory so that `Client` records are stored with a hashed `client_secret`
 * (issue 10: no secret in any store record). Other models pass through untouched.
 */
export function withHashedClientSecrets(adapter: (model: string) => Adapter): (model: string) => Adapter {
  return (model) => {
    const inner = adapter(model);
    if (model !== 'Client') return inner;
    return decorateAdapter(inner, {
      upsert: (id, payload, expiresIn) => {
        const secret = payload.client_secret;
        const stored = typeof secret === 'string' && !isHashedClientSecret(secret) ? { ...payload, client_secret: hashClientSecret(secret) } : payload;
        return inner.upsert(id, stored, expiresIn);
      },
    });
  };
}

/** Statically provisioned clients with their secrets in hashed form (they are compared hashed). */
export function withHashedStaticSecrets(clients: readonly ClientMetadata[]): ClientMetadata[] {
  return clients.map((c) => (typeof c.client_secret === 'string' && !isHashedClientSecret(c.client_secret) ? { ...c, client_secret: hashClientSecret(c.client_secret) } : c));
}

/**
 * `provider.use` middleware for client authentication at `tokenPath`: the presented client secret
 * (HTTP Basic or `client_secret` in the form) is replaced by its hash before oidc-provider compares
 * it (in constant time) with the stored hash. A stolen hash does not authenticate: it would be hashed
 * again.
 */
export function hashPresentedClientSecrets(tokenPath: string): (ctx: Context, next: Next) => Promise<void> {
  const rewrite = async (ctx: Context, next: Next): Promise<void> => {
    const authorization = ctx.get('authorization');
    const basic = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(authorization);
    if (basic?.[1]) {
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon >= 0) {
        let secret: string;
        try {
          secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, '%20'));
        } catch {
          return next(); // malformed: oidc-provider answers invalid_client/invalid_request itself
        }
        const rewritten = `${decoded.slice(0, colon)}:${encodeURIComponent(hashClientSecret(secret))}`;
        ctx.req.headers.authorization = `Basic ${Buffer.from(rewritten, 'utf8').toString('base64')}`;
      }
    } else if (ctx.is('application/x-www-form-urlencoded')) {
      const text = await readBodyText(ctx, FORM_LIMIT);
      if (text === undefined) {
        ctx.status = 413;
        ctx.set('Cache-Control', 'no-store');
        ctx.body = { error: 'invalid_request', error_description: 'request body too large' };
        return;
      }
      // Repeated parameters stay repeated, so oidc-provider still refuses them.
      const body: Record<string, string | string[]> = {};
      for (const [key, value] of new URLSearchParams(text)) {
        const v = key === 'client_secret' ? hashClientSecret(value) : value;
        const seen = body[key];
        body[key] = seen === undefined ? v : [...(Array.isArray(seen) ? seen : [seen]), v];
      }
      // oidc-provider reads an already parsed body from `ctx.request.body` (Koa's type lacks it).
      (ctx.request as { body?: unknown }).body = body;
    }
    await next();
  };
  // Every other provider request passes straight through, without a layer of its own.
  return (ctx, next) => (ctx.method === 'POST' && ctx.path === tokenPath ? rewrite(ctx, next) : next());
}

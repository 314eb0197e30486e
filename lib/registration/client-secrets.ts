import { createHash } from 'node:crypto';

import type { Adapter, ClientMetadata } from 'oidc-provider';

import { decorateAdapter } from '../../adapters/store.js';

const PREFIX = 'sha256:';

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

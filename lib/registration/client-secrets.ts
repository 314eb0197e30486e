import { createHash } from 'node:crypto';

import type { Adapter, ClientMetadata } from 'oidc-provider';

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
 * What keeps `Client` records with a hashed `client_secret` (issue 10: no secret in any store
 * record).
 */
export function hashedClientSecrets(inner: Adapter): Partial<Adapter> {
  return {
    upsert: (id, payload, expiresIn) => {
      const secret = payload.client_secret;
      const stored = typeof secret === 'string' && !isHashedClientSecret(secret) ? { ...payload, client_secret: hashClientSecret(secret) } : payload;
      return inner.upsert(id, stored, expiresIn);
    },
  };
}

/** Statically provisioned clients with their secrets in hashed form (they are compared hashed). */
export function withHashedStaticSecrets(clients: readonly ClientMetadata[]): ClientMetadata[] {
  return clients.map((c) => (typeof c.client_secret === 'string' && !isHashedClientSecret(c.client_secret) ? { ...c, client_secret: hashClientSecret(c.client_secret) } : c));
}

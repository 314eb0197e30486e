import { createHash } from 'node:crypto';

import type { Adapter, ClientMetadata } from 'oidc-provider';

const PREFIX = 'sha256:';

/** `sha256:` and the base64url SHA-256: secrets are random 512-bit values, so a store dump cannot authenticate. */
export function hashClientSecret(secret: string): string {
  return `${PREFIX}${createHash('sha256').update(secret, 'utf8').digest('base64url')}`;
}

/** True for a value produced by {@link hashClientSecret}. */
export function isHashedClientSecret(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

/** `metadata` with its `client_secret` hashed (once). */
function hashedSecret<T extends { client_secret?: unknown }>(metadata: T): T {
  const secret = metadata.client_secret;
  return typeof secret === 'string' && !isHashedClientSecret(secret) ? { ...metadata, client_secret: hashClientSecret(secret) } : metadata;
}

/** What keeps `Client` records with a hashed `client_secret`: no secret in any store record. */
export function hashedClientSecrets(inner: Adapter): Partial<Adapter> {
  return { upsert: (id, payload, expiresIn) => inner.upsert(id, hashedSecret(payload), expiresIn) };
}

/** Statically provisioned clients with their secrets in hashed form (they are compared hashed). */
export function withHashedStaticSecrets(clients: readonly ClientMetadata[]): ClientMetadata[] {
  return clients.map(hashedSecret);
}

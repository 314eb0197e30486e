import type { Adapter } from 'oidc-provider';

/**
 * Claims a single-use record atomically in the store (the adapter's `consume`): of concurrent
 * claimers exactly one gets `true`. Unknown, expired and already claimed records give `false`.
 */
export async function claim(adapter: Adapter, id: string): Promise<boolean> {
  try {
    await adapter.consume(id);
    return true;
  } catch (err) {
    if ((err as { error?: string }).error === 'invalid_grant') return false;
    throw err;
  }
}

/**
 * Gives a claimed record back (its request failed, so the token stays usable): rewrites it without
 * the consumed mark for its remaining lifetime.
 */
export async function release(adapter: Adapter, id: string): Promise<void> {
  const payload = await adapter.find(id);
  if (!payload) return;
  delete payload.consumed;
  const remaining = typeof payload.exp === 'number' ? payload.exp - Math.floor(Date.now() / 1000) : undefined;
  if (remaining !== undefined && remaining <= 0) return;
  await adapter.upsert(id, payload, remaining);
}

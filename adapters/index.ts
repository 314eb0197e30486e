import { SettingsError } from '../lib/errors.js';
import type { Settings } from '../lib/settings/types.js';
import { createMemoryStore } from './memory.js';
import type { SvcStore } from './store.js';

export { createMemoryStore, type MemoryStoreOptions } from './memory.js';
export { GRANTABLE_MODELS, type SvcStore } from './store.js';

/**
 * The store the settings ask for: Redis (standalone or Cluster) when configured, otherwise the
 * embedded in-memory store.
 */
export function createStore(settings: Settings): SvcStore {
  if (settings.redis.url || settings.redis.clusterNodes) {
    throw new SettingsError('svc.redis.url / svc.redis.cluster-nodes: the Redis store is not part of this build yet', ['svc.redis.url']);
  }
  return createMemoryStore();
}

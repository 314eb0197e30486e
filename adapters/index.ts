import type { Logger } from '../lib/logger.js';
import type { Settings } from '../lib/settings/types.js';
import { createMemoryStore } from './memory.js';
import { createRedisStore } from './redis.js';
import type { SvcStore } from './store.js';

export { createMemoryStore, type MemoryStoreOptions } from './memory.js';
export { createRedisStore, type RedisStoreOptions } from './redis.js';
export type { SvcStore } from './store.js';

/**
 * The store the settings ask for: Redis Cluster when `svc.redis.cluster-nodes` is set, standalone
 * Redis when `svc.redis.url` is set, otherwise the embedded in-memory store.
 */
export function createStore(settings: Settings, logger?: Logger): SvcStore {
  if (settings.redis.clusterNodes || settings.redis.url) {
    return createRedisStore({
      url: settings.redis.url,
      clusterNodes: settings.redis.clusterNodes,
      keyPrefix: settings.redis.keyPrefix,
      operationTimeoutMs: settings.redis.operationTimeoutMs,
      logger,
    });
  }
  return createMemoryStore();
}

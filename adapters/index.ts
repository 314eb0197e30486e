import type { Logger } from '../lib/logger.js';
import { createMemoryStore, type MemoryStoreOptions } from './memory.js';
import { createRedisStore, type RedisStoreOptions } from './redis.js';
import type { SvcStore } from './store.js';

export { createMemoryStore, createRedisStore, type MemoryStoreOptions, type RedisStoreOptions, type SvcStore };

/**
 * The store `svc.redis.*` asks for: Redis Cluster when `clusterNodes` is set, standalone Redis when
 * `url` is set, otherwise the embedded in-memory store (with `memory`, e.g. its `maxBytes`).
 */
export function createStore(redis: Omit<RedisStoreOptions, 'logger'>, logger?: Logger, memory: Omit<MemoryStoreOptions, 'logger'> = {}): SvcStore {
  // The whole Settings has no `url` of its own: passed by mistake, it would quietly give a process-local store.
  if ('redis' in redis) throw new TypeError('createStore: pass settings.redis, the store\'s slice, not the whole settings');
  return redis.clusterNodes || redis.url ? createRedisStore({ ...redis, logger }) : createMemoryStore({ ...memory, logger });
}

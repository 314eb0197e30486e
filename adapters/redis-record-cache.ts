import { Redis, type Cluster, type RedisOptions } from 'ioredis';

import { describeFailure, type Logger } from '../lib/logger.js';

interface RecordCacheOptions {
  /** The store's client (standalone): the subscriber is a duplicate of it. */
  client: Redis | Cluster;
  /** Cluster seed nodes: the subscriber connects to the first (a PUBLISH reaches every node's subscribers). */
  clusterNodes?: { host: string; port: number }[];
  connection: RedisOptions;
  channel: string;
  logger: Logger;
  /** The store's host and port, for logs (never credentials). */
  address?: { host?: string; port?: number };
}

/** A cached raw record: its stored string, or `null` for a record known not to exist. */
type Cached = string | null;

/** A cached record and when it was filled (epoch ms). */
type Entry = { value: Cached; at: number };

/** The record caches of this process by invalidation channel: how each drops a key. */
const byChannel = new Map<string, Set<(key: string) => void>>();

/**
 * Drops `key` from every record cache of this process on `channel`, as their invalidation message will. Called once a
 * write is answered, every store of this process reads the record from Redis from then on (a read begun earlier
 * fills nothing), whatever the delay of its own subscription: Redis may answer the writer before it writes to the
 * subscribers, and another write's message for the same key may arrive first.
 */
export function dropInProcess(channel: string, key: string): void {
  for (const drop of byChannel.get(channel) ?? []) drop(key);
}

/**
 * An in-process cache of records read on nearly every request and written rarely (clients and
 * their disabling and deletion marks), kept consistent across processes by pub/sub: every write of a cached
 * record publishes its key in the same MULTI, and every process drops that key on the message.
 *
 * While the subscription is down (start, reconnect, failover) it serves nothing, so a missed
 * message cannot leave a stale entry. A read that began before an invalidation does not fill it
 * ({@link RecordCache.begin}). Entries live at most a minute in any case, at most 10 000 per model (a name is
 * `Model:ref`), so the revocation marks of many sessions evict no client.
 */
export interface RecordCache {
  /** The cached raw record of `key`, or `undefined` when not cached. */
  get(key: string): Cached | undefined;
  /** A ticket to take before reading `key` from Redis; {@link RecordCache.fill} refuses a stale one. */
  begin(): number;
  /** Caches what a read that began with `ticket` found. */
  fill(key: string, ticket: number, value: Cached): void;
  /** Drops `key` here (the store also publishes it to the other processes). */
  drop(key: string): void;
  /** Whether the cache serves (its subscription is up). */
  readonly active: boolean;
  close(): void;
}

/** The pub/sub-invalidated record cache of the Redis store. */
export function createRecordCache(options: RecordCacheOptions): RecordCache {
  const maxAge = 60_000;
  const maxEntries = 10_000;
  const models = new Map<string, Map<string, Entry>>();
  const shelf = (key: string): Map<string, Entry> => {
    const model = key.slice(0, key.indexOf(':'));
    const found = models.get(model) ?? new Map<string, Entry>();
    models.set(model, found);
    return found;
  };
  // Bumped by every invalidation and loss of the subscription: an older read ticket does not fill the cache.
  let epoch = 0;
  let active = false;
  let closed = false;

  const drop = (key?: string): void => {
    if (key === undefined) models.clear();
    else shelf(key).delete(key);
    epoch += 1;
  };
  const dropKey = (key: string): void => drop(key);
  const peers = byChannel.get(options.channel) ?? new Set();
  byChannel.set(options.channel, peers.add(dropKey));
  /** The subscriber's last fault: the cause logged when the cache pauses. */
  let fault: unknown;
  const deactivate = (cause: unknown = fault): void => {
    if (active) options.logger.warn('store_cache_paused', { store: 'redis', reason: 'invalidation channel down', ...(cause ? describeFailure(cause, seed ?? options.address) : {}) });
    active = false;
    drop();
  };
  const seed = options.clusterNodes?.[0];
  const subscriber = seed
    ? new Redis({ ...options.connection, host: seed.host, port: seed.port, autoResubscribe: false, enableOfflineQueue: false, lazyConnect: true })
    : (options.client as Redis).duplicate({ autoResubscribe: false, enableOfflineQueue: false, lazyConnect: true });
  subscriber.on('message', (channel: string, key: string) => {
    if (channel === options.channel) drop(key);
  });
  // Connection faults are logged by the store's own client; the cache pauses, saying why.
  subscriber.on('error', (err: unknown) => {
    fault = err;
  });
  subscriber.on('close', deactivate);
  subscriber.on('ready', () => {
    subscriber.subscribe(options.channel).then(
      () => {
        if (closed) return;
        drop();
        active = true;
      },
      (err: unknown) => deactivate(err),
    );
  });
  // ioredis retries a failed connection; until it is subscribed the cache serves nothing.
  subscriber.connect().catch((err: unknown) => deactivate(err));

  return {
    get(key) {
      const entry = active ? shelf(key).get(key) : undefined;
      if (entry && Date.now() - entry.at <= maxAge) return entry.value;
      if (entry) shelf(key).delete(key);
      return undefined;
    },
    begin: () => epoch,
    fill(key, ticket, value) {
      if (!active || ticket !== epoch) return;
      const entries = shelf(key);
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(key, { value, at: Date.now() });
    },
    drop,
    get active() {
      return active;
    },
    close() {
      closed = true;
      active = false;
      models.clear();
      peers.delete(dropKey);
      if (peers.size === 0 && byChannel.get(options.channel) === peers) byChannel.delete(options.channel);
      if (subscriber.status === 'ready') subscriber.quit().catch(() => subscriber.disconnect());
      else subscriber.disconnect();
    },
  };
}

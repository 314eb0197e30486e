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

/** This process's record caches on one invalidation channel, and the writers waiting until one of them hears a key. */
interface Listeners {
  caches: Set<{ drop(key: string): void; readonly active: boolean }>;
  waiting: Map<string, Set<() => void>>;
}

const byChannel = new Map<string, Listeners>();
const listenersOf = (channel: string): Listeners => {
  const found = byChannel.get(channel) ?? { caches: new Set(), waiting: new Map() };
  byChannel.set(channel, found);
  return found;
};
const release = (channel: string, key?: string): void => {
  const listeners = byChannel.get(channel);
  for (const done of [...(key === undefined ? [...(listeners?.waiting.values() ?? [])].flatMap((w) => [...w]) : (listeners?.waiting.get(key) ?? []))]) done();
};

/**
 * Starts listening, before a write publishes the invalidation of `key` on `channel`, for the moment this process
 * hears it: a message one record cache hears drops the key in every cache of this process on the channel, so a write
 * answered after `heard` is seen by every store of this process, whichever wrote it (Redis may answer the writer
 * before it writes to the subscribers). `heard` resolves at once when no cache here serves, and after `timeoutMs` at
 * the latest; `cancel` stops listening.
 */
export function hearInvalidation(channel: string, key: string, timeoutMs: number): { heard: Promise<void>; cancel(): void } {
  const listeners = listenersOf(channel);
  let done = (): void => undefined;
  const heard = new Promise<void>((resolve) => {
    const timer = setTimeout(() => done(), timeoutMs);
    done = () => {
      clearTimeout(timer);
      const waiting = listeners.waiting.get(key);
      waiting?.delete(done);
      if (waiting?.size === 0) listeners.waiting.delete(key);
      resolve();
    };
  });
  if ([...listeners.caches].some((cache) => cache.active)) listeners.waiting.set(key, (listeners.waiting.get(key) ?? new Set()).add(done));
  else done();
  return { heard, cancel: () => done() };
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
  const listeners = listenersOf(options.channel);
  const peer = { drop, get active() { return active; } };
  listeners.caches.add(peer);
  /** The subscriber's last fault: the cause logged when the cache pauses. */
  let fault: unknown;
  const deactivate = (cause: unknown = fault): void => {
    if (active) options.logger.warn('store_cache_paused', { store: 'redis', reason: 'invalidation channel down', ...(cause ? describeFailure(cause, seed ?? options.address) : {}) });
    active = false;
    drop();
    if (![...listeners.caches].some((cache) => cache.active)) release(options.channel);
  };
  const seed = options.clusterNodes?.[0];
  const subscriber = seed
    ? new Redis({ ...options.connection, host: seed.host, port: seed.port, autoResubscribe: false, enableOfflineQueue: false, lazyConnect: true })
    : (options.client as Redis).duplicate({ autoResubscribe: false, enableOfflineQueue: false, lazyConnect: true });
  subscriber.on('message', (channel: string, key: string) => {
    if (channel !== options.channel) return;
    for (const cache of listeners.caches) cache.drop(key);
    release(channel, key);
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
      listeners.caches.delete(peer);
      if (![...listeners.caches].some((cache) => cache.active)) release(options.channel);
      if (listeners.caches.size === 0) byChannel.delete(options.channel);
      if (subscriber.status === 'ready') subscriber.quit().catch(() => subscriber.disconnect());
      else subscriber.disconnect();
    },
  };
}

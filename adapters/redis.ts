import { createHash } from 'node:crypto';

import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';

import { AlreadyConsumedError, StoreUnavailableError } from '../lib/errors.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { ATTEMPT_GIVE_BACK, ATTEMPT_TAKE, CONSUME, INDEX_ADD, INDEX_TAKE, UPSERT } from './redis-scripts.js';
import { GRANTABLE_MODELS, STRIKE_MEMORY_SECONDS, type AttemptCounter, type SvcStore } from './store.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** Standalone Redis URL (`redis://` or `rediss://`). */
  url?: string;
  /** Redis Cluster seed nodes; takes precedence over `url`. */
  clusterNodes?: { host: string; port: number }[];
  /**
   * Prefix of every key.
   * @default "svc:"
   */
  keyPrefix?: string;
  /**
   * Longest wait for one store operation before it fails with 503 `server_error`, in ms.
   * @default 800
   */
  operationTimeoutMs?: number;
  /** Where connection faults are logged (state changes only, never payloads). */
  logger?: Logger;
}

interface ScriptCommands {
  svcUpsert(key: string, payload: string, jtiFlag: string, ttl: number, consumed: string): Promise<number>;
  svcConsume(key: string, now: number): Promise<number>;
  svcIndexAdd(key: string, member: string, ttl: number): Promise<number>;
  svcIndexTake(key: string): Promise<string[]>;
  svcAttemptTake(key: string, limit: number, windowMs: number, baseMs: number, maxMs: number, memoryMs: number): Promise<number>;
  svcAttemptGiveBack(key: string): Promise<number>;
}

type Client = (Redis | Cluster) & ScriptCommands;

/** The id part of a key: a SHA-256 of the id, so keys never hold a bearer value (issue 3, item 5). */
export function hashId(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

function ttlOf(expiresIn: number | undefined): number {
  return typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0 ? Math.ceil(expiresIn) : 0;
}

/**
 * The Redis store: all provider state in a standalone Redis or a Redis Cluster, shared by any number
 * of provider processes. Keys are `{prefix}{Model}:{sha256(id)}`; payloads are stored without their
 * `jti` (restored from the id on `find`), so a dump of Redis yields no usable token. Every script
 * touches one key: atomic and Cluster-safe. When Redis is unreachable, operations fail within
 * `operationTimeoutMs` with a 503 `server_error`, and the client reconnects by itself.
 */
export function createRedisStore(options: RedisStoreOptions): SvcStore & { readonly client: Redis | Cluster } {
  const prefix = options.keyPrefix ?? 'svc:';
  const timeoutMs = options.operationTimeoutMs ?? 800;
  const logger = options.logger ?? silentLogger;
  const connection: RedisOptions = {
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: true,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  };
  let client: Client;
  if (options.clusterNodes?.length) {
    client = new Cluster(options.clusterNodes, {
      redisOptions: connection,
      enableOfflineQueue: true,
      clusterRetryStrategy: (times) => Math.min(times * 100, 1000),
      slotsRefreshTimeout: 1000,
      scaleReads: 'master',
    }) as Client;
  } else if (options.url) {
    client = new Redis(options.url, connection) as Client;
  } else {
    throw new TypeError('createRedisStore: options.url or options.clusterNodes is required');
  }
  client.defineCommand('svcUpsert', { numberOfKeys: 1, lua: UPSERT });
  client.defineCommand('svcConsume', { numberOfKeys: 1, lua: CONSUME });
  client.defineCommand('svcIndexAdd', { numberOfKeys: 1, lua: INDEX_ADD });
  client.defineCommand('svcIndexTake', { numberOfKeys: 1, lua: INDEX_TAKE });
  client.defineCommand('svcAttemptTake', { numberOfKeys: 1, lua: ATTEMPT_TAKE });
  client.defineCommand('svcAttemptGiveBack', { numberOfKeys: 1, lua: ATTEMPT_GIVE_BACK });

  let healthy = true;
  client.on('error', (err: Error) => {
    if (healthy) logger.error('store_unavailable', { store: 'redis', name: err.name, code: (err as { code?: string }).code });
    healthy = false;
  });
  client.on('ready', () => {
    if (!healthy) logger.info('store_recovered', { store: 'redis' });
    healthy = true;
  });

  /**
   * A small circuit breaker: after an operation finds Redis unavailable, further operations fail at
   * once for `BREAKER_MS` (one probe at a time goes through to notice recovery). A request that needs
   * several store operations thus fails within one timeout, not one per operation.
   */
  const BREAKER_MS = 2000;
  let openUntil = 0;
  let probing = false;

  const attempt = async <T>(operation: () => Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        operation(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('store operation timed out')), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };

  /** Runs one store operation with the fail-fast timeout; protocol errors pass, the rest → 503. */
  const run = async <T>(operation: () => Promise<T>): Promise<T> => {
    const open = Date.now() < openUntil;
    if (open && probing) throw new StoreUnavailableError();
    if (open) probing = true;
    try {
      const result = await attempt(operation);
      // Only the probe closes the breaker: an operation that started before a failure and succeeded
      // on another Cluster node says nothing about the node that failed.
      if (open) openUntil = 0;
      return result;
    } catch (err) {
      if (err instanceof errors.OIDCProviderError) {
        if (open) openUntil = 0;
        throw err;
      }
      openUntil = Date.now() + BREAKER_MS;
      throw new StoreUnavailableError({ cause: err });
    } finally {
      if (open) probing = false;
    }
  };

  const recordKey = (model: string, id: string): string => `${prefix}${model}:${hashId(id)}`;
  const grantKey = (grantId: string): string => `${prefix}grant:${hashId(grantId)}`;
  const uidKey = (uid: string): string => `${prefix}sessionUid:${hashId(uid)}`;
  const userCodeKey = (code: string): string => `${prefix}userCode:${hashId(code)}`;

  const read = async (key: string, id: string): Promise<AdapterPayload | undefined> => {
    const fields = await client.hgetall(key);
    if (!fields.p) return undefined;
    const payload = JSON.parse(fields.p) as AdapterPayload;
    if (fields.j === '1') payload.jti = id;
    if (fields.c) payload.consumed = Number(fields.c);
    return payload;
  };

  /** Follows an index key to its record; a stale index (record rewritten or gone) finds nothing. */
  const readIndexed = async (model: string, index: string, member: 'uid' | 'userCode', value: string): Promise<AdapterPayload | undefined> => {
    const id = await client.get(index);
    if (!id) return undefined;
    const payload = await read(recordKey(model, id), id);
    return payload && payload[member] === value ? payload : undefined;
  };

  const adapter = (model: string): Adapter => ({
    upsert: (id, payload, expiresIn) =>
      run(async () => {
        const ttl = ttlOf(expiresIn);
        const key = recordKey(model, id);
        const { jti, consumed, ...rest } = payload;
        const stored = jti !== undefined && jti !== id ? { ...rest, jti } : rest;
        const writes: Promise<unknown>[] = [
          client.svcUpsert(key, JSON.stringify(stored), jti === id ? '1' : '0', ttl, consumed ? String(consumed) : ''),
        ];
        // The uid index holds the session id so `findByUid` can restore `jti`. A session id alone is
        // not a usable credential: the session cookie is signed with the cookie keys, which are not
        // in Redis. Bearer tokens (access tokens, codes, registration tokens) have no such index.
        if (model === 'Session' && payload.uid) writes.push(ttl ? client.set(uidKey(payload.uid), id, 'EX', ttl) : client.set(uidKey(payload.uid), id));
        if (payload.userCode) writes.push(ttl ? client.set(userCodeKey(payload.userCode), id, 'EX', ttl) : client.set(userCodeKey(payload.userCode), id));
        if (payload.grantId && GRANTABLE_MODELS.has(model)) writes.push(client.svcIndexAdd(grantKey(payload.grantId), key, ttl));
        await Promise.all(writes);
      }),
    find: (id) => run(() => read(recordKey(model, id), id)),
    findByUid: (uid) => run(() => readIndexed(model, uidKey(uid), 'uid', uid)),
    findByUserCode: (userCode) => run(() => readIndexed(model, userCodeKey(userCode), 'userCode', userCode)),
    consume: (id) =>
      run(async () => {
        const result = await client.svcConsume(recordKey(model, id), Math.floor(Date.now() / 1000));
        if (result === -1) throw new errors.InvalidGrant(`${model} not found or expired`);
        if (result === 0) throw new AlreadyConsumedError(model);
      }),
    destroy: (id) =>
      run(async () => {
        await client.del(recordKey(model, id));
      }),
    revokeByGrantId: (grantId) =>
      run(async () => {
        const members = await client.svcIndexTake(grantKey(grantId));
        await Promise.all(members.map((member) => client.del(member)));
      }),
  });

  const attemptKey = (key: string): string => `${prefix}attempts:${hashId(key)}`;
  const attempts: AttemptCounter = {
    take: (key, rule) =>
      run(() =>
        client.svcAttemptTake(
          attemptKey(key),
          rule.limit,
          rule.windowSeconds * 1000,
          rule.coolDownSeconds * 1000,
          rule.maxCoolDownSeconds * 1000,
          STRIKE_MEMORY_SECONDS * 1000,
        ),
      ),
    giveBack: (key) =>
      run(async () => {
        await client.svcAttemptGiveBack(attemptKey(key));
      }),
    reset: (key) =>
      run(async () => {
        await client.del(attemptKey(key));
      }),
  };

  return {
    client,
    adapter,
    attempts,
    ping: () =>
      run(async () => {
        await client.ping();
      }),
    async close() {
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}

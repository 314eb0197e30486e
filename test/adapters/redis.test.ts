import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Cluster, Redis, RedisOptions } from 'ioredis';

import { refOf } from '../../adapters/inventory.js';
import { InvalidCursorError } from '../../lib/errors.js';
import { createRedisStore } from '../../adapters/redis.js';
import { attemptCounterKey } from '../../adapters/redis-attempt-keys.js';
import { RUN_MEMORY_SECONDS, STRIKE_MEMORY_SECONDS, type SvcStore } from '../../adapters/store.js';
import { capturingLogger } from '../helpers/logs.js';
import { deletePrefix, SHARED_REDIS_URL, startOwnCluster, testPrefix, TEST_STORE_TIMEOUT_MS, type OwnCluster } from '../helpers/redis.js';
import { describeBatchContract } from './batch-contract.js';
import { describeAdapterContract } from './contract.js';

const standalonePrefix = testPrefix('contract');
afterAll(async () => deletePrefix(SHARED_REDIS_URL, standalonePrefix));

/** Whether the store's uid index key of `uid` exists (`store` made with `prefix`). */
const uidIndexed = (prefix: string) => async (store: SvcStore, uid: string): Promise<boolean> => (await (store as SvcStore & { client: Redis | Cluster }).client.exists(`${prefix}sessionUid:${refOf(uid)}`)) === 1;

describeAdapterContract('redis standalone', async () => createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: standalonePrefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS }), uidIndexed(standalonePrefix));
describeBatchContract('redis standalone', async () => createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: standalonePrefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS }));

let cluster: OwnCluster;
beforeAll(async () => {
  cluster = await startOwnCluster();
}, 30_000);
afterAll(() => cluster?.dispose());

const clusterPrefix = testPrefix('cluster');
describeAdapterContract('redis cluster (3 masters)', async () => createRedisStore({ clusterNodes: cluster.nodes, keyPrefix: clusterPrefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS }), uidIndexed(clusterPrefix));
describeBatchContract('redis cluster (3 masters)', async () => createRedisStore({ clusterNodes: cluster.nodes, keyPrefix: testPrefix('cluster'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS }));

describe('redis store key layout', () => {
  it('keeps ids out of keys and payloads: keys hold a SHA-256 of the id, jti is restored on find', async () => {
    const prefix = testPrefix('layout');
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      const token = 'secret-access-token-value-1234567890';
      await store.adapter('AccessToken').upsert(token, { jti: token, grantId: 'g1', kind: 'AccessToken' }, 60);
      const keys = await store.client.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key).not.toContain(token);
        const type = await store.client.type(key);
        const dump = type === 'hash' ? JSON.stringify(await store.client.hgetall(key)) : type === 'set' ? JSON.stringify(await store.client.smembers(key)) : type === 'zset' ? JSON.stringify(await store.client.zrange(key, '0', '-1', 'WITHSCORES')) : String(await store.client.get(key));
        expect(dump).not.toContain(token);
      }
      expect((await store.adapter('AccessToken').find(token))?.jti).toBe(token);
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await store.close();
    }
  });

  it("keeps a session's id (her cookie's value) out of its uid index: it holds the record's reference, which another process follows", async () => {
    const prefix = testPrefix('uid-index');
    const open = (): ReturnType<typeof createRedisStore> => createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    const [writer, reader] = [open(), open()];
    try {
      const session = 'session-id-cookie-value-0123456789';
      await writer.adapter('Session').upsert(session, { jti: session, uid: 'her-uid', accountId: 'her' }, 60);
      expect(await writer.client.get(`${prefix}sessionUid:${refOf('her-uid')}`)).toBe(refOf(session));
      expect(await reader.adapter('Session').findByUid('her-uid')).toEqual({ uid: 'her-uid', accountId: 'her' });
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await Promise.all([writer.close(), reader.close()]);
    }
  });

  it('lists only its own prefix, even when the prefix holds glob characters', async () => {
    const base = testPrefix('glob');
    const mine = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: `${base}a*`, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    const neighbour = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: `${base}ab`, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      await mine.adapter('Client').upsert('mine', { client_id: 'mine' });
      await neighbour.adapter('Client').upsert('theirs', { client_id: 'theirs' });
      const page = await mine.inventory.list('Client', { limit: 50 });
      expect(page.records.map((r) => r.payload.client_id)).toEqual(['mine']);
      expect(await mine.inventory.destroy('Client', refOf('theirs'))).toBe(false);
      expect(await neighbour.adapter('Client').find('theirs')).toBeDefined();
    } finally {
      await deletePrefix(SHARED_REDIS_URL, base);
      await Promise.all([mine.close(), neighbour.close()]);
    }
  });

  it('refuses a cursor whose pending references are not references', async () => {
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: testPrefix('cursor'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      const options = store.client.options as RedisOptions;
      const node = `${options.host ?? ''}:${options.port ?? ''}`;
      const forged = (p: unknown[]): string => Buffer.from(JSON.stringify({ n: node, c: '0', p })).toString('base64url');
      await expect(store.inventory.list('Client', { limit: 5, cursor: forged([]) })).resolves.toEqual({ records: [] });
      await expect(store.inventory.list('Client', { limit: 5, cursor: forged(['*']) })).rejects.toBeInstanceOf(InvalidCursorError);
      await expect(store.inventory.list('Client', { limit: 5, cursor: forged([refOf('x'), 7]) })).rejects.toBeInstanceOf(InvalidCursorError);
    } finally {
      await store.close();
    }
  });

  it('expires a grant index with its longest-lived member', async () => {
    const prefix = testPrefix('index-ttl');
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      await store.adapter('AuthorizationCode').upsert('code-1', { grantId: 'grant-x' }, 30);
      await store.adapter('AccessToken').upsert('at-1', { grantId: 'grant-x' }, 300);
      await store.adapter('AuthorizationCode').upsert('code-2', { grantId: 'grant-x' }, 10);
      const [indexKey] = await store.client.keys(`${prefix}grant:*`);
      const ttl = await store.client.ttl(indexKey as string);
      expect(ttl).toBeGreaterThan(290);
      expect(ttl).toBeLessThanOrEqual(300);
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await store.close();
    }
  });
});

describe('redis grant index: a grant in use for days keeps only its live tokens', () => {
  /** The server's clock, in epoch seconds: Redis expires records by it. */
  const serverSeconds = async (store: ReturnType<typeof createRedisStore>): Promise<number> => Number((await store.client.time())[0]);

  it('attack: a grant renewed every hour without refresh tokens (or by a client looping prompt=none) keeps no index member of an expired code or token', async () => {
    const prefix = testPrefix('index-prune');
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      await store.adapter('AccessToken').upsert('at-live', { grantId: 'grant-y' }, 3600);
      for (let i = 0; i < 50; i += 1) await store.adapter('AuthorizationCode').upsert(`code-${i}`, { grantId: 'grant-y' }, 1);
      const start = await serverSeconds(store);
      while ((await serverSeconds(store)) < start + 2) await new Promise((resolve) => setTimeout(resolve, 100));
      await store.adapter('AuthorizationCode').upsert('code-now', { grantId: 'grant-y' }, 60);
      const [indexKey] = await store.client.keys(`${prefix}grant:*`);
      expect(await store.client.zcard(indexKey as string)).toBe(2);
      expect(await store.client.ttl(indexKey as string)).toBeGreaterThan(3500);
      expect(await store.inventory.revokeGrant(refOf('grant-y'))).toBe(2);
      expect(await store.adapter('AccessToken').find('at-live')).toBeUndefined();
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await store.close();
    }
  });
});

describe('redis store: a value under one of its record keys that it did not write (an operator\'s edit, another program on the prefix, a damaged restore)', () => {
  /** Values no store writes: no header, a header alone, an unknown header, JSON that is no object, no JSON. */
  const UNREADABLE = ['1', '|{"disabled_at":1}', '-c|{}', 'x|{}', '-|null', '-|0', '-|"disabled"', '-|[]', '-|not json', 'j|null'];

  it('attack: a client\'s disabling mark or a session\'s revocation mark it cannot read is never taken for no mark: the read fails, logged with the model and the key\'s reference, never the value; the inventory leaves it out', async () => {
    const prefix = testPrefix('unreadable');
    const { logger, lines } = capturingLogger();
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS, cachedModels: [], logger });
    try {
      await store.adapter('Session').upsert('s-1', { uid: 'uid-1', accountId: 'her' }, 60);
      for (const [model, id] of [['ClientSuspension', 'rp-1'], ['SessionRevocation', 'uid-1'], ['Session', 's-1']] as const) {
        for (const value of UNREADABLE) {
          lines.length = 0;
          await store.client.set(`${prefix}${model}:${refOf(id)}`, value);
          await expect(store.adapter(model).find(id)).rejects.toMatchObject({ name: 'StoreRecordUnreadableError' });
          expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([{ e: 'store_record_unreadable', store: 'redis', model, ref: refOf(id) }]);
        }
      }
      await expect(store.adapter('Session').findByUid('uid-1')).rejects.toMatchObject({ name: 'StoreRecordUnreadableError' });
      // Listed, it would stop every revocation; it serves nobody, as every other read of it fails.
      lines.length = 0;
      expect((await store.inventory.list('Session', { limit: 10 })).records).toEqual([]);
      expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([{ e: 'store_record_unreadable', store: 'redis', model: 'Session', ref: refOf('s-1') }]);
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await store.close();
    }
  });

  it('honest: a mark with fields missing (written by a tool of the operator\'s) still counts, and every record the store writes reads back', async () => {
    const prefix = testPrefix('readable');
    const { logger, lines } = capturingLogger();
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS, logger });
    try {
      await store.client.set(`${prefix}ClientSuspension:${refOf('rp-1')}`, '-|{}');
      expect(await store.adapter('ClientSuspension').find('rp-1')).toEqual({});
      const codes = store.adapter('AuthorizationCode');
      await codes.upsert('code-1', { jti: 'code-1', grantId: 'g', kind: 'AuthorizationCode' }, 60);
      await codes.upsert('code-2', { jti: 'other', kind: 'AuthorizationCode' }, 60);
      await codes.consume('code-1');
      expect(await codes.find('code-1')).toEqual({ jti: 'code-1', grantId: 'g', kind: 'AuthorizationCode', consumed: expect.any(Number) });
      expect(await codes.find('code-2')).toEqual({ jti: 'other', kind: 'AuthorizationCode' });
      await store.adapter('Client').upsert('rp-2', { client_id: 'rp-2', client_name: 'Zoë | ' });
      expect(await store.adapter('Client').find('rp-2')).toEqual({ client_id: 'rp-2', client_name: 'Zoë | ' });
      expect(lines).toEqual([]);
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await store.close();
    }
  });
});

describe('redis attempt scripts: a lockout counts towards the next cool-down until a day after it ended (the memory store in memory.test.ts)', () => {
  const rule = { limit: 2, windowSeconds: 60, coolDownSeconds: 10, maxCoolDownSeconds: 1000 };
  const DAY_MS = STRIKE_MEMORY_SECONDS * 1000;

  it.each([
    ['ended a second ago: doubled once per earlier lockout', 1000, 40_000],
    ['ended a day ago, with failures since: the base cool-down', DAY_MS + 1000, 10_000],
  ])('two earlier lockouts, the last %s', async (_when, endedAgoMs, coolDownMs) => {
    const prefix = testPrefix('strikes');
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      const hash = attemptCounterKey(prefix, 'k');
      const [seconds] = await store.client.time();
      // Planted as the scripts leave it after two lockouts, and a failure within the day that kept the hash alive.
      await store.client.hset(hash, { f: 0, w: 0, u: Number(seconds) * 1000 - endedAgoMs, s: 2, r: 0 });
      const before = Date.now();
      for (let i = 0; i < 2; i += 1) await store.attempts.fail('k', rule);
      const wait = await store.attempts.check('k', rule);
      // Shorter only by the time that passed since the lock began (and a second of rounding), however slow the machine.
      expect(wait).toBeGreaterThan(coolDownMs - (Date.now() - before) - 1000);
      expect(wait).toBeLessThanOrEqual(coolDownMs);
      const lockedUntil = Number(await store.client.hget(hash, 'u'));
      expect(Number(await store.client.call('PEXPIRETIME', hash))).toBe(lockedUntil + DAY_MS);
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await store.close();
    }
  });
});

describe('redis attempt scripts: a run of failures in a row is remembered in proportion to its length (the memory store in memory.test.ts)', () => {
  it('keeps a name tried once for 1/limit of the run memory, and a run at the limit for all of it', async () => {
    const prefix = testPrefix('run-memory');
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    const rule = { limit: 1000, windowSeconds: 60, coolDownSeconds: 10, maxCoolDownSeconds: 100, consecutiveLimit: 4 };
    const RUN_MS = RUN_MEMORY_SECONDS * 1000;
    try {
      const hash = attemptCounterKey(prefix, 'k');
      const keptFor = async (): Promise<number> => {
        const [seconds, micros] = await store.client.time();
        return Number(await store.client.call('PEXPIRETIME', hash)) - (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000));
      };
      // Each shorter only by the time that passed since the failure that set it (and a second of rounding).
      let before = Date.now();
      await store.attempts.fail('k', rule);
      expect(await keptFor()).toBeGreaterThan(RUN_MS / 4 - (Date.now() - before) - 1000);
      expect(await keptFor()).toBeLessThanOrEqual(RUN_MS / 4);
      for (let i = 0; i < 3; i += 1) {
        before = Date.now();
        await store.attempts.fail('k', rule);
      }
      expect(await keptFor()).toBeGreaterThan(RUN_MS - (Date.now() - before) - 1000);
      expect(await keptFor()).toBeLessThanOrEqual(RUN_MS);
      expect(await store.attempts.check('k', rule)).toBeGreaterThanOrEqual(1000);
      const unlimited = attemptCounterKey(prefix, 'u');
      await store.attempts.fail('u', { ...rule, consecutiveLimit: undefined });
      expect(Number(await store.client.pttl(unlimited))).toBeLessThanOrEqual(60_000);
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await store.close();
    }
  });
});

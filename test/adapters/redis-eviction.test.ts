import { createServer, type AddressInfo, type Socket } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { createRedisStore } from '../../adapters/redis.js';
import { ATTEMPT_BUCKETS, attemptCounterKey, keySlot, redisCounterBytes } from '../../adapters/redis-attempt-keys.js';
import { COUNTER_SHARE, type SvcStore } from '../../adapters/store.js';
import { StoreUnavailableError } from '../../lib/errors.js';
import { startOwnCluster, startOwnRedis, testPrefix, TEST_STORE_TIMEOUT_MS, type OwnCluster, type OwnRedis } from '../helpers/redis.js';
import { clockAhead } from '../helpers/clock.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, redirectParams } from '../helpers/flow.js';
import { finishFlows, peopleAtLogin } from '../helpers/mid-flow.js';

/** A throttle rule as the login name's: 5 failures lock it. */
const RULE = { limit: 5, windowSeconds: 900, coolDownSeconds: 900, maxCoolDownSeconds: 3600, consecutiveLimit: 100 };

/**
 * The lock `name` had (`locked` ms left, read at `at`) still stands, shorter only by the time since: it was
 * neither replaced nor started again. The slack is the check's rounding, not a bound on the machine's speed.
 */
async function expectLockKept(store: SvcStore, name: string, locked: number, at: number): Promise<void> {
  const left = await store.attempts.check(name, RULE);
  expect(left).toBeGreaterThan(0);
  expect(left).toBeGreaterThanOrEqual(locked - (Date.now() - at) - 1000);
  expect(left).toBeLessThanOrEqual(locked);
}

/** What an anonymous authorization request may store for an hour: an interaction holding a 16 KiB `state`. */
const FLOOD_RECORD = { params: { state: 'x'.repeat(16 * 1024) } };

/** A logger that keeps its lines. */
function recording(): { lines: { event: string; fields?: Record<string, unknown> }[]; logger: { info: (e: string, f?: Record<string, unknown>) => void; warn: (e: string, f?: Record<string, unknown>) => void; error: (e: string, f?: Record<string, unknown>) => void } } {
  const lines: { event: string; fields?: Record<string, unknown> }[] = [];
  const keep = (event: string, fields?: Record<string, unknown>): void => void lines.push({ event, fields });
  return { lines, logger: { info: keep, warn: keep, error: keep } };
}

/**
 * Freeing a refused command's buffers can bring used memory back under the limit, so the next write may pass; a limit
 * far below what the flood holds refuses every write from here on.
 */
async function overLimit(redis: OwnRedis): Promise<void> {
  const admin = new Redis(redis.url);
  await admin.call('CONFIG', 'SET', 'maxmemory', '1mb').finally(() => admin.disconnect());
}

/** Each bucket's counter cap on a 4 MiB standalone server, counters under `prefix`. */
const capIn4MiB = (prefix: string): number => Math.floor((4 * 2 ** 20 * COUNTER_SHARE) / redisCounterBytes(prefix) / ATTEMPT_BUCKETS);

describe('a Redis that may evict keys: single use, replay detection, throttling and revocation rest on records staying', () => {
  let evicting: OwnRedis;
  let full: OwnRedis;
  beforeAll(async () => {
    // volatile-lru: the default of several managed Redis services.
    evicting = await startOwnRedis({ extra: ['--maxmemory', '4mb', '--maxmemory-policy', 'volatile-lru'] });
    full = await startOwnRedis({ extra: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] });
  });
  afterAll(() => {
    evicting?.dispose();
    full?.dispose();
  });

  it('attack: a store on a Redis whose maxmemory-policy evicts (a flood of anonymous records would push out a replay mark and a lock) is not ready, saying why, logged once', async () => {
    const { lines, logger } = recording();
    const store = createRedisStore({ url: evicting.url, keyPrefix: testPrefix('evicting'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS, logger });
    try {
      const refusal = await store.ping().then(() => undefined, (err: unknown) => err);
      expect(refusal).toBeInstanceOf(StoreUnavailableError);
      expect(String((refusal as Error).cause)).toContain('maxmemory-policy is volatile-lru');
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(lines.filter((l) => l.event === 'store_evicts')).toEqual([{ event: 'store_evicts', fields: { store: 'redis', policy: 'volatile-lru', host: '127.0.0.1', port: evicting.port } }]);
      // The store still serves: being not ready is what tells the operator, and a running provider keeps working.
      expect(await store.insert('ReplayDetection', 'assertion', { iss: 'c' }, 3600)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('attack: a Cluster with one master that evicts (allkeys-lru set at run time) is not ready', async () => {
    let cluster: OwnCluster | undefined;
    try {
      cluster = await startOwnCluster();
      const node = new Redis({ host: '127.0.0.1', port: cluster.nodes[2]?.port });
      await node.config('SET', 'maxmemory', '64mb');
      await node.config('SET', 'maxmemory-policy', 'allkeys-lru');
      node.disconnect();
      const store = createRedisStore({ clusterNodes: cluster.nodes, keyPrefix: testPrefix('evicting-cluster'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
      try {
        const refusal = await store.ping().then(() => undefined, (err: unknown) => err);
        expect(String((refusal as Error | undefined)?.cause)).toContain('maxmemory-policy is allkeys-lru');
      } finally {
        await store.close();
      }
    } finally {
      cluster?.dispose();
    }
  }, 60_000);

  it('honest: with noeviction the store is ready, and a full Redis refuses the flood (503) while the replay mark and her lock stay', async () => {
    // Redis's own refusal: a signed-in account's interactions, which the last tenth does not hold back.
    const store = createRedisStore({ url: full.url, keyPrefix: testPrefix('noeviction'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      await store.ping();
      expect(await store.insert('ReplayDetection', 'assertion', { iss: 'c' }, 3600)).toBe(true);
      for (let i = 0; i < RULE.limit; i += 1) await store.attempts.fail('her-name', RULE);
      let refused: unknown;
      const signedIn = { ...FLOOD_RECORD, session: { accountId: 'flooder', uid: 'u' } };
      for (let i = 0; i < 1000 && !refused; i += 1) refused = await store.adapter('Interaction').upsert(`flood-${i}`, signedIn, 3600).then(() => undefined, (err: unknown) => err);
      expect(refused).toBeInstanceOf(StoreUnavailableError);
      expect(String((refused as Error).cause)).toContain('OOM');
      await overLimit(full);
      expect(await store.adapter('ReplayDetection').find('assertion')).toEqual({ iss: 'c' });
      expect(await store.attempts.check('her-name', RULE)).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it('attack: once a flood has filled a noeviction Redis, the writes it refuses (OOM) open no circuit breaker: the records of people already signed in are still read, side by side with refused writes', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] });
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('oom'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      await store.adapter('AccessToken').upsert('her-token', { grantId: 'her-grant', accountId: 'her' }, 3600);
      let refused: unknown;
      for (let i = 0; i < 1000 && !refused; i += 1) refused = await store.adapter('Interaction').upsert(`flood-${i}`, FLOOD_RECORD, 3600).then(() => undefined, (err: unknown) => err);
      expect(refused).toBeInstanceOf(StoreUnavailableError);
      await overLimit(own);
      const [flood, ...reads] = await Promise.allSettled([
        store.adapter('Interaction').upsert('flood-more', FLOOD_RECORD, 3600),
        ...Array.from({ length: 8 }, () => store.adapter('AccessToken').find('her-token')),
      ]);
      expect(flood?.status).toBe('rejected');
      expect(reads.map((r) => (r.status === 'fulfilled' ? r.value?.accountId : String(r.reason)))).toEqual(Array.from({ length: 8 }, () => 'her'));
    } finally {
      await store.close();
      own.dispose();
    }
  });

  it('attack: a noeviction Redis that a flood has filled is not ready while it refuses writes (OOM), and ready again once it has room, without a restart', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] });
    const admin = new Redis(own.url);
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('full'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      await expect(store.ping()).resolves.toBeUndefined();
      let refused: unknown;
      for (let i = 0; i < 1000 && !refused; i += 1) refused = await store.adapter('Interaction').upsert(`flood-${i}`, FLOOD_RECORD, 3600).then(() => undefined, (err: unknown) => err);
      await overLimit(own);
      const keys = await admin.dbsize();
      const refusal = await store.ping().then(() => undefined, (err: unknown) => err);
      expect(refusal).toBeInstanceOf(StoreUnavailableError);
      expect(String((refusal as Error).cause)).toContain('Redis refuses writes: OOM');
      expect(await admin.dbsize()).toBe(keys);
      await admin.config('SET', 'maxmemory', '0');
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      await store.close();
      admin.disconnect();
      own.dispose();
    }
  });

  it('attack: a Redis that became a read-only replica (a failover the address did not follow) is not ready; promoted again, it is ready', async () => {
    const primary = await startOwnRedis();
    const own = await startOwnRedis();
    const admin = new Redis(own.url);
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('replica'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      await expect(store.ping()).resolves.toBeUndefined();
      await admin.call('REPLICAOF', '127.0.0.1', String(primary.port));
      const refusal = await store.ping().then(() => undefined, (err: unknown) => err);
      expect(refusal).toBeInstanceOf(StoreUnavailableError);
      expect(String((refusal as Error).cause)).toContain('Redis refuses writes: READONLY');
      await expect(store.adapter('Session').upsert('s', { uid: 'u' }, 60)).rejects.toBeInstanceOf(StoreUnavailableError);
      await admin.call('REPLICAOF', 'NO', 'ONE');
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      await store.close();
      admin.disconnect();
      own.dispose();
      primary.dispose();
    }
  });

  it('attack: a Redis that refuses writes for want of replicas (min-replicas-to-write) is not ready; once its replica is in sync, it is ready', async () => {
    const own = await startOwnRedis();
    const replica = await startOwnRedis();
    const admin = new Redis(own.url);
    const follower = new Redis(replica.url);
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('no-replicas'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      await admin.config('SET', 'min-replicas-to-write', '1');
      await admin.config('SET', 'repl-diskless-sync-delay', '0');
      const refusal = await store.ping().then(() => undefined, (err: unknown) => err);
      expect(refusal).toBeInstanceOf(StoreUnavailableError);
      expect(String((refusal as Error).cause)).toContain('Redis refuses writes: NOREPLICAS');
      await expect(store.adapter('Session').upsert('s', { uid: 'u' }, 60)).rejects.toBeInstanceOf(StoreUnavailableError);
      await follower.call('REPLICAOF', '127.0.0.1', String(own.port));
      await admin.call('WAIT', '1', '0');
      await expect(store.ping()).resolves.toBeUndefined();
      await expect(store.adapter('Session').upsert('s', { uid: 'u' }, 60)).resolves.toBeUndefined();
    } finally {
      await store.close();
      admin.disconnect();
      follower.disconnect();
      replica.dispose();
      own.dispose();
    }
  });

  it('attack: a Cluster with one master full (noeviction, below its memory in use) is not ready, and ready again once it has room', async () => {
    let cluster: OwnCluster | undefined;
    try {
      cluster = await startOwnCluster();
      const node = new Redis({ host: '127.0.0.1', port: cluster.nodes[1]?.port });
      const store = createRedisStore({ clusterNodes: cluster.nodes, keyPrefix: testPrefix('full-cluster'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
      try {
        await expect(store.ping()).resolves.toBeUndefined();
        await node.config('SET', 'maxmemory', '1');
        const refusal = await store.ping().then(() => undefined, (err: unknown) => err);
        expect(String((refusal as Error | undefined)?.cause)).toContain('Redis refuses writes: OOM');
        await node.config('SET', 'maxmemory', '0');
        await expect(store.ping()).resolves.toBeUndefined();
      } finally {
        await store.close();
        node.disconnect();
      }
    } finally {
      cluster?.dispose();
    }
  }, 60_000);

  it('honest: a Redis user not allowed EVAL is ready: whether writes are taken is unknown, not refused', async () => {
    const own = await startOwnRedis();
    const admin = new Redis(own.url);
    try {
      await admin.call('ACL', 'SETUSER', 'app', 'on', '>pw', '~*', '&*', '+@all', '-eval');
      const store = createRedisStore({ url: `redis://app:pw@127.0.0.1:${own.port}`, keyPrefix: testPrefix('no-eval'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
      try {
        await expect(store.ping()).resolves.toBeUndefined();
      } finally {
        await store.close();
      }
    } finally {
      admin.disconnect();
      own.dispose();
    }
  });

  it('honest: a Redis with an evicting policy but no maxmemory never evicts, and is ready', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory-policy', 'allkeys-lru'] });
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('no-maxmemory'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      await store.close();
      own.dispose();
    }
  });

  it('honest: a Redis user not allowed INFO (a least-privilege ACL) is ready: the policy is unknown, not refused; a stranger is refused only by Redis at its limit', async () => {
    // Its own server: `full` is left refusing writes by the tests above.
    const own = await startOwnRedis({ extra: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] });
    const admin = new Redis(own.url);
    try {
      await admin.call('ACL', 'SETUSER', 'app', 'on', '>pw', '~*', '&*', '+@all', '-info');
      const store = createRedisStore({ url: `redis://app:pw@127.0.0.1:${own.port}`, keyPrefix: testPrefix('no-info'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
      try {
        await expect(store.ping()).resolves.toBeUndefined();
        let refused: unknown;
        for (let i = 0; i < 1000 && !refused; i += 1) refused = await store.adapter('Interaction').upsert(`flood-${i}`, FLOOD_RECORD, 3600).then(() => undefined, (err: unknown) => err);
        expect(String((refused as Error).cause)).toContain('OOM');
      } finally {
        await store.close();
      }
    } finally {
      admin.disconnect();
      own.dispose();
    }
  });
});

describe('a noeviction Redis keeps its last tenth for flows under way, as the memory store does (memory.test.ts)', () => {
  /** What an anonymous authorization request stores: an interaction nobody signed in to, with a 16 KiB `state`. */
  const anonymous = { kind: 'Interaction', ...FLOOD_RECORD };

  /** Writes what follows a sign-in under way (her interaction noting her login, rewritten; her consent's; her session, grant and code) and reads her code back. */
  async function herFlowFits(store: SvcStore): Promise<void> {
    await store.adapter('Interaction').upsert('flood-0', { ...anonymous, result: { login: { accountId: 'her' } } }, 3600);
    await store.adapter('Interaction').upsert('her-consent', { kind: 'Interaction', session: { accountId: 'her', uid: 'u' } }, 3600);
    await store.adapter('Session').upsert('her-session', { kind: 'Session', uid: 'u', accountId: 'her' }, 3600);
    await store.adapter('Grant').upsert('her-grant', { kind: 'Grant', accountId: 'her', clientId: 'c' }, 3600);
    await store.adapter('AuthorizationCode').upsert('her-code', { kind: 'AuthorizationCode', grantId: 'her-grant', accountId: 'her' }, 60);
    expect(await store.adapter('AuthorizationCode').find('her-code')).toMatchObject({ accountId: 'her' });
  }

  it('attack: a flood of anonymous interactions stops at nine tenths of maxmemory (503, logged once), and her login, session, grant and code still fit; freed memory admits strangers again', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory', '8mb', '--maxmemory-policy', 'noeviction'] });
    const admin = new Redis(own.url);
    const { lines, logger } = recording();
    const prefix = testPrefix('headroom');
    const store = createRedisStore({ url: own.url, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS, headroomCheckMs: 0, logger });
    try {
      expect([await store.crowded?.(), await store.refusesStart?.('Interaction', 'first', anonymous)]).toEqual([false, false]);
      let refused: unknown;
      let kept = 0;
      for (; kept < 1000 && !refused; kept += 1) refused = await store.adapter('Interaction').upsert(`flood-${kept}`, anonymous, 3600).then(() => undefined, (err: unknown) => err);
      expect(refused).toBeInstanceOf(StoreUnavailableError);
      // From half its limit on, new flows are shared out by client address (test/integration/memory-headroom.test.ts).
      expect(await store.crowded?.()).toBe(true);
      expect(String((refused as Error).cause)).toContain('90 % of its maxmemory');
      // A stranger's pushed request as large as the refused interaction: a smaller one may still fit below the line.
      await expect(store.adapter('PushedAuthorizationRequest').upsert(`pushed-${kept}`, { kind: 'PushedAuthorizationRequest', request: anonymous.params.state }, 60)).rejects.toBeInstanceOf(StoreUnavailableError);
      // What the share by address asks before counting: refused as the write is, writing nothing; not a signed-in one.
      const keys = await admin.dbsize();
      expect([await store.refusesStart?.('Interaction', `flood-more-${kept}`, anonymous), await store.refusesStart?.('Interaction', 'hers', { ...anonymous, session: { accountId: 'her' } }), await admin.dbsize()]).toEqual([true, false, keys]);
      // People mid-flow: her interaction noting her login (rewritten), one for a session that knows her, and what follows.
      await herFlowFits(store);
      expect(lines.filter((l) => l.event === 'store_full')).toHaveLength(1);

      await admin.del(...(await admin.keys(`${prefix}Interaction:*`)).slice(0, Math.ceil(kept / 2)));
      await expect(store.adapter('Interaction').upsert('stranger-later', anonymous, 3600)).resolves.toBeUndefined();
      expect(lines.filter((l) => l.event === 'store_recovered')).toHaveLength(1);
      // Without a maxmemory, Redis sets no limit to keep a tenth of.
      await admin.config('SET', 'maxmemory', '0');
      expect(await store.crowded?.()).toBe(false);
      for (let i = 0; i < kept; i += 1) await store.adapter('Interaction').upsert(`stranger-${i}`, anonymous, 3600);
    } finally {
      await store.close();
      admin.disconnect();
      own.dispose();
    }
  });

  it('attack: a flood faster than the store looks at INFO (once a second) still stops at nine tenths, counting what it admitted since the look, so her login, session, grant and code fit; honest: strangers start until then', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory', '8mb', '--maxmemory-policy', 'noeviction'] });
    const admin = new Redis(own.url);
    // One look stands for the whole flood, as one look stands for a second of a flood that fast.
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('headroom-fast'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS, headroomCheckMs: 3_600_000 });
    try {
      let refused: unknown;
      for (let i = 0; i < 1000 && !refused; i += 1) refused = await store.adapter('Interaction').upsert(`flood-${i}`, anonymous, 3600).then(() => undefined, (err: unknown) => err);
      expect(String((refused as Error | undefined)?.cause)).toContain('90 % of its maxmemory');
      const memory = await admin.info('memory');
      const used = Number(/^used_memory:(\d+)/m.exec(memory)?.[1]);
      expect(used).toBeGreaterThan(0.8 * 8 * 2 ** 20);
      await herFlowFits(store);
    } finally {
      await store.close();
      admin.disconnect();
      own.dispose();
    }
  });

  it('attack: a flood of anonymous sessions (what a cookieless POST /logout stores for anyone: a logout\'s state, up to 14 KiB, for an hour) stops at nine tenths as interactions do, so her signed-in session still fits', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory', '8mb', '--maxmemory-policy', 'noeviction'] });
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('headroom-session'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS, headroomCheckMs: 0 });
    try {
      const logoutState = (i: number): Record<string, unknown> => ({ kind: 'Session', uid: `stranger-uid-${i}`, state: { secret: 's', state: 'x'.repeat(14 * 1024) } });
      let refused: unknown;
      for (let i = 0; i < 1000 && !refused; i += 1) refused = await store.adapter('Session').upsert(`stranger-${i}`, logoutState(i), 3600).then(() => undefined, (err: unknown) => err);
      expect(refused).toBeInstanceOf(StoreUnavailableError);
      // Refused by the headroom, not by Redis at its limit (OOM), where her session would be refused as well.
      expect(String((refused as Error).cause)).toContain('90 % of its maxmemory');
      await expect(store.adapter('Session').upsert('her-session', { kind: 'Session', uid: 'her-uid', accountId: 'her' }, 14 * 24 * 3600)).resolves.toBeUndefined();
      await expect(store.adapter('Session').upsert('stranger-0', { kind: 'Session', uid: 'stranger-uid-0' }, 3600)).resolves.toBeUndefined();
    } finally {
      await store.close();
      own.dispose();
    }
  });
});

describe('a stranger a noeviction Redis refuses for want of headroom leaves no count behind, as on the memory store (test/integration/memory-headroom.test.ts)', () => {
  const client = confidentialClient();
  const publicClient = { client_id: 'public-rp', token_endpoint_auth_method: 'none' as const, redirect_uris: ['http://rp.localhost/public-cb'] };
  const THRESHOLD = 3;
  /** One look at INFO stands until the test takes the next ({@link look}): what the store admits is then exact. */
  const LOOK_MS = 3_600_000;
  const prefix = testPrefix('headroom-share');
  let own: OwnRedis;
  let admin: Redis;
  let store: ReturnType<typeof createRedisStore>;
  let running: RunningApp;
  beforeAll(async () => {
    own = await startOwnRedis({ extra: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] });
    admin = new Redis(own.url);
    store = createRedisStore({ url: own.url, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS, headroomCheckMs: LOOK_MS });
    running = await startApp({ store, clients: [client, publicClient], properties: { 'svc.proxy': true, 'svc.login.start-threshold': THRESHOLD } });
  });
  afterAll(async () => {
    await running?.close();
    admin?.disconnect();
    own?.dispose();
  });
  let looks = 0;
  /** Makes the store look at INFO once more now (the clock moved past its last look, and back): whether it is crowded. */
  const look = async (): Promise<boolean> => {
    looks += 1;
    const clock = clockAhead(looks * LOOK_MS);
    try {
      return (await store.crowded?.()) ?? false;
    } finally {
      clock.restore();
    }
  };
  /** The answer to a stranger: the status and the error the client is sent back with, if any. */
  const answer = async (address: string): Promise<string> => {
    const response = await fetch(codeFlowUrl(running.issuer, publicClient, { state: 's' }), { redirect: 'manual', headers: { 'x-forwarded-for': address } });
    const location = response.headers.get('location') ?? '';
    return location.includes('/interaction/') ? 'started' : `${response.status} ${location ? redirectParams(location).get('error') : ''}`;
  };
  /** The keys under the prefix, the counters among them and the entries of the counters' indexes. */
  const held = async (): Promise<{ keys: number; counters: number; indexed: number }> => {
    const ranks = await admin.keys(`${prefix}attempt-rank:*`);
    const indexed = (await Promise.all(ranks.map((key) => admin.zcard(key)))).reduce((a, b) => a + b, 0);
    return { keys: (await admin.keys(`${prefix}*`)).length, counters: (await admin.keys(`${prefix}attempts:*`)).length, indexed };
  };

  it('attack: once the store refuses strangers (nine tenths of maxmemory), 1500 more from as many new addresses are refused and leave no key, counter or index entry behind, so the last tenth stays theirs: three people mid-flow sign in and redeem their codes', async () => {
    const people = await peopleAtLogin(running, client, 3);
    // One of them mistypes her password first (counted, as every wrong one is).
    await people[0]?.browser.submit('login-form', { login: 'demo', password: 'not-demo' }, running.baseUrl);
    expect(people[0]?.browser.lastPage).toContain('id="login-form"');
    // Records nobody's share counts, up to the line; then strangers from new addresses, each admitted one counted.
    expect(await look()).toBe(false);
    for (let i = 0; !(await store.adapter('Interaction').upsert(`filler-${i}`, { kind: 'Interaction', params: { state: 'x'.repeat(16 * 1024) } }, 3600).then(() => false, () => true)); i += 1);
    expect(await look()).toBe(true);
    let admitted = 0;
    while (admitted < 1000 && (await answer(`198.51.${100 + (admitted >> 8)}.${admitted & 255}`)) === 'started') admitted += 1;
    expect(admitted).toBeLessThan(1000);
    const before = await held();
    const answers = new Map<string, number>();
    for (let i = 0; i < 1500; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, (_v, j) => answer(`10.${(i + j) >> 16}.${((i + j) >> 8) & 255}.${(i + j) & 255}`)));
      for (const said of batch) answers.set(said, (answers.get(said) ?? 0) + 1);
    }
    const after = await held();

    const finished = await finishFlows(running, client, people);
    expect({ answers: [...answers], held: after, finished }).toEqual({ answers: [['303 server_error', 1500]], held: before, finished: Array(3).fill([200, 'string']) });
  }, 120_000);

  it('honest: once room frees below the line, a stranger from a new address is admitted and counted, and one address is still held to its share', async () => {
    for (let i = 0; i < 20; i += 1) await store.adapter('Interaction').destroy(`filler-${i}`);
    expect(await look()).toBe(true);
    const before = await held();
    expect(await answer('192.0.2.77')).toBe('started');
    expect((await held()).counters).toBe(before.counters + 1);
    const answers = [];
    for (let i = 1; i <= THRESHOLD; i += 1) answers.push(await answer('192.0.2.77'));
    expect(answers).toEqual(['started', 'started', '303 temporarily_unavailable']);
  });
});

describe('the headroom counts the memory Redis itself counts against maxmemory', () => {
  /**
   * A server speaking just enough RESP for a store's write: INFO answers `info`, SET is taken and remembered, GET reads.
   * Stands for a master whose replica's output buffer (or AOF rewrite buffer) is large: Redis leaves that memory out of
   * its maxmemory check (`mem_not_counted_for_evict`), so it still takes every write.
   */
  async function fakeRedis(info: string): Promise<{ url: string; sets: string[]; close: () => Promise<void> }> {
    const sets: string[] = [];
    const bulk = (s: string): string => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString('utf8');
        for (;;) {
          const parsed = /^\*(\d+)\r\n/.exec(buffered);
          if (!parsed) return;
          let at = parsed[0].length;
          const args: string[] = [];
          for (let i = 0; i < Number(parsed[1]); i += 1) {
            const head = /^\$(\d+)\r\n/.exec(buffered.slice(at));
            if (!head || buffered.length < at + head[0].length + Number(head[1]) + 2) return;
            args.push(buffered.slice(at + head[0].length, at + head[0].length + Number(head[1])));
            at += head[0].length + Number(head[1]) + 2;
          }
          buffered = buffered.slice(at);
          const command = String(args[0]).toLowerCase();
          if (command === 'info') socket.write(bulk(info));
          else if (command === 'set') {
            sets.push(String(args[1]));
            socket.write('+OK\r\n');
          } else if (command === 'get') socket.write('$-1\r\n');
          else socket.write('+OK\r\n');
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return { url: `redis://127.0.0.1:${port}`, sets, close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }) };
  }

  it('honest: a master whose used_memory is at nine tenths only through memory not counted for eviction (a replica resyncing) still takes new flows; one at nine tenths of what it counts refuses them', async () => {
    const lines = (used: number, notCounted: number): string =>
      ['# Server', 'redis_version:7.0.15', 'loading:0', '# Memory', `used_memory:${used}`, 'maxmemory:1000000000', 'maxmemory_policy:noeviction', `mem_not_counted_for_evict:${notCounted}`, ''].join('\r\n');
    const resyncing = await fakeRedis(lines(950_000_000, 300_000_000));
    const store = createRedisStore({ url: resyncing.url, keyPrefix: testPrefix('not-counted'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS, headroomCheckMs: 0 });
    try {
      await expect(store.adapter('Interaction').upsert('stranger', { kind: 'Interaction', params: { state: 's' } }, 3600)).resolves.toBeUndefined();
      expect(resyncing.sets).toHaveLength(1);
    } finally {
      await store.close();
      await resyncing.close();
    }
    const full = await fakeRedis(lines(950_000_000, 10_000_000));
    const twin = createRedisStore({ url: full.url, keyPrefix: testPrefix('counted'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS, headroomCheckMs: 0 });
    try {
      await expect(twin.adapter('Interaction').upsert('stranger', { kind: 'Interaction', params: { state: 's' } }, 3600)).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(full.sets).toEqual([]);
    } finally {
      await twin.close();
      await full.close();
    }
  });
});

describe('a Redis store\'s throttle counters keep to a quarter of maxmemory, as the memory store\'s (memory.test.ts)', () => {
  it('attack: failed sign-ins under ever new names fill each bucket to its cap, then replace its counters of lowest standing: the victim\'s lock outlasts some four shares\' worth of names tried once in each bucket, and her session and a fresh name\'s counter still fit; honest: without a maxmemory nothing is replaced', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] });
    const admin = new Redis(own.url);
    const prefix = testPrefix('counter-quarter');
    const store = createRedisStore({ url: own.url, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    const flood = async (tag: string, names: number): Promise<void> => {
      for (let i = 0; i < names; i += 200) await Promise.all(Array.from({ length: 200 }, (_v, j) => store.attempts.fail(`${tag}-${i + j}`, RULE)));
    };
    const counters = async (): Promise<number> => (await admin.keys(`${prefix}attempts:*`)).length;
    try {
      for (let i = 0; i < RULE.limit; i += 1) await store.attempts.fail('victim-name', RULE);
      const locked = await store.attempts.check('victim-name', RULE);
      const lockedAt = Date.now();
      const cap = capIn4MiB(prefix);
      // Four caps' worth in each of her pool's 64 buckets.
      await flood('random-name', 4 * (ATTEMPT_BUCKETS / 2) * cap);
      expect(await counters()).toBeLessThanOrEqual(ATTEMPT_BUCKETS * cap);
      const ranks = await admin.keys(`${prefix}attempt-rank:*`);
      expect(Math.max(...(await Promise.all(ranks.map((k) => admin.zcard(k)))))).toBeLessThanOrEqual(cap);
      await expectLockKept(store, 'victim-name', locked, lockedAt);
      expect(await store.attempts.check('fresh-name', RULE)).toBe(0);
      await expect(store.attempts.fail('fresh-name', RULE)).resolves.toBe(0);
      await expect(store.adapter('Session').upsert('her-session', { kind: 'Session', uid: 'u', accountId: 'her' }, 3600)).resolves.toBeUndefined();

      await admin.config('SET', 'maxmemory', '0');
      const unlimited = createRedisStore({ url: own.url, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
      const before = await counters();
      await Promise.all(Array.from({ length: 400 }, (_v, i) => unlimited.attempts.fail(`unlimited-name-${i}`, RULE))).finally(() => unlimited.close());
      expect(await counters()).toBe(before + 400);
    } finally {
      await store.close();
      admin.disconnect();
      own.dispose();
    }
  });
});

describe('a Redis store\'s counters of sign-ins and of the rest replace only their own (memory.test.ts)', () => {
  it('attack: management failures from ever new addresses (no password judged) and device counters fill only their own buckets: a sign-in\'s lock is never replaced; honest: they are still counted', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] });
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('counter-pools'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      for (let i = 0; i < RULE.limit; i += 1) await store.attempts.fail('login-name:victim', RULE);
      const locked = await store.attempts.check('login-name:victim', RULE);
      const lockedAt = Date.now();
      for (let i = 0; i < 8000; i += 200) await Promise.all(Array.from({ length: 200 }, (_v, j) => store.attempts.fail(`management:${i + j}`, RULE)));
      for (let i = 0; i < 4000; i += 200) await Promise.all(Array.from({ length: 200 }, (_v, j) => store.attempts.fail(`login-device:${i + j}`, RULE)));
      await expectLockKept(store, 'login-name:victim', locked, lockedAt);
      for (let i = 0; i < RULE.limit; i += 1) await store.attempts.fail('management:last', RULE);
      expect(await store.attempts.check('management:last', RULE)).toBeGreaterThan(0);
    } finally {
      await store.close();
      own.dispose();
    }
  });
});

describe('a Redis store\'s counters are sized with its key prefix, so they keep to their share under any prefix', () => {
  it.each([['the default prefix', 'svc:'], ['a 200-character prefix', `svc-${'p'.repeat(196)}:`], ['a prefix of 2-byte characters', `svc-${'é'.repeat(150)}:`], ['a prefix of 4-byte characters', `svc-${'😀'.repeat(75)}:`], ['a 1000-character prefix', `svc-${'p'.repeat(996)}:`], ['a 4000-character prefix', `svc-${'p'.repeat(3996)}:`]])(
    'each counter takes at most redisCounterBytes of its prefix, with %s (a 300-character one took 2.5 times the 600 bytes once assumed)',
    async (_label, prefix) => {
      const own = await startOwnRedis({ extra: ['--maxmemory', '1gb', '--maxmemory-policy', 'noeviction'] });
      const admin = new Redis(own.url);
      const store = createRedisStore({ url: own.url, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
      const usedMemory = async (): Promise<number> => Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))?.[1]);
      const fail = async (tag: string, names: number): Promise<void> => {
        for (let i = 0; i < names; i += 200) await Promise.all(Array.from({ length: 200 }, (_v, j) => store.attempts.fail(`${tag}-${i + j}`, RULE)));
      };
      try {
        // Every bucket and its indexes made first: what is measured is the counters alone.
        for (const pool of ['login-name:warm', 'other-warm']) await fail(pool, 1000);
        const before = await usedMemory();
        for (const pool of ['login-name:flood', 'other-flood']) await fail(pool, 2000);
        expect(((await usedMemory()) - before) / 4000).toBeLessThanOrEqual(redisCounterBytes(prefix));
        expect(await admin.dbsize()).toBe(6000 + 2 * ATTEMPT_BUCKETS);
      } finally {
        await store.close();
        admin.disconnect();
        own.dispose();
      }
    },
  );
});

describe('a Redis store\'s counters that failed often once stand above the rest only until others replace them (GreedyDual, as memory.test.ts)', () => {
  /** Names whose counters fall in `name`'s bucket (an attacker, not knowing the MAC key, tries some 64 times as many). */
  const inBucketOf = (prefix: string, name: string, tag: string, count: number): string[] => {
    const bucket = (n: string): string => attemptCounterKey(prefix, n).slice(prefix.length, prefix.length + 'attempts:{px}'.length);
    const names: string[] = [];
    for (let i = 0; names.length < count; i += 1) if (bucket(`${tag}-${i}`) === bucket(name)) names.push(`${tag}-${i}`);
    return names;
  };

  it('attack: with her bucket held by counters of two failures, each guess at her name followed by one new name in her bucket still locks her at the limit; honest: names tried once in her bucket leave her guesses counted too', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] });
    const admin = new Redis(own.url);
    const guessed = async (prefix: string, failuresEach: number): Promise<number[]> => {
      const cap = capIn4MiB(prefix);
      const store = createRedisStore({ url: own.url, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
      try {
        for (const name of inBucketOf(prefix, 'victim-name', 'filler', cap)) for (let n = 0; n < failuresEach; n += 1) await store.attempts.fail(name, RULE);
        const fresh = inBucketOf(prefix, 'victim-name', 'fresh', 3 * RULE.limit);
        const waits: number[] = [];
        for (const name of fresh) {
          waits.push(await store.attempts.fail('victim-name', RULE));
          expect(await store.attempts.fail(name, RULE)).toBe(0);
        }
        waits.push(await store.attempts.check('victim-name', RULE));
        return waits;
      } finally {
        await store.close();
      }
    };
    try {
      const counted = (waits: number[]): number => waits.findIndex((w) => w > 0);
      expect(counted(await guessed(testPrefix('greedy-dual-two'), 2))).toBe(RULE.limit);
      expect(counted(await guessed(testPrefix('greedy-dual-once'), 1))).toBe(RULE.limit);
    } finally {
      admin.disconnect();
      own.dispose();
    }
  });

  it('attack: counters that count a share, not guesses (expendable: each address\'s new flows), make room first however much they counted: a flood of them in her bucket never replaces her lock; honest: one counts to its limit', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory', '4mb', '--maxmemory-policy', 'noeviction'] });
    const prefix = testPrefix('greedy-dual-expendable');
    const store = createRedisStore({ url: own.url, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    const cap = capIn4MiB(prefix);
    const share = { ...RULE, consecutiveLimit: undefined, expendable: true };
    try {
      for (let i = 0; i < RULE.limit; i += 1) await store.attempts.fail('victim-name', RULE);
      const locked = await store.attempts.check('victim-name', RULE);
      const lockedAt = Date.now();
      expect(locked).toBeGreaterThan(0);
      const flows = inBucketOf(prefix, 'victim-name', 'flow-address', 4 * cap);
      for (const address of flows) for (let n = 0; n < 3; n += 1) expect(await store.attempts.fail(address, share)).toBe(0);
      await expectLockKept(store, 'victim-name', locked, lockedAt);
      const [busy] = inBucketOf(prefix, 'victim-name', 'busy-address', 1);
      for (let i = 0; i < RULE.limit; i += 1) await store.attempts.fail(busy ?? '', share);
      expect(await store.attempts.check(busy ?? '', share)).toBeGreaterThan(0);
    } finally {
      await store.close();
      own.dispose();
    }
  });
});

describe('a Redis Cluster\'s counters keep to a quarter of each master\'s maxmemory, however its 64 buckets fall on the masters', () => {
  it('attack: failed sign-ins under ever new names leave no master with more than a quarter of its own maxmemory in counters, the master holding the most buckets the smallest; honest: every master still holds counters, the victim\'s lock is kept; and while another master is away, the last cap known stands', async () => {
    const cluster = await startOwnCluster();
    const nodes = cluster.nodes.map((n) => new Redis({ host: '127.0.0.1', port: n.port }));
    const prefix = testPrefix('cluster-uneven');
    const store = createRedisStore({ clusterNodes: cluster.nodes, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      // Which node serves each bucket's slot: the buckets of 64 characters do not fall evenly on three masters.
      const ranges = (await nodes[0]?.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      const owner = async (key: string): Promise<number> => {
        const slot = Number(await nodes[0]?.call('CLUSTER', 'KEYSLOT', key));
        const port = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
        return cluster.nodes.findIndex((n) => n.port === port);
      };
      const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const buckets = cluster.nodes.map(() => 0);
      for (const c of [...'lo'].flatMap((pool) => [...chars].map((x) => `${pool}${x}`))) {
        const i = await owner(`{${c}}`);
        buckets[i] = (buckets[i] ?? 0) + 1;
      }
      const most = buckets.indexOf(Math.max(...buckets));
      const maxima = cluster.nodes.map((_n, i) => (i === most ? 4 : 8) * 2 ** 20);
      await Promise.all(nodes.map((node, i) => node.config('SET', 'maxmemory', String(maxima[i]))));
      for (let i = 0; i < RULE.limit; i += 1) await store.attempts.fail('victim-name', RULE);
      const locked = await store.attempts.check('victim-name', RULE);
      const lockedAt = Date.now();
      for (let i = 0; i < 8000; i += 200) await Promise.all(Array.from({ length: 200 }, (_v, j) => store.attempts.fail(`random-name-${i + j}`, RULE)));
      const held = (await Promise.all(nodes.map((node) => node.keys(`${prefix}attempts:*`)))).map((keys) => keys.length);
      expect(held.every((n) => n > 0)).toBe(true);
      expect(held.map((n, i) => n <= ((maxima[i] ?? 0) * COUNTER_SHARE) / redisCounterBytes(prefix))).toEqual(held.map(() => true));
      await expectLockKept(store, 'victim-name', locked, lockedAt);

      // Attack: a flood while another master is away (a failover under way; the masters still there serve their slots
      // meanwhile). Its INFO fails, and the counters keep the last cap known on the master holding the most buckets.
      await Promise.all(nodes.map((node) => node.config('SET', 'cluster-require-full-coverage', 'no')));
      const away = [1, 2].find((i) => i !== most) as number;
      nodes[away]?.disconnect();
      cluster.stopNode(away);
      const ownerOf = (name: string): number => {
        const slot = keySlot(attemptCounterKey(prefix, name));
        const port = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
        return cluster.nodes.findIndex((n) => n.port === port);
      };
      const onMost = Array.from({ length: 6000 }, (_v, i) => `outage-name-${i}`).filter((name) => ownerOf(name) === most).slice(0, 1500);
      // The store asks the masters again on its next counter, and meets the one away.
      const clock = clockAhead(1000);
      try {
        for (let i = 0; i < onMost.length; i += 100) await Promise.all(onMost.slice(i, i + 100).map((name) => store.attempts.fail(name, RULE)));
      } finally {
        clock.restore();
      }
      expect((await nodes[most]?.keys(`${prefix}attempts:*`))?.length).toBeLessThanOrEqual(((maxima[most] ?? 0) * COUNTER_SHARE) / redisCounterBytes(prefix));
    } finally {
      await store.close();
      for (const node of nodes) node.disconnect();
      cluster.dispose();
    }
  });
});

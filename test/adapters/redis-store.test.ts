import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis, type Cluster } from 'ioredis';

import { refOf } from '../../adapters/inventory.js';
import { attemptCounterKey, keySlot } from '../../adapters/redis-attempt-keys.js';
import { createRedisStore } from '../../adapters/redis.js';
import { StoreUnavailableError } from '../../lib/errors.js';
import { capturingLogger } from '../helpers/logs.js';
import { startRelay } from '../helpers/redis-relay.js';
import { deletePrefix, SHARED_REDIS_URL, startOwnCluster, startOwnRedis, testPrefix, TEST_STORE_TIMEOUT_MS, type OwnCluster } from '../helpers/redis.js';

type Store = ReturnType<typeof createRedisStore>;

const admin = new Redis(SHARED_REDIS_URL);
const prefixes: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await Promise.all(prefixes.splice(0).map((p) => deletePrefix(SHARED_REDIS_URL, p)));
});
afterAll(() => admin.disconnect());

function open(prefix: string, url = SHARED_REDIS_URL): Store {
  const store = createRedisStore({ url, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
  stores.push(store);
  return store;
}

function fresh(label: string): string {
  const prefix = testPrefix(label);
  prefixes.push(prefix);
  return prefix;
}

/** Counts what a store's client sends: round trips (a pipeline is one) and commands. */
function countSent(client: Redis | Cluster): { trips: number; commands: number } {
  const counts = { trips: 0, commands: 0 };
  const pipelines = new WeakSet<object>();
  const original = client.sendCommand.bind(client) as (command: unknown, stream?: unknown) => unknown;
  (client as { sendCommand: unknown }).sendCommand = (command: unknown, stream?: { isPipeline?: boolean }): unknown => {
    counts.commands += 1;
    if (!stream?.isPipeline) counts.trips += 1;
    else if (!pipelines.has(stream)) {
      pipelines.add(stream);
      counts.trips += 1;
    }
    return original(command, stream);
  };
  return counts;
}

/** Waits until `n` connections are subscribed to the store's invalidation channel (bounded by polls, not time). */
async function subscribers(prefix: string, n: number): Promise<void> {
  for (let i = 0; i < 500; i += 1) {
    const [, count] = (await admin.call('PUBSUB', 'NUMSUB', `${prefix}invalidate`)) as [string, number];
    if (count >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the stores never subscribed');
}

const jwks = (kid: string): { keys: { kty: string; kid: string; n: string; e: string }[] } => ({ keys: [{ kty: 'RSA', kid, n: 'AQAB', e: 'AQAB' }] });

/**
 * The operation timeout of stores whose answers are lost on purpose: each such test waits it out, so it is shorter
 * than the test stores' own, and long enough that a command answered on a busy machine is never taken for lost.
 */
const LOST_ANSWER_TIMEOUT_MS = 2000;

describe('redis store: clients cached in every process, invalidated everywhere at once', () => {
  it('serves a client (and its marks) from the cache, and sees an update, a disabling mark, its removal, a reissue mark and a deletion made through another store at once', async () => {
    const prefix = fresh('cache');
    const [a, b] = [open(prefix), open(prefix)];
    await subscribers(prefix, 2);
    const sent = countSent(b.client);
    await a.adapter('Client').upsert('rp', { client_id: 'rp', jwks: jwks('one') });
    expect((await b.adapter('Client').find('rp'))?.jwks).toEqual(jwks('one'));
    expect(await b.adapter('ClientSuspension').find('rp')).toBeUndefined();
    expect(await b.adapter('RegistrationAccessTokenReissue').find('rp')).toBeUndefined();
    const warm = sent.commands;
    expect((await b.adapter('Client').find('rp'))?.jwks).toEqual(jwks('one'));
    expect(await b.adapter('ClientSuspension').find('rp')).toBeUndefined();
    expect(await b.adapter('RegistrationAccessTokenReissue').find('rp')).toBeUndefined();
    expect(sent.commands).toBe(warm);
    await a.adapter('RegistrationAccessTokenReissue').upsert('rp', { generation: 'g1' });
    expect(await b.adapter('RegistrationAccessTokenReissue').find('rp')).toEqual({ generation: 'g1' });

    await a.adapter('Client').upsert('rp', { client_id: 'rp', jwks: jwks('two') });
    expect((await b.adapter('Client').find('rp'))?.jwks).toEqual(jwks('two'));
    await a.adapter('ClientSuspension').upsert('rp', { disabled_at: 1, disabled_by: 'admin' });
    expect(await b.adapter('ClientSuspension').find('rp')).toEqual({ disabled_at: 1, disabled_by: 'admin' });
    await a.adapter('ClientSuspension').destroy('rp');
    expect(await b.adapter('ClientSuspension').find('rp')).toBeUndefined();
    await a.adapter('Client').destroy('rp');
    expect(await b.adapter('Client').find('rp')).toBeUndefined();

    await a.adapter('Client').upsert('rp2', { client_id: 'rp2' });
    expect(await b.adapter('Client').find('rp2')).toBeDefined();
    expect(await a.inventory.destroy('Client', refOf('rp2'))).toBe(true);
    expect(await b.adapter('Client').find('rp2')).toBeUndefined();
  });

  it('attack: the revocation marks of 10 001 sessions looked up within the minute evict no client: each model has its own 10 000 entries', async () => {
    const prefix = fresh('cache-churn');
    const store = open(prefix);
    await subscribers(prefix, 1);
    await store.adapter('Client').upsert('rp', { client_id: 'rp' });
    expect(await store.adapter('Client').find('rp')).toBeDefined();
    for (let i = 0; i < 10_001; i += 1000) {
      await Promise.all(Array.from({ length: Math.min(1000, 10_001 - i) }, (_, j) => store.adapter('SessionRevocation').find(`uid-${i + j}`)));
    }
    const sent = countSent(store.client);
    expect(await store.adapter('Client').find('rp')).toBeDefined();
    expect(sent.commands).toBe(0);
    // The oldest mark looked up made room for the newest; the newest is served from the cache.
    expect(await store.adapter('SessionRevocation').find('uid-10000')).toBeUndefined();
    expect(sent.commands).toBe(0);
    expect(await store.adapter('SessionRevocation').find('uid-0')).toBeUndefined();
    expect(sent.commands).toBe(1);
  });

  it('honest: a session revoked through another process is seen marked at once, also when this one cached it unmarked', async () => {
    const prefix = fresh('cache-mark');
    const [a, b] = [open(prefix), open(prefix)];
    await subscribers(prefix, 2);
    expect(await b.adapter('SessionRevocation').find('uid-1')).toBeUndefined();
    await a.adapter('SessionRevocation').upsert('uid-1', { revoked_at: 1 }, 60);
    expect(await b.adapter('SessionRevocation').find('uid-1')).toEqual({ revoked_at: 1 });
  });

  it('attack: a client disabled or a session revoked through one store of this process is seen at once by another whose Redis answers late (its invalidation arrives after the write is answered), also when the writer caches nothing', async () => {
    const prefix = fresh('cache-lagging');
    const link = await startRelay(Number(new URL(SHARED_REDIS_URL).port));
    link.lag(200);
    try {
      const lagging = open(prefix, `redis://127.0.0.1:${link.port}`);
      const writer = open(prefix);
      const silent = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS, cachedModels: [] });
      stores.push(silent);
      await subscribers(prefix, 2);
      // Read until both come from its cache: subscribed, with the answer to that back late.
      const sent = countSent(lagging.client);
      let cached = false;
      for (let i = 0; i < 100 && !cached; i += 1) {
        const before = sent.commands;
        expect([await lagging.adapter('ClientSuspension').find('rp'), await lagging.adapter('SessionRevocation').find('uid-1')]).toEqual([undefined, undefined]);
        cached = sent.commands === before;
      }
      expect(cached).toBe(true);
      await writer.adapter('ClientSuspension').upsert('rp', { disabled_at: 1, disabled_by: 'ops' });
      await silent.adapter('SessionRevocation').upsert('uid-1', { revoked_at: 1 }, 60);
      expect([await lagging.adapter('ClientSuspension').find('rp'), await lagging.adapter('SessionRevocation').find('uid-1')]).toEqual([{ disabled_at: 1, disabled_by: 'ops' }, { revoked_at: 1 }]);
    } finally {
      link.close();
    }
  });

  it('attack: two writes of one record at once: the later one answered is seen at once by another store of this process, even when the earlier one\'s invalidation reached it first', async () => {
    const prefix = fresh('cache-two-writes');
    const link = await startRelay(Number(new URL(SHARED_REDIS_URL).port));
    link.lag(200);
    const gate = `${prefix}gate`;
    try {
      const lagging = open(prefix, `redis://127.0.0.1:${link.port}`);
      const [first, second] = [0, 1].map(() => createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS, cachedModels: [] }));
      stores.push(first as Store, second as Store);
      await subscribers(prefix, 1);
      const sent = countSent(lagging.client);
      let cached = false;
      for (let i = 0; i < 100 && !cached; i += 1) {
        const before = sent.commands;
        expect(await lagging.adapter('ClientSuspension').find('rp')).toBeUndefined();
        cached = sent.commands === before;
      }
      expect(cached).toBe(true);
      // The second write is sent first but held at Redis behind a blocking command of its connection.
      const blocked = (second as Store).client as Redis;
      const id = (await blocked.call('CLIENT', 'ID')) as number;
      void blocked.blpop(gate, 0);
      const later = (second as Store).adapter('ClientSuspension').upsert('rp', { disabled_at: 2, disabled_by: 'second' });
      let held = false;
      for (let i = 0; i < 500 && !held; i += 1) {
        const list = (await admin.call('CLIENT', 'LIST')) as string;
        held = list.split('\n').some((line) => line.startsWith(`id=${id} `) && line.includes('cmd=blpop') && !/ qbuf=0 /.test(line));
        if (!held) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(held).toBe(true);
      // The first write lands and its invalidation reaches this process; the lagging store reads it.
      await (first as Store).adapter('ClientSuspension').upsert('rp', { disabled_at: 1, disabled_by: 'first' });
      expect(await lagging.adapter('ClientSuspension').find('rp')).toEqual({ disabled_at: 1, disabled_by: 'first' });
      await admin.lpush(gate, 'go');
      await later;
      expect(await admin.get(`${prefix}ClientSuspension:${refOf('rp')}`)).toContain('second');
      expect(await lagging.adapter('ClientSuspension').find('rp')).toEqual({ disabled_at: 2, disabled_by: 'second' });
    } finally {
      link.close();
    }
  });

  it('attack: a write through a store whose invalidations no cache of this process hears (another Redis server, one prefix) is answered at once, not after its operation timeout', async () => {
    const prefix = fresh('cache-two-servers');
    const own = await startOwnRedis();
    try {
      const here = open(prefix);
      await subscribers(prefix, 1);
      await here.adapter('ClientSuspension').upsert('rp', { disabled_at: 1, disabled_by: 'here' });
      expect(await here.adapter('ClientSuspension').find('rp')).toEqual({ disabled_at: 1, disabled_by: 'here' });
      // An operation timeout longer than the test's: a write waiting it out never ends in time.
      const there = createRedisStore({ url: own.url, keyPrefix: prefix, operationTimeoutMs: 120_000, cachedModels: [] });
      stores.push(there);
      await there.adapter('ClientSuspension').upsert('rp', { disabled_at: 2, disabled_by: 'there' });
      await there.adapter('SessionRevocation').upsert('uid-1', { revoked_at: 2 }, 60);
      expect(await there.adapter('ClientSuspension').find('rp')).toEqual({ disabled_at: 2, disabled_by: 'there' });
      // Honest: the store on the shared server still reads its own server's record, and sees its own next write at once.
      expect(await here.adapter('ClientSuspension').find('rp')).toEqual({ disabled_at: 1, disabled_by: 'here' });
      await here.adapter('ClientSuspension').upsert('rp', { disabled_at: 3, disabled_by: 'here' });
      expect(await here.adapter('ClientSuspension').find('rp')).toEqual({ disabled_at: 3, disabled_by: 'here' });
      await Promise.all(stores.splice(0).map((s) => s.close()));
    } finally {
      own.dispose();
    }
  });

  it('attack: a client disabled, a session revoked, a registration access token reissued or a client deleted through a process that caches nothing (an admin process with `cachedModels: []`) is seen at once by one that cached them', async () => {
    const prefix = fresh('cache-off-writer');
    const admin = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS, cachedModels: [] });
    stores.push(admin);
    const provider = open(prefix);
    await subscribers(prefix, 1);
    await admin.adapter('Client').upsert('rp', { client_id: 'rp' });
    expect(await provider.adapter('Client').find('rp')).toBeDefined();
    expect(await provider.adapter('ClientSuspension').find('rp')).toBeUndefined();
    expect(await provider.adapter('SessionRevocation').find('uid-1')).toBeUndefined();
    expect(await provider.adapter('RegistrationAccessTokenReissue').find('rp')).toBeUndefined();
    await admin.adapter('ClientSuspension').upsert('rp', { disabled_at: 1, disabled_by: 'admin' });
    await admin.adapter('SessionRevocation').upsert('uid-1', { revoked_at: 1 }, 60);
    await admin.adapter('RegistrationAccessTokenReissue').upsert('rp', { generation: 'g1' });
    expect(await provider.adapter('RegistrationAccessTokenReissue').find('rp')).toEqual({ generation: 'g1' });
    expect(await provider.adapter('ClientSuspension').find('rp')).toEqual({ disabled_at: 1, disabled_by: 'admin' });
    expect(await provider.adapter('SessionRevocation').find('uid-1')).toEqual({ revoked_at: 1 });
    expect(await admin.inventory.destroy('Client', refOf('rp'))).toBe(true);
    expect(await provider.adapter('Client').find('rp')).toBeUndefined();
  });

  it('honest: a process caching only clients still sees another process\'s disabling mark at once, and a process caching nothing reads every record from Redis', async () => {
    const prefix = fresh('cache-partial');
    const narrow = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS, cachedModels: ['Client'] });
    const none = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS, cachedModels: [] });
    stores.push(narrow, none);
    const full = open(prefix);
    await subscribers(prefix, 2);
    expect(await full.adapter('ClientSuspension').find('rp')).toBeUndefined();
    await narrow.adapter('ClientSuspension').upsert('rp', { disabled_at: 2, disabled_by: 'ops' });
    expect(await full.adapter('ClientSuspension').find('rp')).toEqual({ disabled_at: 2, disabled_by: 'ops' });
    const sent = countSent(none.client);
    expect(await none.adapter('ClientSuspension').find('rp')).toEqual({ disabled_at: 2, disabled_by: 'ops' });
    expect(await none.adapter('ClientSuspension').find('rp')).toBeDefined();
    expect(sent.commands).toBe(2);
  });

  it('returns a copy from the cache', async () => {
    const prefix = fresh('cache-copy');
    const store = open(prefix);
    await subscribers(prefix, 1);
    await store.adapter('Client').upsert('rp', { client_id: 'rp', redirect_uris: ['https://rp.example/cb'] });
    const first = await store.adapter('Client').find('rp');
    (first?.redirect_uris as string[]).push('https://evil.example/cb');
    expect((await store.adapter('Client').find('rp'))?.redirect_uris).toEqual(['https://rp.example/cb']);
  });

  it('serves nothing from the cache while its invalidation channel is down, so a lost message leaves nothing stale', async () => {
    const prefix = fresh('cache-down');
    const own = await startOwnRedis();
    const other = new Redis(own.url);
    try {
      const store = open(prefix, own.url);
      await store.adapter('Client').upsert('rp', { client_id: 'rp', jwks: jwks('one') });
      const subscribed = async (): Promise<void> => {
        while (((await other.call('PUBSUB', 'NUMSUB', `${prefix}invalidate`)) as [string, number])[1] < 1) await new Promise((r) => setTimeout(r, 10));
      };
      await subscribed();
      expect((await store.adapter('Client').find('rp'))?.jwks).toEqual(jwks('one'));
      // The subscription drops, and a write lands without a message (as from a process that lost its connection).
      await other.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      await other.set(`${prefix}Client:${refOf('rp')}`, `j|${JSON.stringify({ client_id: 'rp', jwks: jwks('two') })}`);
      expect((await store.adapter('Client').find('rp'))?.jwks).toEqual(jwks('two'));
      // Subscribed again, it serves from the cache again (and sees the next change).
      await subscribed();
      await store.adapter('Client').upsert('rp', { client_id: 'rp', jwks: jwks('three') });
      expect((await store.adapter('Client').find('rp'))?.jwks).toEqual(jwks('three'));
      await Promise.all(stores.splice(0).map((s) => s.close()));
    } finally {
      other.disconnect();
      own.dispose();
    }
  });
});

describe('redis store: one request as one unit of store work', () => {
  it('sends parallel reads in one round trip and the writes of the request in one more, and writes each record with one command', async () => {
    const prefix = fresh('batch-trips');
    const store = open(prefix);
    await store.adapter('Grant').upsert('g', { kind: 'Grant' }, 60);
    await store.adapter('Interaction').upsert('i', { kind: 'Interaction' }, 60);
    const sent = countSent(store.client);
    await store.batch?.(async () => {
      await Promise.all([store.adapter('Grant').find('g'), store.adapter('Interaction').find('i')]);
      await store.adapter('Interaction').find('i');
      await store.adapter('Interaction').destroy('i');
      await store.adapter('Interaction').upsert('i2', { kind: 'Interaction' }, 60);
      await store.adapter('Grant').upsert('g', { kind: 'Grant', accountId: 'a' }, 60);
    });
    // The deletion and the writes in one MULTI (two commands more), so neither lands without the other.
    expect(sent).toEqual({ trips: 2, commands: 2 + 3 + 2 });
    expect(await store.adapter('Grant').find('g')).toEqual({ kind: 'Grant', accountId: 'a' });
  });

  it('does not write a session again when only its expiry moved (by less than a minute), and writes it when it changed', async () => {
    const prefix = fresh('batch-session');
    const store = open(prefix);
    const key = `${prefix}Session:${refOf('s')}`;
    const payload = { kind: 'Session', uid: 'u', accountId: 'a', exp: 1000, jti: 's' };
    await store.adapter('Session').upsert('s', payload, 100);
    await store.batch?.(async () => {
      const found = await store.adapter('Session').find('s');
      await store.adapter('Session').upsert('s', { ...found, exp: 1010 }, 5000);
    });
    expect(await admin.ttl(key)).toBeLessThanOrEqual(100);
    expect((await store.adapter('Session').find('s'))?.exp).toBe(1000);
    await store.batch?.(async () => {
      const found = await store.adapter('Session').find('s');
      await store.adapter('Session').upsert('s', { ...found, exp: 1010, loginTs: 5 }, 5000);
    });
    expect(await admin.ttl(key)).toBeGreaterThan(100);
    expect(await store.adapter('Session').find('s')).toMatchObject({ exp: 1010, loginTs: 5 });
  });

  it('honest: a read run after the request\'s writes (flush) goes in their round trip, after them, and sees them', async () => {
    const prefix = fresh('batch-flush-read');
    const store = open(prefix);
    await store.client.ping();
    const sent = countSent(store.client);
    const found = await store.batch?.(async () => {
      await store.adapter('Grant').upsert('g', { kind: 'Grant', accountId: 'a' }, 60);
      return store.flush?.(() => store.adapter('Grant').find('g'));
    });
    expect(found).toMatchObject({ accountId: 'a' });
    expect(sent).toEqual({ trips: 1, commands: 2 });
  });

  it('attack: a write refused as the request\'s writes are sent before a read (flush) rejects with 503, though the read was answered', async () => {
    const own = await startOwnRedis();
    const other = new Redis(own.url);
    try {
      const prefix = testPrefix('batch-flush-fail');
      await other.call('ACL', 'SETUSER', 'app', 'on', '>pw', '+@all', '-set', '~*', '&*');
      const store = open(prefix, `redis://app:pw@127.0.0.1:${own.port}`);
      let read = false;
      await expect(
        store.batch?.(async () => {
          await store.adapter('Grant').upsert('g', { kind: 'Grant' }, 60);
          await store.flush?.(async () => {
            read = (await store.adapter('GrantRevocation').find('g')) === undefined;
          });
        }),
      ).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(read).toBe(true);
      await Promise.all(stores.splice(0).map((s) => s.close()));
    } finally {
      other.disconnect();
      own.dispose();
    }
  });

  it('attack: a deferred grant index write Redis answers NOSCRIPT (its script cache flushed) is in the store before the read sent with it (flush): its re-sent script does not land after the read', async () => {
    const own = await startOwnRedis();
    const other = new Redis(own.url);
    const monitor = await other.monitor();
    try {
      const prefix = testPrefix('batch-flush-noscript');
      const store = open(prefix, own.url);
      // The connection sends the index script by its SHA from now on; then the server forgets it.
      await store.adapter('AccessToken').upsert('t0', { kind: 'AccessToken', grantId: 'g' }, 60);
      await other.script('FLUSH');
      const seen: string[] = [];
      const [index, mark] = [`${prefix}grant:${refOf('g')}`, `${prefix}GrantRevocation:${refOf('g')}`];
      const done = new Promise<void>((resolve) => {
        monitor.on('monitor', (_time: string, args: string[]) => {
          if (args[0]?.toUpperCase() === 'ZADD' && args[1] === index) seen.push('index');
          if (args[0]?.toUpperCase() === 'GET' && args[1] === mark) seen.push('read');
          if (args[0]?.toUpperCase() === 'ECHO' && args[1] === prefix) resolve();
        });
      });
      await store.batch?.(async () => {
        await store.adapter('AccessToken').upsert('t1', { kind: 'AccessToken', grantId: 'g' }, 60);
        expect(await store.flush?.(() => store.adapter('GrantRevocation').find('g'))).toBeUndefined();
      });
      // Monitored after everything the store sent, once its answer came.
      await other.echo(prefix);
      await done;
      expect(seen).toEqual(['index', 'read']);
      expect(await other.zcard(index)).toBe(2);
    } finally {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      other.disconnect();
      monitor.disconnect();
      own.dispose();
    }
  });

  it('reads a flow record ahead with the other reads of its tick, so a find of it later in the request costs nothing; outside a request, or of another model, nothing', async () => {
    const prefix = fresh('batch-read-ahead');
    const store = open(prefix);
    await store.adapter('Session').upsert('s', { kind: 'Session', uid: 'u', jti: 's' }, 60);
    await store.adapter('Interaction').upsert('i', { kind: 'Interaction' }, 60);
    const sent = countSent(store.client);
    store.readAhead?.('Session', 's');
    await store.batch?.(async () => {
      store.readAhead?.('Client', 'c');
      expect(sent).toEqual({ trips: 0, commands: 0 });
      store.readAhead?.('Session', 's');
      store.readAhead?.('Interaction', 'i');
      expect(await store.adapter('Interaction').find('i')).toMatchObject({ kind: 'Interaction' });
      expect(await store.adapter('Session').find('s')).toMatchObject({ uid: 'u' });
    });
    expect(sent).toEqual({ trips: 1, commands: 2 });
  });

  it('rejects with 503 when its writes fail at the end, even though the request itself succeeded', async () => {
    const own = await startOwnRedis();
    const other = new Redis(own.url);
    try {
      const prefix = testPrefix('batch-fail');
      // SET is allowed on the uid index only: the session record's write fails.
      await other.call('ACL', 'SETUSER', 'app', 'on', '>pw', '+@all', '-set', '~*', '&*', `(+set ~${prefix}sessionUid:*)`);
      const store = open(prefix, `redis://app:pw@127.0.0.1:${own.port}`);
      let served = false;
      await expect(
        store.batch?.(async () => {
          await store.adapter('Session').upsert('s', { kind: 'Session', uid: 'u' }, 60);
          served = true;
        }),
      ).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(served).toBe(true);
      await Promise.all(stores.splice(0).map((s) => s.close()));
    } finally {
      other.disconnect();
      own.dispose();
    }
  });
});

describe('redis store: a request whose writes fail at the end deletes nothing either, so it can be sent again', () => {
  /** Ends interaction `i` and replaces session `s` with `s2` as a resume does, giving code `code`: one batch. */
  const resume = (store: Store, code = 'c'): Promise<void> | undefined =>
    store.batch?.(async () => {
      await store.adapter('Interaction').destroy('i');
      await store.adapter('Session').destroy('s');
      await store.adapter('Session').upsert('s2', { kind: 'Session', uid: 'u', accountId: 'a' }, 60);
      await store.adapter('AuthorizationCode').upsert(code, { kind: 'AuthorizationCode', accountId: 'a' }, 60);
    });
  const before = async (store: Store): Promise<void> => {
    await store.adapter('Interaction').upsert('i', { kind: 'Interaction', uid: 'i' }, 60);
    await store.adapter('Session').upsert('s', { kind: 'Session', uid: 'u', accountId: 'a' }, 60);
  };
  const left = async (store: Store): Promise<boolean[]> =>
    Promise.all([store.adapter('Interaction').find('i'), store.adapter('Session').find('s'), store.adapter('Session').find('s2'), store.adapter('AuthorizationCode').find('c')].map(async (found) => (await found) !== undefined));

  it('attack: a full Redis (noeviction at its maxmemory) refuses the writes (OOM) and would take the deletions: the interaction and her session stay, nothing of the request lands (503)', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory-policy', 'noeviction'] });
    const other = new Redis(own.url);
    try {
      const store = open(testPrefix('batch-whole'), own.url);
      await before(store);
      const used = Number(/^used_memory:(\d+)/m.exec(await other.info('memory'))?.[1]);
      await other.config('SET', 'maxmemory', String(used - 1024));
      try {
        await expect(resume(store)).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await other.config('SET', 'maxmemory', '0');
      }
      expect(await left(store)).toEqual([true, true, false, false]);
      await Promise.all(stores.splice(0).map((s) => s.close()));
    } finally {
      other.disconnect();
      own.dispose();
    }
  });

  it('honest: a resume whose MULTI a full Redis discarded (with the first EVAL of a script on its connection) lands whole when sent again once Redis has room: no script goes by a SHA the server never loaded, failing alone at EXEC while the deletions land', async () => {
    const own = await startOwnRedis({ extra: ['--maxmemory-policy', 'noeviction'] });
    const other = new Redis(own.url);
    try {
      const store = open(testPrefix('batch-whole-script'), own.url);
      await before(store);
      // A code of a grant: its write adds it to the grant's index with a script.
      const granted = (): Promise<void> | undefined =>
        store.batch?.(async () => {
          await store.adapter('Interaction').destroy('i');
          await store.adapter('Session').upsert('s2', { kind: 'Session', uid: 'u', accountId: 'a' }, 60);
          await store.adapter('AuthorizationCode').upsert('c', { kind: 'AuthorizationCode', accountId: 'a', grantId: 'g' }, 60);
        });
      const used = Number(/^used_memory:(\d+)/m.exec(await other.info('memory'))?.[1]);
      await other.config('SET', 'maxmemory', String(used - 1024));
      try {
        await expect(granted()).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await other.config('SET', 'maxmemory', '0');
      }
      expect(await left(store)).toEqual([true, true, false, false]);
      await granted();
      expect(await left(store)).toEqual([false, true, true, true]);
      await Promise.all(stores.splice(0).map((s) => s.close()));
    } finally {
      other.disconnect();
      own.dispose();
    }
  });

  it('attack: a deletion deferred before an operation that acts at once (a consume) still lands only with the writes after it: refused (503), her interaction stays; honest: sent again, it lands whole', async () => {
    const own = await startOwnRedis();
    const other = new Redis(own.url);
    try {
      const prefix = testPrefix('batch-whole-consume');
      await other.call('ACL', 'SETUSER', 'app', 'on', '>pw', '+@all', '&*', 'resetkeys', '%R~*', `~${prefix}Interaction:*`, `~${prefix}AuthorizationCode:*`);
      const store = open(prefix, `redis://app:pw@127.0.0.1:${own.port}`);
      await store.adapter('Interaction').upsert('i', { kind: 'Interaction', uid: 'i' }, 60);
      const ending = async (code: string): Promise<void> => {
        await store.adapter('AuthorizationCode').upsert(code, { kind: 'AuthorizationCode', accountId: 'a' }, 60);
        await store.batch?.(async () => {
          await store.adapter('Interaction').destroy('i');
          await store.adapter('AuthorizationCode').consume(code);
          await store.adapter('AccessToken').upsert('t', { kind: 'AccessToken', accountId: 'a' }, 60);
        });
      };
      await expect(ending('x')).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await store.adapter('Interaction').find('i')).toEqual(expect.objectContaining({ uid: 'i' }));
      // honest: once it takes them, the same request lands whole.
      await other.call('ACL', 'SETUSER', 'app', 'resetkeys', '~*');
      await ending('y');
      expect([await store.adapter('Interaction').find('i'), await store.adapter('AccessToken').find('t')]).toEqual([undefined, expect.objectContaining({ accountId: 'a' })]);
      await Promise.all(stores.splice(0).map((s) => s.close()));
    } finally {
      other.disconnect();
      own.dispose();
    }
  });

  it('attack: on a Cluster whose master of the code refuses writes, the interaction and her session on other masters are not deleted (503); sent again once it takes them, it lands whole', async () => {
    const cluster = await startOwnCluster();
    let node: Redis | undefined;
    try {
      const prefix = testPrefix('batch-whole-cluster');
      const store = createRedisStore({ clusterNodes: cluster.nodes, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
      stores.push(store);
      await before(store);
      const nodeOf = (model: string, id: string): string | undefined => (store.client as Cluster).slots[keySlot(`${prefix}${model}:${refOf(id)}`)]?.[0];
      const apart = new Set([nodeOf('Interaction', 'i'), nodeOf('Session', 's')]);
      let code = 'c';
      for (let n = 0; apart.has(nodeOf('AuthorizationCode', code)); n += 1) code = `c${n}`;
      const [host, port] = String(nodeOf('AuthorizationCode', code)).split(':');
      node = new Redis({ host, port: Number(port) });
      await node.call('ACL', 'SETUSER', 'default', '-set');
      try {
        await expect(resume(store, code)).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await node.call('ACL', 'SETUSER', 'default', '+@all');
      }
      const [interaction, session, , issued] = await left(store);
      expect({ interaction, session, issued }).toEqual({ interaction: true, session: true, issued: false });
      await store.ping().catch(() => undefined);
      await resume(store, code);
      expect(await Promise.all([store.adapter('Interaction').find('i'), store.adapter('Session').find('s'), store.adapter('AuthorizationCode').find(code)])).toEqual([undefined, undefined, expect.objectContaining({ accountId: 'a' })]);
      await Promise.all(stores.splice(0).map((s) => s.close()));
    } finally {
      node?.disconnect();
      cluster.dispose();
    }
  }, 60_000);

  it('honest: the same request on a Redis with room lands whole, in one round trip after its reads', async () => {
    const store = open(fresh('batch-whole'));
    await before(store);
    const sent = countSent(store.client);
    await resume(store);
    expect(sent.trips).toBe(1);
    expect(await left(store)).toEqual([false, false, true, true]);
  });
});

describe('redis store: a grant revocation that fails part-way can be finished', () => {
  it('attack: when deleting some of the grant\'s tokens fails (their node away), a second revocation still removes them', async () => {
    const own = await startOwnRedis();
    const other = new Redis(own.url);
    try {
      const prefix = testPrefix('revoke-retry');
      const allow = (...rules: string[]): Promise<unknown> => other.call('ACL', 'SETUSER', 'app', 'on', '>pw', 'clearselectors', '+@all', 'resetkeys', ...rules, '&*');
      await allow('~*');
      const store = open(prefix, `redis://app:pw@127.0.0.1:${own.port}`);
      await store.adapter('AccessToken').upsert('at-1', { kind: 'AccessToken', grantId: 'g' }, 600);
      await store.adapter('RefreshToken').upsert('rt-1', { kind: 'RefreshToken', grantId: 'g' }, 600);
      // Refresh tokens can be read but not written or deleted, as when their slot's master is away.
      await allow(`~${prefix}AccessToken:*`, `~${prefix}grant:*`, `%R~${prefix}RefreshToken:*`);
      await expect(store.adapter('AccessToken').revokeByGrantId('g')).rejects.toBeInstanceOf(StoreUnavailableError);
      await allow('~*');
      await store.ping();
      await store.adapter('AccessToken').revokeByGrantId('g');
      expect({ at: await store.adapter('AccessToken').find('at-1'), rt: await store.adapter('RefreshToken').find('rt-1') }).toEqual({ at: undefined, rt: undefined });
      expect(await other.keys(`${prefix}*`)).toEqual([]);
    } finally {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      other.disconnect();
      own.dispose();
    }
  });

  it('honest: a revocation that meets no fault removes every token of the grant and its index, and keeps other grants', async () => {
    const prefix = fresh('revoke-whole');
    const store = open(prefix);
    await store.adapter('AccessToken').upsert('at-1', { kind: 'AccessToken', grantId: 'g' }, 600);
    await store.adapter('RefreshToken').upsert('rt-1', { kind: 'RefreshToken', grantId: 'g' }, 600);
    await store.adapter('RefreshToken').upsert('rt-2', { kind: 'RefreshToken', grantId: 'h' }, 600);
    await store.adapter('AccessToken').revokeByGrantId('g');
    expect((await admin.keys(`${prefix}*`)).map((k) => k.slice(prefix.length).split(':')[0]).sort()).toEqual(['RefreshToken', 'grant']);
    expect(await store.adapter('RefreshToken').find('rt-2')).toMatchObject({ grantId: 'h' });
    expect(await store.inventory.revokeGrant(refOf('h'))).toBe(1);
    expect(await admin.keys(`${prefix}*`)).toEqual([]);
  });
});

describe('redis store: what a sign-in\'s counter checks cost Redis', () => {
  it('honest: a check of counters that never failed reads them and asks no time (INFO commandstats); one that failed is still refused', async () => {
    const own = await startOwnRedis();
    const other = new Redis(own.url);
    try {
      const store = open(testPrefix('check-cost'), own.url);
      const rule = { limit: 1, windowSeconds: 60, coolDownSeconds: 60, maxCoolDownSeconds: 60 };
      await store.client.ping();
      await other.config('RESETSTAT');
      expect(await Promise.all([store.attempts.check('name', { ...rule, consecutiveLimit: 5 }), store.attempts.check('address', rule)])).toEqual([0, 0]);
      const calls = (await other.info('commandstats')).match(/^cmdstat_(hmget|time):calls=\d+/gm);
      expect(calls).toEqual(['cmdstat_hmget:calls=2']);
      await store.attempts.fail('name', rule);
      expect(await store.attempts.check('name', rule)).toBeGreaterThan(0);
      await Promise.all(stores.splice(0).map((s) => s.close()));
    } finally {
      other.disconnect();
      own.dispose();
    }
  });
});

describe('redis store: a consume whose answer never came', () => {
  /** A store on a Redis of its own whose writes are paused while `during` runs, then resumed; the store's consume times out. */
  async function withWritesPaused(run: (codes: ReturnType<Store['adapter']>, pause: () => Promise<void>, resume: () => Promise<void>) => Promise<void>): Promise<void> {
    const own = await startOwnRedis();
    const other = new Redis(own.url);
    try {
      const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('late-consume'), operationTimeoutMs: LOST_ANSWER_TIMEOUT_MS });
      stores.push(store);
      await run(
        store.adapter('AuthorizationCode'),
        async () => void (await other.call('CLIENT', 'PAUSE', '600000', 'WRITE')),
        async () => void (await other.call('CLIENT', 'UNPAUSE')),
      );
    } finally {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      other.disconnect();
      own.dispose();
    }
  }

  it('honest: is undone should it land late, so the retry its 503 invites redeems the code once', async () => {
    await withWritesPaused(async (codes, pause, resume) => {
      await codes.upsert('code-1', { kind: 'AuthorizationCode', grantId: 'g' }, 60);
      await pause();
      await expect(codes.consume('code-1')).rejects.toBeInstanceOf(StoreUnavailableError);
      await resume();
      // Sent on the same connection, after the late consume and its undo.
      expect(await codes.find('code-1')).not.toHaveProperty('consumed');
      await codes.consume('code-1');
      await expect(codes.consume('code-1')).rejects.toMatchObject({ name: 'AlreadyConsumedError' });
    });
  });

  it('attack: a replay that times out on a code already redeemed never undoes the redemption', async () => {
    await withWritesPaused(async (codes, pause, resume) => {
      await codes.upsert('code-1', { kind: 'AuthorizationCode', grantId: 'g' }, 60);
      await codes.consume('code-1');
      await pause();
      await expect(codes.consume('code-1')).rejects.toBeInstanceOf(StoreUnavailableError);
      await resume();
      expect(await codes.find('code-1')).toHaveProperty('consumed');
      await expect(codes.consume('code-1')).rejects.toMatchObject({ name: 'AlreadyConsumedError' });
    });
  });
});

describe('redis store: a Cluster whose nodes require a password', () => {
  it('honest: reaches every node, and the client cache\'s subscriber, with the password of the seed nodes', async () => {
    const cluster = await startOwnCluster({ password: 'cluster-secret-1' });
    try {
      const nodes = cluster.nodes.map((node) => ({ ...node, password: 'cluster-secret-1' }));
      const prefix = testPrefix('cluster-auth');
      const [writer, reader] = [0, 1].map(() => createRedisStore({ clusterNodes: nodes, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS })) as [Store, Store];
      stores.push(writer, reader);
      await writer.ping();
      const seed = new Redis({ port: cluster.nodes[0]?.port, host: '127.0.0.1', password: 'cluster-secret-1' });
      try {
        while (((await seed.call('PUBSUB', 'NUMSUB', `${prefix}invalidate`)) as [string, number])[1] < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      } finally {
        seed.disconnect();
      }
      expect(await reader.adapter('Client').find('rp-1')).toBeUndefined();
      await writer.adapter('Client').upsert('rp-1', { client_id: 'rp-1', client_name: 'before' });
      for (let i = 0; i < 20; i += 1) await writer.adapter('AccessToken').upsert(`at-${i}`, { kind: 'AccessToken' }, 60);
      expect(await reader.adapter('Client').find('rp-1')).toMatchObject({ client_name: 'before' });
      expect((await Promise.all(Array.from({ length: 20 }, (_, i) => reader.adapter('AccessToken').find(`at-${i}`)))).every(Boolean)).toBe(true);
    } finally {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      cluster.dispose();
    }
  });

  it('attack: a wrong password is a store that does not answer, and the password is in no error', async () => {
    const cluster = await startOwnCluster({ password: 'cluster-secret-2' });
    try {
      const store = createRedisStore({ clusterNodes: cluster.nodes.map((node) => ({ ...node, password: 'wrong-secret-9' })), keyPrefix: testPrefix('cluster-auth'), operationTimeoutMs: 1000 });
      stores.push(store);
      const err = await store.ping().then(() => undefined, (e: unknown) => e as Error);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect(JSON.stringify({ message: err?.message, cause: String((err as { cause?: unknown } | undefined)?.cause) })).not.toMatch(/secret/);
    } finally {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      cluster.dispose();
    }
  });

  it('attack: seed nodes carrying different passwords, or some over TLS and some not, are refused before any connection', () => {
    expect(() => createRedisStore({ clusterNodes: [{ host: '127.0.0.1', port: 1, password: 'a-secret' }, { host: '127.0.0.1', port: 2 }] })).toThrow(/same username, password and tls/);
    expect(() => createRedisStore({ clusterNodes: [{ host: '127.0.0.1', port: 1, tls: true }, { host: '127.0.0.1', port: 2 }] })).toThrow(/same username, password and tls/);
  });

  it('attack: TLS options in code beside a redis:// URL or plain seed nodes are refused before any connection, not ignored (the store would talk in plain text)', () => {
    expect(() => createRedisStore({ url: 'redis://127.0.0.1:1', tls: { ca: 'pem' } })).toThrow(/not rediss:\/\/: it would be reached in plain text/);
    expect(() => createRedisStore({ clusterNodes: [{ host: '127.0.0.1', port: 1 }], tls: { ca: 'pem' } })).toThrow(/not marked tls: they would be reached in plain text/);
  });
});

describe('redis store: a consume whose answer was lost with its connection', () => {
  it('attack: is undone once the connection is back, so the retry its 503 invites redeems the code once', async () => {
    const own = await startOwnRedis();
    const link = await startRelay(own.port);
    const { logger, lines } = capturingLogger();
    const undo = new Promise<string>((resolve) => {
      const push = lines.push.bind(lines);
      lines.push = (...items: string[]): number => {
        for (const line of items) if (/"e":"store_consume_undo/.test(line)) resolve((JSON.parse(line) as { e: string }).e);
        return push(...items);
      };
    });
    const prefix = testPrefix('lost-consume');
    const store = createRedisStore({ url: `redis://127.0.0.1:${link.port}`, keyPrefix: prefix, operationTimeoutMs: LOST_ANSWER_TIMEOUT_MS, logger });
    stores.push(store);
    try {
      const codes = store.adapter('AuthorizationCode');
      await codes.upsert('code-1', { kind: 'AuthorizationCode', grantId: 'g' }, 60);
      const cut = link.cutAfter(`${prefix}AuthorizationCode:${refOf('code-1')}`);
      await expect(codes.consume('code-1')).rejects.toBeInstanceOf(StoreUnavailableError);
      await cut;
      link.drop();
      expect(await undo).toBe('store_consume_undone');
      expect(await codes.find('code-1')).not.toHaveProperty('consumed');
      await codes.consume('code-1');
      await expect(codes.consume('code-1')).rejects.toMatchObject({ name: 'AlreadyConsumedError' });
    } finally {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      link.close();
      own.dispose();
    }
  });

  it('honest: a replay whose answer was lost on a code already redeemed is not undone once the connection is back', async () => {
    const own = await startOwnRedis();
    const link = await startRelay(own.port);
    const { logger, lines } = capturingLogger();
    const prefix = testPrefix('lost-replay');
    const store = createRedisStore({ url: `redis://127.0.0.1:${link.port}`, keyPrefix: prefix, operationTimeoutMs: LOST_ANSWER_TIMEOUT_MS, logger });
    stores.push(store);
    try {
      const codes = store.adapter('AuthorizationCode');
      await codes.upsert('code-1', { kind: 'AuthorizationCode', grantId: 'g' }, 60);
      await codes.consume('code-1');
      const cut = link.cutAfter(`${prefix}AuthorizationCode:${refOf('code-1')}`);
      await expect(codes.consume('code-1')).rejects.toBeInstanceOf(StoreUnavailableError);
      await cut;
      const back = new Promise((resolve) => store.client.once('ready', resolve));
      link.drop();
      await back;
      // The undo was sent again as the connection became ready, before this read on the same connection.
      expect(await codes.find('code-1')).toHaveProperty('consumed');
      await expect(codes.consume('code-1')).rejects.toMatchObject({ name: 'AlreadyConsumedError' });
      expect(lines.filter((line) => line.includes('store_consume_undo'))).toEqual([]);
    } finally {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      link.close();
      own.dispose();
    }
  });
});

describe('redis store: a command whose answer was lost with its Cluster node\'s connection is sent once, as on a standalone server', () => {
  let cluster: OwnCluster;
  beforeAll(async () => {
    cluster = await startOwnCluster({ relayed: true });
  }, 60_000);
  afterAll(() => cluster?.dispose());

  /** A store on the Cluster (through its relays), its slots known, and the lines it logs. */
  async function clusterStore(label: string): Promise<{ store: Store; prefix: string; lines: string[] }> {
    const { logger, lines } = capturingLogger();
    const prefix = testPrefix(label);
    const store = createRedisStore({ clusterNodes: cluster.nodes, keyPrefix: prefix, operationTimeoutMs: LOST_ANSWER_TIMEOUT_MS, logger });
    stores.push(store);
    await store.ping();
    return { store, prefix, lines };
  }

  /**
   * Runs `operation`, letting the first command that names `key` reach the master of its slot, then closing that
   * connection with the answer unsent (a network fault); settles with what `operation` settled with.
   */
  async function answerLost<T>(store: Store, key: string, operation: () => Promise<T>): Promise<PromiseSettledResult<Awaited<T>>> {
    const [, port] = String((store.client as Cluster).slots[keySlot(key)]?.[0]).split(':');
    const relay = cluster.relays?.find((r) => r.port === Number(port));
    if (!relay) throw new Error(`no relay in front of the master of ${key}`);
    const cut = relay.cutAfter(key);
    const settled = Promise.allSettled([operation()]);
    await cut;
    relay.drop();
    return (await settled)[0];
  }

  /** Resolves with the first event logged (now or later) that matches `pattern`. */
  const logged = (lines: string[], pattern: RegExp): Promise<string> =>
    new Promise((resolve) => {
      const check = (line: string): void => {
        if (pattern.test(line)) resolve((JSON.parse(line) as { e: string }).e);
      };
      lines.forEach(check);
      const push = lines.push.bind(lines);
      lines.push = (...items: string[]): number => {
        items.forEach(check);
        return push(...items);
      };
    });

  it('attack: a consume that reached the master is answered 503 and undone, not re-sent to find its own mark (invalid_grant, her code spent); the retry the 503 invites redeems the code once', async () => {
    const { store, prefix, lines } = await clusterStore('cluster-lost-consume');
    const codes = store.adapter('AuthorizationCode');
    await codes.upsert('code-1', { kind: 'AuthorizationCode', grantId: 'g' }, 60);
    const outcome = await answerLost(store, `${prefix}AuthorizationCode:${refOf('code-1')}`, () => codes.consume('code-1'));
    expect(outcome).toMatchObject({ status: 'rejected', reason: expect.any(StoreUnavailableError) });
    expect(await logged(lines, /"e":"store_consume_undo/)).toBe('store_consume_undone');
    expect(await codes.find('code-1')).not.toHaveProperty('consumed');
    await codes.consume('code-1');
    await expect(codes.consume('code-1')).rejects.toMatchObject({ name: 'AlreadyConsumedError' });
  });

  it('honest: a replay whose connection dropped on a code already redeemed stays redeemed', async () => {
    const { store, prefix, lines } = await clusterStore('cluster-lost-replay');
    const codes = store.adapter('AuthorizationCode');
    await codes.upsert('code-1', { kind: 'AuthorizationCode', grantId: 'g' }, 60);
    await codes.consume('code-1');
    const outcome = await answerLost(store, `${prefix}AuthorizationCode:${refOf('code-1')}`, () => codes.consume('code-1'));
    expect(outcome.status).toBe('rejected');
    await expect(codes.consume('code-1')).rejects.toMatchObject({ name: 'AlreadyConsumedError' });
    expect(await codes.find('code-1')).toHaveProperty('consumed');
    expect(lines.filter((line) => line.includes('store_consume_undone'))).toEqual([]);
  });

  it('attack: a client assertion\'s replay mark written as its connection dropped is answered 503, not taken for a replay of the assertion (401 invalid_client)', async () => {
    const { store, prefix } = await clusterStore('cluster-lost-insert');
    const outcome = await answerLost(store, `${prefix}ReplayDetection:${refOf('jti-1')}`, () => store.insert('ReplayDetection', 'jti-1', { iss: 'rp' }, 60));
    expect(outcome).toMatchObject({ status: 'rejected', reason: expect.any(StoreUnavailableError) });
    // honest: the next assertion (a new jti) is taken, once.
    await expect(store.insert('ReplayDetection', 'jti-2', { iss: 'rp' }, 60)).resolves.toBe(true);
    await expect(store.insert('ReplayDetection', 'jti-2', { iss: 'rp' }, 60)).resolves.toBe(false);
  });

  it('attack: a failed sign-in counted as its connection dropped is counted once, not twice: the name is not locked before `limit` wrong guesses; honest: the next one locks it', async () => {
    const { store, prefix } = await clusterStore('cluster-lost-fail');
    const rule = { limit: 3, windowSeconds: 60, coolDownSeconds: 30, maxCoolDownSeconds: 100 };
    expect(await store.attempts.fail('name-1', rule)).toBe(0);
    const outcome = await answerLost(store, attemptCounterKey(prefix, 'name-1'), () => store.attempts.fail('name-1', rule));
    expect(outcome).toMatchObject({ status: 'rejected', reason: expect.any(StoreUnavailableError) });
    expect(await store.attempts.check('name-1', rule)).toBe(0);
    expect(await store.attempts.fail('name-1', rule)).toBe(0);
    expect(await store.attempts.check('name-1', rule)).toBeGreaterThan(29_000);
  });
});

describe('redis store: a Redis that stops answering with its connection open', () => {
  /** Each outage and recovery the store logged, in order. */
  const storeEvents = (lines: string[]): Record<string, unknown>[] => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'store_unavailable' || l.e === 'store_recovered');

  async function findUntilAnswered(store: Store): Promise<void> {
    for (;;) {
      try {
        await store.adapter('Session').find('s-0');
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50)); // a poll interval, not a bound
      }
    }
  }

  it('attack: a frozen Redis (SIGSTOP: a stalled host or VM) is one store_unavailable at the first unanswered operation and one store_recovered once it answers, however many failed between', async () => {
    const own = await startOwnRedis();
    const admin = new Redis(own.url);
    const pid = Number(/process_id:(\d+)/.exec(await admin.info('server'))?.[1]);
    admin.disconnect();
    const { logger, lines } = capturingLogger();
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('frozen'), operationTimeoutMs: LOST_ANSWER_TIMEOUT_MS, logger });
    stores.push(store);
    try {
      await store.adapter('Session').find('s-0');
      process.kill(pid, 'SIGSTOP');
      for (let i = 0; i < 3; i += 1) await expect(store.adapter('Session').find(`s-${i}`)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
      process.kill(pid, 'SIGCONT');
      await findUntilAnswered(store);
      await store.adapter('Session').find('s-1');
      expect(storeEvents(lines)).toEqual([
        { e: 'store_unavailable', store: 'redis', name: 'Error', cause: 'store operation timed out', host: '127.0.0.1', port: own.port },
        { e: 'store_recovered', store: 'redis', host: '127.0.0.1', port: own.port },
      ]);
    } finally {
      process.kill(pid, 'SIGCONT');
      await Promise.all(stores.splice(0).map((s) => s.close()));
      own.dispose();
    }
  });

  it('attack: close() of a store whose Redis is frozen resolves, its connection dropped: a process stopping is not held by it (the stop timer then cut a stop that had no request left)', async () => {
    const own = await startOwnRedis();
    const admin = new Redis(own.url);
    const pid = Number(/process_id:(\d+)/.exec(await admin.info('server'))?.[1]);
    admin.disconnect();
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('frozen-close'), operationTimeoutMs: LOST_ANSWER_TIMEOUT_MS });
    try {
      await store.adapter('Session').find('s-0');
      process.kill(pid, 'SIGSTOP');
      await store.close();
      const { client } = store;
      if (client.status !== 'end') await new Promise((resolve) => client.once('end', resolve));
      expect(client.status).toBe('end');
    } finally {
      process.kill(pid, 'SIGCONT');
      own.dispose();
    }
  });

  it('honest: a Redis shut down (its connection lost) is marked once too, not again by the operations that time out meanwhile', async () => {
    const own = await startOwnRedis();
    const { logger, lines } = capturingLogger();
    const store = createRedisStore({ url: own.url, keyPrefix: testPrefix('shut-down'), operationTimeoutMs: LOST_ANSWER_TIMEOUT_MS, logger });
    stores.push(store);
    try {
      await store.adapter('Session').find('s-0');
      own.stop();
      for (let i = 0; i < 3; i += 1) await expect(store.adapter('Session').find(`s-${i}`)).rejects.toBeInstanceOf(StoreUnavailableError);
      own.start();
      await findUntilAnswered(store);
      expect(storeEvents(lines).map((l) => l.e)).toEqual(['store_unavailable', 'store_recovered']);
    } finally {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      own.dispose();
    }
  });
});

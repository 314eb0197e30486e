import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { Redis } from 'ioredis';

import { createMemoryStore } from '../../adapters/memory.js';
import { createRedisStore } from '../../adapters/redis.js';
import { attemptCounterKey } from '../../adapters/redis-attempt-keys.js';
import { KNOWN_ADDRESS_MODEL } from '../../lib/management/guard.js';
import { counterKey } from '../../lib/web/client-address.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { startOwnRedis, testPrefix, TEST_STORE_TIMEOUT_MS, type OwnRedis } from '../helpers/redis.js';

const USER = 'ops';
const PASSWORD = 'correct horse battery staple';
const basic = (password: string): string => `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`;
const ROUTE = '/oidc/v1/management/initial-access-tokens';
/** The failures the management account takes from addresses it never signed in from, per window (guard.ts). */
const ACCOUNT_BUDGET = 100;

/** The i-th address of a guesser holding an IPv6 /48 and some IPv4 addresses: each one new, so no address count locks. */
const guesserAddress = (i: number): string => (i % 2 === 0 ? `2001:db8:beef:${i.toString(16)}::1` : `198.18.${Math.floor(i / 250)}.${i % 250}`);

describe('management password guessing spread over many addresses (C7)', () => {
  let running: RunningApp;
  // The store's clock: a cool-down ends when a test moves it on, never while a slow machine still sends its requests.
  let ahead = 0;
  const call = async (from: string, password: string): Promise<number> => {
    const response = await fetch(`${running.baseUrl}${ROUTE}`, { method: 'POST', headers: { authorization: basic(password), 'x-forwarded-for': from } });
    await response.arrayBuffer();
    return response.status;
  };

  beforeAll(async () => {
    running = await startApp({
      store: createMemoryStore({ now: () => Date.now() + ahead }),
      properties: {
        'svc.management.user': USER,
        'svc.management.password': PASSWORD,
        'svc.management.lockout-threshold': 3,
        'svc.management.lockout-seconds': 600,
        'svc.proxy': true,
      },
    });
  });
  afterAll(async () => {
    await running.close();
  });

  it('honest: an operator signing in from a new address now and then, with a typo, is served', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      statuses.push(await call(`203.0.113.${100 + i}`, 'typo'), await call(`203.0.113.${100 + i}`, PASSWORD));
    }
    expect(statuses).toEqual(Array.from({ length: 10 }, () => [401, 201]).flat());
  });

  it('attack: one guess from each of 300 addresses (IPv6 /64s of one /48, IPv4) gets the account budget judged, no more; the operator keeps working from her address', async () => {
    // A day on: the honest case's typos, from addresses new then, have left the account's window.
    ahead += 86_400_000;
    const office = '2001:db8:1:2::10';
    expect(await call(office, PASSWORD)).toBe(201);
    const statuses: number[] = [];
    for (let i = 0; i < 300; i += 1) statuses.push(await call(guesserAddress(i), `guess-${i}`));
    expect(statuses).toEqual(statuses.map((_, i) => (i < ACCOUNT_BUDGET ? 401 : 429)));
    // The right guess from yet another address is refused as a wrong one would be: nothing tells them apart.
    expect(await call(guesserAddress(300), PASSWORD)).toBe(429);
    expect(await call(guesserAddress(301), 'wrong')).toBe(429);
    // Where she signed in before, her own address budget alone applies.
    expect(await call(office, PASSWORD)).toBe(201);
    expect(await call(office, 'typo')).toBe(401);
    expect(await call(office, PASSWORD)).toBe(201);
    // After the cool-down a new address is served again.
    ahead += 3_600_000;
    expect(await call('2001:db8:77::1', PASSWORD)).toBe(201);
  });

  it('attack: 200 concurrent guesses, each from its own address, get no more than the account budget judged', async () => {
    ahead += 86_400_000;
    const statuses = await Promise.all(Array.from({ length: 200 }, (_, i) => call(guesserAddress(1000 + i), `burst-${i}`)));
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(ACCOUNT_BUDGET);
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(await call(guesserAddress(2000), PASSWORD)).toBe(429);
  });
});

/**
 * The known-address marks on Redis, when only they cannot be read (an ACL refusing reads of their keys here; on a
 * Cluster, the master of a mark's slot refusing): a mark is an easing, so the operator is judged as from an address
 * never known, and a guess still meets the account's budget.
 */
describe('management known-address marks on Redis whose reads fail (C7)', () => {
  const user = 'svc-app';
  const secret = 'spraying-redis-password';
  const prefix = testPrefix('spraying');
  const COOKIE_KEY = 'spraying-cookie-key-0123456789abcdef';
  let server: OwnRedis;
  let admin: Redis;
  let running: RunningApp;
  const acl = (...rules: string[]): Promise<unknown> => admin.call('ACL', 'SETUSER', user, ...rules);
  const healthy = (): Promise<unknown> => acl('on', `>${secret}`, 'clearselectors', '+@all', 'resetkeys', '~*', '&*');
  const call = async (from: string, password: string): Promise<number> => {
    const response = await fetch(`${running.baseUrl}${ROUTE}`, { method: 'POST', headers: { authorization: basic(password), 'x-forwarded-for': from } });
    await response.arrayBuffer();
    return response.status;
  };

  beforeAll(async () => {
    server = await startOwnRedis();
    admin = new Redis(server.url);
    await healthy();
    running = await startApp({
      store: createRedisStore({ url: `redis://${user}:${secret}@127.0.0.1:${server.port}`, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS }),
      properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.cookies.keys': COOKIE_KEY, 'svc.proxy': true },
    });
  });
  afterAll(async () => {
    await running?.close();
    admin?.disconnect();
    server?.dispose();
  });

  it('honest: the operator is served from her known address and from a new one while the marks cannot be read; a guess is judged as from a new address', async () => {
    expect(await call('192.0.2.7', PASSWORD)).toBe(201);
    expect((await admin.keys(`${prefix}${KNOWN_ADDRESS_MODEL}:*`)).length).toBe(1);
    // Every key but the marks (the only model named with an M) stays readable and writable; the marks only writable.
    await acl('resetkeys', `~${prefix}[^M]*`, `%W~${prefix}M*`);
    try {
      expect([await call('192.0.2.7', PASSWORD), await call('192.0.2.8', PASSWORD), await call('192.0.2.7', 'wrong')]).toEqual([201, 201, 401]);
    } finally {
      await healthy();
    }
    // The wrong guess from her address was counted on the account, as from an address never known.
    expect(await admin.exists(attemptCounterKey(prefix, counterKey('management-account', USER, COOKIE_KEY)))).toBe(1);
  });
});

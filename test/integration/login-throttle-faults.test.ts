import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { createRedisStore } from '../../adapters/redis.js';
import type { Authenticator } from '../../lib/claims/authenticator.js';

import { addressCounterKey } from '../../lib/web/client-address.js';
import { loginNameCounterKey } from '../../lib/interactions/login-throttle.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { loginAttempts } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';
import { startOwnRedis, testPrefix, type OwnRedis } from '../helpers/redis.js';
import { memoryFaults, redisAclFaults, type StoreFaults } from '../helpers/store-faults.js';

/**
 * The sign-in throttle under partial store faults, as in a Redis Cluster with one master away: the
 * name's counter and the address's counter live in different slots, so one reservation can land
 * while the other fails. Found by the reliability tier: flows from one address stayed at 429 after
 * a master came back, because every sign-in during the outage had leaked its name reservation.
 *
 * - an outage must not count as failed sign-ins (the side that took a lease leaves it);
 * - and the attack beside it: requests that fail during an outage must not erase failures counted
 *   before it (a reservation whose answer was lost is not given back).
 */

const client = confidentialClient();
const COOKIE_KEY = 'login-throttle-faults-cookie-key-0123456789';

const describeFaults = (kind: string, makeFaults: () => Promise<StoreFaults>): void =>
  describe(`sign-in throttle under partial store faults [${kind}]`, () => {
    let faults: StoreFaults;
    let running: RunningApp;
    const { logger, lines } = capturingLogger();

    beforeAll(async () => {
      faults = await makeFaults();
      running = await startApp({ logger, store: faults.store, clients: [client], properties: { 'svc.proxy': true, 'svc.cookies.keys': COOKIE_KEY, 'svc.login.address-threshold': 5 } });
    });
    afterAll(async () => {
      await running?.close();
      await faults?.dispose();
    });

    const loginForm = async (): Promise<{ attempt(login: string, password: string, address: string): Promise<number> }> => {
      const form = await loginAttempts(running, client);
      return {
        attempt: async (login, password, address) => {
          const response = await form.attempt(login, password, address);
          await response.arrayBuffer();
          return response.status;
        },
      };
    };

    it('eight sign-ins whose address counter is away get 503 and count nothing: the name is not locked afterwards', async () => {
      const address = '192.0.2.10';
      const from = lines.length;
      // The name's counter works, the address's fails: each sign-in reserves the name, then fails.
      await faults.failAttemptCounters([loginNameCounterKey('demo', COOKIE_KEY)]);
      const during: number[] = [];
      for (let i = 0; i < 8; i += 1) during.push(await (await loginForm()).attempt('demo', 'demo', address));
      await faults.heal();
      expect(during).toEqual(Array(8).fill(503));
      // The name had five attempts of budget; eight leaked reservations would lock it now.
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) statuses.push(await (await loginForm()).attempt('demo', 'wrong', `192.0.2.${20 + i}`));
      statuses.push(await (await loginForm()).attempt('demo', 'demo', address));
      expect(statuses).toEqual([403, 403, 403, 403, 303]);
      // Nothing named in the logs: not the login name, not the address.
      expect(lines.slice(from).join('\n')).not.toMatch(/"demo"|192\.0\.2\./);
    });

    it('the other way round: an address counter that works is left when the name counter is away', async () => {
      const address = '192.0.2.40';
      await faults.failAttemptCounters([addressCounterKey('login-address', address, COOKIE_KEY)]);
      const during: number[] = [];
      for (let i = 0; i < 8; i += 1) during.push(await (await loginForm()).attempt(`outage-${i}`, 'wrong', address));
      await faults.heal();
      expect(during).toEqual(Array(8).fill(503));
      // The address still has its five attempts: four wrong ones are judged, then a right one works.
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) statuses.push(await (await loginForm()).attempt(`after-${i}`, 'wrong', address));
      statuses.push(await (await loginForm()).attempt('demo-basic', 'demo-basic', address));
      expect(statuses).toEqual([403, 403, 403, 403, 303]);
    });

    it('attack: failures counted before an outage are not erased by requests that fail during it', async () => {
      const name = 'erase-my-failures';
      const form = await loginForm();
      const before: number[] = [];
      for (let i = 0; i < 4; i += 1) before.push(await form.attempt(name, `guess-${i}`, `198.51.100.${i}`));
      // Every counter fails: reservations are refused, nothing is judged, nothing may be given back.
      await faults.failAttemptCounters();
      const during: number[] = [];
      for (let i = 0; i < 10; i += 1) during.push(await form.attempt(name, `outage-guess-${i}`, `198.51.100.${10 + i}`));
      await faults.heal();
      const after: number[] = [];
      for (let i = 0; i < 3; i += 1) after.push(await form.attempt(name, `late-guess-${i}`, `198.51.100.${30 + i}`));
      expect({ before, during, after }).toEqual({ before: [403, 403, 403, 403], during: Array(10).fill(503), after: [403, 429, 429] });
    });
  });

describeFaults('redis (ACL)', redisAclFaults);
describeFaults('memory (injected)', async () => memoryFaults());

describe('sign-in throttle when Redis stalls past the operation timeout (commands sent, answers lost)', () => {
  // A short timeout is what this suite tests: a settlement whose answer is lost still runs when Redis answers
  // again, so it must not be sent a second time. 1 s, not production's 0.8 s, so that a busy machine does not time
  // out the commands before the stall; the stall outlasts every timeout the sign-in's settlement waits through.
  const TIMEOUT_MS = 1000;
  const PAUSE_MS = 5 * TIMEOUT_MS;
  let redis: OwnRedis;
  let admin: Redis;
  let store: ReturnType<typeof createRedisStore>;
  let running: RunningApp;
  let pauseOnNextSignIn = false;
  const { logger, lines } = capturingLogger();
  const owner: Authenticator = {
    async authenticate(login, password) {
      if (login !== 'owner' || password !== 'owner-password') return undefined;
      if (pauseOnNextSignIn) {
        pauseOnNextSignIn = false;
        // Everything the sign-in sends next (the reset and the give-back) waits past its timeout.
        await admin.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'ALL');
      }
      return 'owner-account';
    },
    exists: async () => true,
  };

  beforeAll(async () => {
    redis = await startOwnRedis();
    admin = new Redis(redis.url);
    store = createRedisStore({ url: redis.url, keyPrefix: testPrefix('stall'), operationTimeoutMs: TIMEOUT_MS });
    running = await startApp({ logger, store, authenticator: owner, clients: [client], properties: { 'svc.proxy': true, 'svc.cookies.keys': COOKIE_KEY, 'svc.login.address-threshold': 5 } });
  });
  afterAll(async () => {
    await running?.close();
    admin?.disconnect();
    redis?.dispose();
  });

  it('attack: a right password during a stall does not give the address back more than once (failures judged before stay counted)', async () => {
    const address = '192.0.2.77';
    const attempt = async (login: string, password: string): Promise<number> => {
      const response = await (await loginAttempts(running, client)).attempt(login, password, address);
      await response.arrayBuffer();
      return response.status;
    };
    const before: number[] = [];
    for (let i = 0; i < 4; i += 1) before.push(await attempt(`someone-${i}`, 'wrong'));
    // The fifth reservation of the address is the attacker's own right password; Redis stalls.
    pauseOnNextSignIn = true;
    const from = lines.length;
    await attempt('owner', 'owner-password');
    // Redis answers again (this waits for the pause to end), then the store's breaker closes.
    await admin.ping();
    while (!(await store.ping().then(() => true, () => false))) await new Promise((resolve) => setTimeout(resolve, 50));
    const after: number[] = [];
    for (let i = 0; i < 2; i += 1) after.push(await attempt(`someone-else-${i}`, 'wrong'));
    // Four failures stand: one more is judged, then the address is locked. Every give-back sent
    // again would have handed the attacker one more guess.
    expect({ before, after }).toEqual({ before: [403, 403, 403, 403], after: [403, 429] });
    expect(lines.slice(from).some((l) => l.includes('"e":"attempt_settle_failed"'))).toBe(true);
  });
});

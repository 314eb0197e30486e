/**
 * What the sign-in throttle costs the store for one correct sign-in without a device cookie (the
 * flow the bench drives): the name's and the address's counters checked, checked again once the
 * password is judged right, and the name's forgotten with the request's writes, through the real
 * Redis store and gate. The sign-in stores its interaction in that same round trip; that write and
 * its round trip are the sign-in's, not the throttle's, and are taken off. Reported by
 * `npm run bench` beside the flow's total.
 */
import type { Redis } from 'ioredis';

import { createRedisStore } from '../../adapters/redis.js';
import { createAttemptGate, isPass } from '../../lib/interactions/attempt-gate.js';
import { countRoundTrips, type RoundTrips } from './round-trips.js';

/** Redis commands (scripts' inner commands included) and round trips per correct sign-in. */
export interface ThrottleCost {
  commands: number;
  roundTrips: number;
}

async function calls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)) if (m[1] !== 'info') total += Number(m[2]);
  return total;
}

/** Measures {@link ThrottleCost} over `n` sequential correct sign-ins on the Redis at `url`. */
export async function measureThrottle(url: string, redis: Redis, n = 200): Promise<ThrottleCost> {
  const store = createRedisStore({ url, keyPrefix: 'bench-throttle:' });
  const trips: RoundTrips = { roundTrips: 0, commands: 0 };
  countRoundTrips(store.client, trips);
  const gate = createAttemptGate({ attempts: store.attempts });
  const inBatch = <T>(fn: () => Promise<T>): Promise<T> => (store.batch ? store.batch(fn) : fn());
  const rule = { limit: 5, windowSeconds: 900, coolDownSeconds: 60, maxCoolDownSeconds: 3600 };
  try {
    await store.ping();
    const before = await calls(redis);
    const tripsBefore = trips.roundTrips;
    for (let i = 0; i < n; i += 1) {
      // As in the app, where each request is one unit of store work.
      await inBatch(async () => {
        const pass = await gate.enter([
          { key: `login-name:${i % 7}`, rule: { ...rule, consecutiveLimit: 100 }, label: 'name', forgetOnSuccess: true },
          { key: 'login-address:bench', rule: { ...rule, limit: 100 }, label: 'address', forgetOnSuccess: false },
        ]);
        if (!isPass(pass) || (await pass.succeeded())) throw new Error('bench: the throttle refused a correct sign-in');
        await store.adapter('Interaction').upsert(`bench-${i}`, { kind: 'Interaction' }, 60);
      });
    }
    return { commands: ((await calls(redis)) - before) / n - 1, roundTrips: (trips.roundTrips - tripsBefore) / n - 1 };
  } finally {
    await store.close();
  }
}

import { describe, expect, it } from '@jest/globals';

import { createMemoryAttempts } from '../../adapters/memory-attempts.js';
import { createMemoryStore } from '../../adapters/memory.js';
import { RUN_MEMORY_SECONDS, STRIKE_MEMORY_SECONDS } from '../../adapters/store.js';
import { describeBatchContract } from './batch-contract.js';
import { describeAdapterContract } from './contract.js';

describeAdapterContract('memory', async () => createMemoryStore({ sweepIntervalMs: 200 }));
describeBatchContract('memory', async () => createMemoryStore({ sweepIntervalMs: 200 }));

describe('memory attempt counter', () => {
  it('keeps counting an entry whose expiry is not a number (NaN from a rule), failing closed, as before 81eefb0', async () => {
    // `!(expiresAt <= t)` is not `expiresAt > t` for NaN: dropping such an entry on every read would
    // restart the count on every failure, so the limit would never be reached.
    const t = 1_700_000_000_000;
    const attempts = createMemoryAttempts(() => t);
    const rule = { limit: 3, windowSeconds: Number.NaN, coolDownSeconds: 60, maxCoolDownSeconds: 60 };
    for (let i = 0; i < 3; i += 1) expect(await attempts.fail('k', rule)).toBe(0);
    expect(await attempts.check('k', rule)).toBe(60_000);
  });

  it('counts a lockout towards the next cool-down until a day after it ended, however many failures came since (the Redis scripts in redis.test.ts)', async () => {
    const rule = { limit: 2, windowSeconds: 60, coolDownSeconds: 10, maxCoolDownSeconds: 1000 };
    const DAY_MS = STRIKE_MEMORY_SECONDS * 1000;
    const lockoutAfter = async (gapsMs: number[]): Promise<number> => {
      let t = 1_700_000_000_000;
      const attempts = createMemoryAttempts(() => t);
      for (let i = 0; i < 2; i += 1) await attempts.fail('k', rule);
      const firstEnds = t + (await attempts.check('k', rule));
      // One failure after each gap (fewer than the limit within its window), counted from the first lockout's end.
      for (const gap of gapsMs) {
        t = firstEnds + gap;
        await attempts.fail('k', rule);
      }
      t += 61_000;
      for (let i = 0; i < 2; i += 1) await attempts.fail('k', rule);
      return attempts.check('k', rule);
    };
    expect(await lockoutAfter([1000])).toBe(20_000);
    expect(await lockoutAfter([DAY_MS / 2, DAY_MS + 1000])).toBe(10_000);
  });

  it('remembers a run of failures in a row in proportion to its length (the Redis scripts in redis.test.ts): a name tried once is not kept for the whole run memory, a run at the limit is', async () => {
    // A random login name tried once from a fresh address used to be kept RUN_MEMORY_SECONDS (30 days): unbounded growth
    // for anyone able to post the login form. Kept r/limit of it, the rate of guesses a run allows stays the same.
    const rule = { limit: 1000, windowSeconds: 60, coolDownSeconds: 10, maxCoolDownSeconds: 100, consecutiveLimit: 2 };
    const HALF_MS = (RUN_MEMORY_SECONDS * 1000) / 2;
    const t0 = 1_700_000_000_000;
    const afterOneFailure = async (laterMs: number): Promise<number> => {
      let t = t0;
      const attempts = createMemoryAttempts(() => t);
      await attempts.fail('k', rule);
      t = t0 + laterMs;
      attempts.sweep();
      await attempts.fail('k', rule);
      return attempts.check('k', rule);
    };
    expect(await afterOneFailure(HALF_MS - 1000)).toBeGreaterThanOrEqual(1000);
    expect(await afterOneFailure(HALF_MS + 1000)).toBe(0);

    let t = t0;
    const attempts = createMemoryAttempts(() => t);
    for (let i = 0; i < 2; i += 1) await attempts.fail('k', rule);
    t = t0 + 2 * HALF_MS - 1000;
    attempts.sweep();
    expect(await attempts.check('k', rule)).toBeGreaterThanOrEqual(1000);
    t = t0 + 2 * HALF_MS + 1000;
    expect(await attempts.check('k', rule)).toBe(0);
  });
});

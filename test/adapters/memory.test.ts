import { describe, expect, it } from '@jest/globals';

import { createMemoryAttempts } from '../../adapters/memory-attempts.js';
import { createMemoryStore } from '../../adapters/memory.js';
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
});

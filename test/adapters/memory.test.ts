import { describe, expect, it } from '@jest/globals';
import type { AdapterPayload } from 'oidc-provider';

import { createMemoryAttempts } from '../../adapters/memory-attempts.js';
import { createMemoryBudget } from '../../adapters/memory-budget.js';
import { createMemoryStore } from '../../adapters/memory.js';
import { COUNTER_SHARE, RUN_MEMORY_SECONDS, STRIKE_MEMORY_SECONDS, type SvcStore } from '../../adapters/store.js';
import { StoreUnavailableError } from '../../lib/errors.js';
import { createAttemptGate, isPass } from '../../lib/interactions/attempt-gate.js';
import { addressCounterKey, counterKey } from '../../lib/web/client-address.js';
import { capturingLogger } from '../helpers/logs.js';
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

describe('memory store budget (svc.memory-store.max-mb): the maxmemory and noeviction of a Redis deployment', () => {
  const MAX = 64 * 1024;
  const HOUR = 3600;
  /** What an anonymous /authorize stores: an interaction nobody signed in to (here with a 2 KiB `state`). */
  const anonymous = { kind: 'Interaction', params: { client_id: 'public-rp', state: 'x'.repeat(2048) } };
  const RULE = { limit: 5, windowSeconds: 900, coolDownSeconds: 900, maxCoolDownSeconds: 3600, consecutiveLimit: 100 };
  const refusalOf = (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (err: unknown) => err);
  const expectRefusal = (err: unknown): void => {
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect([(err as StoreUnavailableError).status, (err as StoreUnavailableError).error]).toEqual([503, 'server_error']);
  };
  const setup = (): { store: ReturnType<typeof createMemoryStore>; clock: { t: number }; lines: string[] } => {
    const clock = { t: 1_700_000_000_000 };
    const { logger, lines } = capturingLogger();
    return { store: createMemoryStore({ maxBytes: MAX, now: () => clock.t, sweepIntervalMs: 3_600_000, logger }), clock, lines };
  };
  /** Writes anonymous interactions until one is refused; returns how many were stored and the refusal. */
  const flood = async (store: SvcStore, tag: string, record: AdapterPayload = anonymous): Promise<{ stored: number; refusal: unknown }> => {
    for (let i = 0; i < 1000; i += 1) {
      const refusal = await refusalOf(store.adapter('Interaction').upsert(`${tag}-${i}`, record, HOUR));
      if (refusal) return { stored: i, refusal };
    }
    throw new Error('the flood was never refused');
  };
  const stored = async (store: ReturnType<typeof createMemoryStore>, model: string): Promise<number> => (await store.inventory.list(model, { limit: 1000 })).records.length;

  it('attack: a flood of anonymous interactions beyond the budget is refused with 503 server_error, keeps nothing beyond nine tenths of it, makes the store not ready and logs store_full once', async () => {
    const { store, lines } = setup();
    try {
      expect(await store.refusesStart?.('Interaction', 'first', anonymous)).toBe(false);
      const { stored: kept, refusal } = await flood(store, 'flood');
      expectRefusal(refusal);
      expect(await stored(store, 'Interaction')).toBe(kept);
      expect(kept * JSON.stringify(anonymous).length).toBeLessThanOrEqual(MAX * 0.9);
      // What the share by address asks before counting: refused as the write is, writing nothing; not a signed-in one.
      expect([await store.refusesStart?.('Interaction', 'more', anonymous), await store.refusesStart?.('Interaction', 'hers', { ...anonymous, session: { accountId: 'her' } })]).toEqual([true, false]);
      expect(await stored(store, 'Interaction')).toBe(kept);
      for (let i = 0; i < 20; i += 1) expectRefusal(await refusalOf(store.adapter('Interaction').upsert(`more-${i}`, anonymous, HOUR)));
      expect(await stored(store, 'Interaction')).toBe(kept);
      expectRefusal(await refusalOf(store.ping()));
      expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([{ e: 'store_full', store: 'memory', max_bytes: MAX }]);
    } finally {
      await store.close();
    }
  });

  it('attack: writes refused while records held at the limit expire one by one sweep the store at most once a second, not once each; a second later a sweep frees room again', () => {
    const clock = { t: 1_700_000_000_000 };
    let sweeps = 0;
    let expired = 0;
    const budget = createMemoryBudget({
      maxBytes: 1000,
      now: () => clock.t,
      // Something expires at every moment, and the sweep finds it already replaced by the flood.
      sweep: () => {
        sweeps += 1;
        budget.hold(-expired);
        expired = 0;
        return clock.t;
      },
    });
    budget.hold(1000, clock.t);
    for (let i = 0; i < 1000; i += 1) expect(budget.fits(100)).toBe(false);
    expect(sweeps).toBe(1);
    clock.t += 999;
    expect(budget.fits(100)).toBe(false);
    expect(sweeps).toBe(1);
    expired = 100;
    clock.t += 1;
    expect(budget.fits(100)).toBe(true);
    expect(sweeps).toBe(2);
  });

  it('attack: a state of characters beyond Latin-1, which the heap holds at two bytes each, is charged so: the flood keeps about half as many', async () => {
    const [latin, wide] = [setup(), setup()];
    try {
      const { stored: narrowKept } = await flood(latin.store, 'latin');
      const { stored: wideKept } = await flood(wide.store, 'wide', { ...anonymous, params: { ...anonymous.params, state: '語'.repeat(2048) } });
      expect(wideKept).toBeLessThan(narrowKept * 0.6);
    } finally {
      await latin.store.close();
      await wide.store.close();
    }
  });

  it('honest: once the flood has expired (dropped at the next write, the periodic sweep still an hour away) interactions are stored again, the store is ready and store_recovered is logged once', async () => {
    const { store, clock, lines } = setup();
    try {
      const { stored: kept } = await flood(store, 'flood');
      clock.t += HOUR * 1000;
      await expect(store.adapter('Interaction').upsert('hers', anonymous, HOUR)).resolves.toBeUndefined();
      await expect(store.ping()).resolves.toBeUndefined();
      expect((await flood(store, 'again')).stored).toBe(kept - 1);
      expect(lines.map((l) => (JSON.parse(l) as { e: string }).e)).toEqual(['store_full', 'store_recovered', 'store_full']);
    } finally {
      await store.close();
    }
  });

  it('attack: a flood held at the limit, taking each place an expiring record frees, keeps the store not ready and is logged once', async () => {
    const { store, clock, lines } = setup();
    try {
      const t0 = clock.t;
      let kept = 0;
      for (; kept < 1000; kept += 1) {
        clock.t = t0 + kept * 1000;
        if (await refusalOf(store.adapter('Interaction').upsert(`flood-${kept}`, anonymous, HOUR))) break;
      }
      for (let i = 0; i < 10; i += 1) {
        clock.t = t0 + HOUR * 1000 + i * 1000;
        await store.adapter('Interaction').upsert(`held-${i}`, anonymous, HOUR);
        expectRefusal(await refusalOf(store.adapter('Interaction').upsert(`more-${i}`, anonymous, HOUR)));
        expectRefusal(await refusalOf(store.ping()));
      }
      expect(await stored(store, 'Interaction')).toBe(kept);
      expect(lines.map((l) => (JSON.parse(l) as { e: string }).e)).toEqual(['store_full']);
    } finally {
      await store.close();
    }
  });

  it('honest: a person mid-flow when the flood hits finishes in the last tenth (her interaction updated, her consent interaction, session, grant, code and token stored, the code consumed), then the store is full for all', async () => {
    const { store } = setup();
    try {
      await store.adapter('Interaction').upsert('her-login', anonymous, HOUR);
      await flood(store, 'flood');
      const session = { accountId: 'her', uid: 'her-uid' };
      await store.adapter('Interaction').upsert('her-login', { ...anonymous, result: { login: { accountId: 'her' } } }, HOUR);
      await store.adapter('Session').upsert('her-session', { ...session, kind: 'Session' }, 14 * 24 * HOUR);
      await store.adapter('Interaction').upsert('her-consent', { ...anonymous, session }, HOUR);
      await store.adapter('Grant').upsert('her-grant', { accountId: 'her', openid: { scope: 'openid' } }, 14 * 24 * HOUR);
      await store.adapter('AuthorizationCode').upsert('her-code', { grantId: 'her-grant', accountId: 'her' }, 60);
      await store.adapter('AuthorizationCode').consume('her-code');
      await store.adapter('AccessToken').upsert('her-token', { grantId: 'her-grant', accountId: 'her' }, HOUR);
      expect((await store.adapter('Session').findByUid('her-uid'))?.accountId).toBe('her');
      let refusal: unknown;
      for (let i = 0; i < 1000 && !refusal; i += 1) refusal = await refusalOf(store.adapter('AccessToken').upsert(`signed-in-${i}`, { grantId: 'her-grant', pad: 'y'.repeat(1024) }, HOUR));
      expectRefusal(refusal);
      expect(await store.adapter('AccessToken').find('her-token')).toEqual({ grantId: 'her-grant', accountId: 'her' });
    } finally {
      await store.close();
    }
  });

  it('attack: a flood of anonymous sessions (what a cookieless POST /logout stores for anyone: a logout\'s state, up to 14 KiB, for an hour) stops at nine tenths as interactions do, so her signed-in session still fits', async () => {
    const { store } = setup();
    try {
      const logoutState = (i: number): Record<string, unknown> => ({ kind: 'Session', uid: `stranger-uid-${i}`, state: { secret: 's', state: 'x'.repeat(2048) } });
      let refusal: unknown;
      let kept = 0;
      for (; kept < 1000 && !refusal; kept += 1) refusal = await refusalOf(store.adapter('Session').upsert(`stranger-${kept}`, logoutState(kept), HOUR));
      expectRefusal(refusal);
      expect((kept - 1) * JSON.stringify(logoutState(0)).length).toBeLessThanOrEqual(MAX * 0.9);
      await expect(store.adapter('Session').upsert('her-session', { kind: 'Session', uid: 'her-uid', accountId: 'her', pad: 'y'.repeat(2048) }, 14 * 24 * HOUR)).resolves.toBeUndefined();
      // A stranger's session already stored may still be rewritten (the logout's confirmation clears its state).
      await expect(store.adapter('Session').upsert('stranger-0', { kind: 'Session', uid: 'stranger-uid-0' }, HOUR)).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('attack: failed sign-ins under ever new names keep to the counters\' quarter of the budget, each new counter replacing one of the lowest standing: the victim\'s lock outlasts four times the names its pool holds, tried once, her own first sign-in is judged, and strangers\' sign-ins can still start (logged once)', async () => {
    const { store, lines } = setup();
    try {
      for (let i = 0; i < RULE.limit; i += 1) await store.attempts.fail('login-name:victim', RULE);
      const locked = await store.attempts.check('login-name:victim', RULE);
      expect(locked).toBeGreaterThan(0);
      // A sign-in's half of the share holds some 30 such counters: a lock of five failures stands until about five times as many names.
      for (let i = 0; i < 120; i += 1) await store.attempts.fail(`login-name:random-${i}`, RULE);
      expect(await store.attempts.check('login-name:victim', RULE)).toBe(locked);
      expect(await store.attempts.check('login-name:her', RULE)).toBe(0);
      expect(await store.attempts.fail('login-name:her', RULE)).toBe(0);
      await store.adapter('Session').upsert('her-session', { kind: 'Session', uid: 'her-uid', accountId: 'her' }, 14 * 24 * HOUR);
      const { stored: kept } = await flood(store, 'strangers');
      const { store: empty } = setup();
      const { stored: alone } = await flood(empty, 'strangers').finally(() => empty.close());
      expect(kept).toBeGreaterThanOrEqual(Math.floor((alone * (0.9 - COUNTER_SHARE)) / 0.9) - 1);
      expect(lines.map((l) => JSON.parse(l) as { e: string }).filter((l) => l.e === 'attempt_counters_evicted')).toEqual([
        { e: 'attempt_counters_evicted', pool: 'login', pool_bytes: (MAX * COUNTER_SHARE) / 2 },
      ]);
    } finally {
      await store.close();
    }
  });

  it('attack: a flood clears a name\'s count only after about as many new failures as her pool holds counters (some 30 here) per failure of her run: 50 names tried once leave her two counted, 100 clear them, as do 50 tried twice', async () => {
    const afterFlood = async (names: number, failuresEach: number): Promise<number> => {
      const { store } = setup();
      try {
        for (let i = 0; i < 2; i += 1) await store.attempts.fail('login-name:her', RULE);
        for (let i = 0; i < names; i += 1) for (let n = 0; n < failuresEach; n += 1) await store.attempts.fail(`login-name:random-${i}`, RULE);
        for (let i = 2; i < RULE.limit; i += 1) await store.attempts.fail('login-name:her', RULE);
        return await store.attempts.check('login-name:her', RULE);
      } finally {
        await store.close();
      }
    };
    expect(await afterFlood(50, 1)).toBe(RULE.coolDownSeconds * 1000);
    expect(await afterFlood(100, 1)).toBe(0);
    expect(await afterFlood(50, 2)).toBe(0);
  });

  describe('counters that failed often once stand above the rest only until others replace them (a name and an address as a sign-in counts them)', () => {
    const MAC = 'mac-key';
    const ADDRESS_RULE = { limit: 100, windowSeconds: 900, coolDownSeconds: 60, maxCoolDownSeconds: 3600 };
    /** Sign-in address counters of distinct /64s (each failure a password judged), each `failures` in a row. */
    const fillers = async (store: SvcStore, count: number, failures: number): Promise<void> => {
      const keys = Array.from({ length: count }, (_v, i) => addressCounterKey('login-address', `2001:db8:0:${i.toString(16)}::1`, MAC));
      for (const key of keys) for (let n = 0; n < failures; n += 1) await store.attempts.fail(key, ADDRESS_RULE);
    };
    /** One wrong password for `name` from `address` through the sign-in gate: whether it was judged. */
    const guess = async (store: SvcStore, name: string, address: string): Promise<boolean> => {
      const pass = await createAttemptGate({ attempts: store.attempts }).enter([
        { key: counterKey('login-name', name, MAC), rule: RULE, label: 'name', forgetOnSuccess: true },
        { key: addressCounterKey('login-address', address, MAC), rule: ADDRESS_RULE, label: 'address', forgetOnSuccess: false },
      ]);
      if (!isPass(pass)) return false;
      expect(await pass.failed()).toBe(0);
      return true;
    };

    it('attack: with the share full of counters of two failures, a fresh name and a fresh address, each replacing the other, are still counted: the name is locked after `limit` guesses', async () => {
      const { store } = setup();
      try {
        await fillers(store, 80, 2);
        let judged = 0;
        while (judged < 300 && (await guess(store, 'victim', '198.51.100.7'))) judged += 1;
        expect(judged).toBe(RULE.limit);
        expect(await store.attempts.check(counterKey('login-name', 'victim', MAC), RULE)).toBe(RULE.coolDownSeconds * 1000);
      } finally {
        await store.close();
      }
    });

    it('attack: counters of six failures made once do not let a fresh name of five clear a locked name again and again: of 99 failures from one address, at most two locks\' worth reach her', async () => {
      const { store } = setup();
      try {
        await fillers(store, 49, 6);
        let onVictim = 0;
        let others = 0;
        for (let fresh = 0; onVictim + others < 99 && fresh < 100; ) {
          if (await guess(store, 'victim', '198.51.100.7')) onVictim += 1;
          else if (await guess(store, `fresh-${fresh}`, '198.51.100.7')) others += 1;
          else fresh += 1;
        }
        expect(onVictim).toBeLessThanOrEqual(2 * RULE.limit);
      } finally {
        await store.close();
      }
    });

    it('honest: a name that failed once, then her right password, is forgotten; the share keeps counting others without replacing anyone below it', async () => {
      const { store } = setup();
      try {
        await fillers(store, 12, 2);
        expect(await guess(store, 'her', '198.51.100.8')).toBe(true);
        const pass = await createAttemptGate({ attempts: store.attempts }).enter([{ key: counterKey('login-name', 'her', MAC), rule: RULE, label: 'name', forgetOnSuccess: true }]);
        expect(isPass(pass) && (await pass.succeeded())).toBe(0);
        for (let i = 0; i < RULE.limit; i += 1) expect(await guess(store, 'other', '198.51.100.9')).toBe(true);
        expect(await guess(store, 'other', '198.51.100.9')).toBe(false);
      } finally {
        await store.close();
      }
    });
  });

  it('attack: management failures from ever new addresses (no password judged, so cheap) and device counters (one address makes them without end) fill only their own half of the share and never replace a name\'s or address\'s counter: the victim\'s lock is kept; honest: they go on being counted, replacing each other', async () => {
    const { store } = setup();
    const management = { limit: 5, windowSeconds: 900, coolDownSeconds: 300, maxCoolDownSeconds: 3600 };
    try {
      for (let i = 0; i < RULE.limit; i += 1) await store.attempts.fail('login-name:victim', RULE);
      const locked = await store.attempts.check('login-name:victim', RULE);
      for (let i = 0; i < 2000; i += 1) for (let n = 0; n < 3; n += 1) await store.attempts.fail(`management:address-${i}`, management);
      // Device counters too: one address makes them without end (a sign-in to its own account per cookie, then a failure).
      for (let i = 0; i < 2000; i += 1) for (let n = 0; n < 3; n += 1) await store.attempts.fail(`login-device:${i}`, RULE);
      expect(await store.attempts.check('login-name:victim', RULE)).toBe(locked);
      for (let n = 0; n < management.limit; n += 1) await store.attempts.fail('management:address-last', management);
      expect(await store.attempts.check('management:address-last', management)).toBe(management.coolDownSeconds * 1000);
    } finally {
      await store.close();
    }
  });

  it('attack: counters that count a share, not guesses (each address\'s new flows in a crowded store), make room first however much they counted: a flood of them from ever new addresses never replaces the victim\'s lock', async () => {
    const { store } = setup();
    try {
      for (let i = 0; i < RULE.limit; i += 1) await store.attempts.fail('victim-name', RULE);
      const locked = await store.attempts.check('victim-name', RULE);
      const share = { limit: 1000, windowSeconds: HOUR, coolDownSeconds: 900, maxCoolDownSeconds: HOUR, expendable: true };
      for (let i = 0; i < 200; i += 1) for (let n = 0; n < 30; n += 1) await store.attempts.fail(`flow-address-${i}`, share);
      expect(await store.attempts.check('victim-name', RULE)).toBe(locked);
    } finally {
      await store.close();
    }
  });

  it('attack: counters that expired but were not swept yet (the sweep runs once a minute) take no room from the share: made to fail more than her once and expire together, they do not leave the next new names replacing her live count, and her fifth failure locks her; honest: the new names are counted, nobody is replaced', async () => {
    const { store, clock, lines } = setup();
    const brief = { limit: 100, windowSeconds: 60, coolDownSeconds: 60, maxCoolDownSeconds: 60 };
    try {
      for (let i = 0; i < 2; i += 1) await store.attempts.fail('login-name:her', RULE);
      // With hers, some 28 counters: the sign-ins' half of the share, nearly full.
      for (let i = 0; i < 27; i += 1) for (let n = 0; n < 3; n += 1) await store.attempts.fail(`login-name:brief-${i}`, brief);
      clock.t += (brief.windowSeconds + 1) * 1000;
      for (let i = 0; i < 5; i += 1) expect(await store.attempts.fail(`login-name:new-${i}`, RULE)).toBe(0);
      for (let i = 2; i < RULE.limit; i += 1) await store.attempts.fail('login-name:her', RULE);
      expect(await store.attempts.check('login-name:her', RULE)).toBe(RULE.coolDownSeconds * 1000);
      for (let i = 1; i < RULE.limit; i += 1) await store.attempts.fail('login-name:new-0', RULE);
      expect(await store.attempts.check('login-name:new-0', RULE)).toBe(RULE.coolDownSeconds * 1000);
      expect(lines.filter((line) => line.includes('attempt_counters_evicted'))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('attack: while records fill the budget and counters hold less than their share, a name without a counter is refused before its guess is judged (503), so a full store is no way around the throttle; existing counters keep counting', async () => {
    const { store } = setup();
    try {
      await store.attempts.fail('victim-name', RULE);
      let refusal: unknown;
      for (let i = 0; i < 1000 && !refusal; i += 1) refusal = await refusalOf(store.adapter('Session').upsert(`signed-in-${i}`, { kind: 'Session', uid: `u-${i}`, accountId: `a-${i}`, pad: 'y'.repeat(1024) }, HOUR));
      expectRefusal(refusal);
      // The few bytes left take a counter or two, far below the counters' share.
      refusal = undefined;
      for (let i = 0; i < 10 && !refusal; i += 1) refusal = await refusalOf(store.attempts.fail(`stranger-${i}`, RULE));
      expectRefusal(refusal);
      expectRefusal(await refusalOf(store.attempts.check('fresh-name', RULE)));
      expectRefusal(await refusalOf(store.attempts.fail('fresh-name', RULE)));
      expect(await store.attempts.check('victim-name', RULE)).toBe(0);
      expect(await store.attempts.fail('victim-name', RULE)).toBe(0);
    } finally {
      await store.close();
    }
  });
});

describe('memory store: a request whose write the limit refuses deletes nothing either, so it can be sent again (as redis-store.test.ts)', () => {
  type Store = ReturnType<typeof createMemoryStore>;
  /** Ends interaction `i` and replaces session `s` with `s2` as a resume does, giving code `c`: one batch. */
  const resume = (store: Store, swallow = false): Promise<void> | undefined =>
    store.batch?.(async () => {
      await store.adapter('Interaction').destroy('i');
      await store.adapter('Session').destroy('s');
      expect([await store.adapter('Interaction').find('i'), await store.adapter('Session').findByUid('u')]).toEqual([undefined, undefined]);
      const writes = (async () => {
        await store.adapter('Session').upsert('s2', { kind: 'Session', uid: 'u', accountId: 'a' }, 60);
        await store.adapter('AuthorizationCode').upsert('c', { kind: 'AuthorizationCode', accountId: 'a' }, 60);
      })();
      await (swallow ? writes.catch(() => undefined) : writes);
    });
  const before = async (): Promise<Store> => {
    const store = createMemoryStore({ maxBytes: 64 * 1024 });
    await store.adapter('Interaction').upsert('i', { kind: 'Interaction', uid: 'i', session: { accountId: 'a' }, params: { state: 'x'.repeat(2000) } }, 60);
    await store.adapter('Session').upsert('s', { kind: 'Session', uid: 'u', accountId: 'a' }, 60);
    return store;
  };
  /** Fills the store to its limit, to the byte, with a token. */
  const fill = async (store: Store): Promise<void> => {
    let size = 0;
    for (let step = 64 * 1024; step >= 1; step = Math.floor(step / 2)) {
      while (await store.adapter('AccessToken').upsert('filler', { kind: 'AccessToken', pad: 'x'.repeat(size + step) }, 60).then(() => true, () => false)) size += step;
    }
  };
  const left = async (store: Store): Promise<boolean[]> =>
    Promise.all([store.adapter('Interaction').find('i'), store.adapter('Session').find('s'), store.adapter('Session').find('s2'), store.adapter('AuthorizationCode').find('c')].map(async (found) => (await found) !== undefined));

  it('attack: the store full (what the deletions free would have made room, but they land only with the writes): 503, the interaction and her session stay, nothing of the request lands; also when the request went on past the refusal', async () => {
    for (const swallow of [false, true]) {
      const store = await before();
      await fill(store);
      await expect(resume(store, swallow)).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await left(store)).toEqual([true, true, false, false]);
      expect(await store.adapter('Session').findByUid('u')).toMatchObject({ accountId: 'a' });
      await store.adapter('AccessToken').destroy('filler');
      await resume(store);
      expect(await left(store)).toEqual([false, false, true, true]);
      await store.close();
    }
  });

  it('honest: the same request on a store with room lands whole; a stranger\'s new interaction refused for the headroom kept for flows under way is that write\'s own answer (as on Redis), and the request\'s deletions land', async () => {
    const store = await before();
    await resume(store);
    expect(await left(store)).toEqual([false, false, true, true]);
    expect(await store.adapter('Session').findByUid('u')).toMatchObject({ accountId: 'a' });
    for (let i = 0; await store.adapter('Interaction').upsert(`stranger-${i}`, { kind: 'Interaction' }, 60).then(() => true, () => false); i += 1);
    await store.batch?.(async () => {
      await store.adapter('Session').destroy('s2');
      await expect(store.adapter('Interaction').upsert('stranger', { kind: 'Interaction' }, 60)).rejects.toBeInstanceOf(StoreUnavailableError);
    });
    expect(await store.adapter('Session').find('s2')).toBeUndefined();
    await store.close();
  });

  it('honest: a write of another model refused at the limit is its own caller\'s answer, as on Redis where such writes act at once (a mark the caller goes on without): the request is served and its deletions land; attack: her code refused there still deletes nothing', async () => {
    const store = await before();
    await fill(store);
    await store.batch?.(async () => {
      await store.adapter('Session').destroy('s');
      await expect(store.adapter('ManagementAddress').upsert('a', { pad: 'x'.repeat(100) }, 60)).rejects.toBeInstanceOf(StoreUnavailableError);
    });
    expect(await store.adapter('Session').find('s')).toBeUndefined();
    await expect(store.batch?.(async () => {
      await store.adapter('Interaction').destroy('i');
      await store.adapter('AuthorizationCode').upsert('c', { kind: 'AuthorizationCode', accountId: 'a' }, 60).catch(() => undefined);
    })).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(await store.adapter('Interaction').find('i')).toBeDefined();
    await store.close();
  });
});

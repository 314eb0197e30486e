import type { Logger } from '../lib/logger.js';
import { SWEEP_GAP_MS, type MemoryBudget } from './memory-budget.js';
import { counterPool, runMemoryMs, type CounterPool, STRIKE_MEMORY_SECONDS, type AttemptCounter, type AttemptRule } from './store.js';

/** The fields of the Redis scripts' hash (`ATTEMPT_FIELDS`); times in epoch ms, `windowEnd` 0 while no window is open. */
interface AttemptEntry {
  failures: number;
  windowEnd: number;
  lockedUntil: number;
  strikes: number;
  run: number;
  expiresAt: number;
  /** Its place in the order of replacement (memory store only): the floor at its last failure plus its run. */
  standing: number;
}

/** The approximate heap a counter takes beside its key. */
const COUNTER_OVERHEAD = 256;

/** Counters that replace only each other (see {@link counterPool}). */
interface Pool {
  readonly name: CounterPool;
  /** The keys by their standing, each set in the order of their last failure. */
  readonly byStanding: Map<number, Set<string>>;
  /** The standing of the last counter replaced: a failure stands its run above it. */
  floor: number;
  /** The bytes its counters hold. */
  held: number;
  /** Replacing since it was last below half its share (logged once). */
  evicting: boolean;
}

const newPool = (name: Pool['name']): Pool => ({ name, byStanding: new Map(), floor: 0, held: 0, evicting: false });

/** Where {@link createMemoryAttempts} counts. */
interface MemoryAttemptsOptions {
  /** The store's budget, which counters share with records. */
  budget: MemoryBudget;
  /** The bytes counters may hold together (`COUNTER_SHARE` of the budget), half each pool ({@link counterPool}). */
  shareBytes: number;
  /** Where the first eviction of a flood is logged (`attempt_counters_evicted`). */
  logger: Logger;
}

/**
 * The memory store's {@link AttemptCounter}: the rules of the Redis attempt scripts, each operation one synchronous step.
 * A new counter beyond its pool's half of `shareBytes` (a sign-in's name and address counters and the rest each form a
 * pool, {@link counterPool}) replaces, once the counters that expired are dropped (at most once a second), the pool's
 * counter of lowest standing, the least recently failed of those, so people can still sign in while a flood of made-up
 * names is counted. A counter's standing, set at each failure, is its
 * run of failures in a row (none for an expendable one, {@link AttemptRule.expendable}) above the standing of the last
 * counter replaced (GreedyDual aging): counters that failed often once do not stand above the rest for good, so a set
 * of them made once cannot make a name of fewer failures the one replaced by the next new counter, again and again. A
 * name's count is lost only after about as many new counters as its pool holds per failure of her run. When `budget`
 * has no room for a new counter and its pool holds less than its half, a key without a counter is refused (503) at its
 * check already, so a guess that could not be counted is never judged.
 */
export function createMemoryAttempts(now: () => number, options?: MemoryAttemptsOptions): AttemptCounter & { sweep(): number } {
  const budget = options?.budget;
  const entries = new Map<string, AttemptEntry>();
  const pools = { login: newPool('login'), other: newPool('other') };
  const poolShare = (options?.shareBytes ?? 0) / 2;
  const cost = (key: string): number => key.length + COUNTER_OVERHEAD;
  const poolOf = (key: string): Pool => pools[counterPool(key)];
  const rank = (pool: Pool, key: string, from: number | undefined, to: number | undefined): void => {
    const old = from === undefined ? undefined : pool.byStanding.get(from);
    old?.delete(key);
    if (old?.size === 0) pool.byStanding.delete(from ?? 0);
    if (to !== undefined) pool.byStanding.set(to, (pool.byStanding.get(to) ?? new Set()).add(key));
  };
  const lowest = (pool: Pool): number | undefined => {
    let min: number | undefined;
    for (const standing of pool.byStanding.keys()) if (min === undefined || standing < min) min = standing;
    return min;
  };
  const drop = (key: string): void => {
    const entry = entries.get(key);
    if (!entry) return;
    const pool = poolOf(key);
    entries.delete(key);
    rank(pool, key, entry.standing, undefined);
    pool.held -= cost(key);
    budget?.hold(-cost(key));
    if (pool.held < poolShare / 2) pool.evicting = false;
  };
  /** Whether a new counter of `bytes` goes beyond its pool's half of the share, which holds one to replace. */
  const beyondShare = (pool: Pool, bytes: number): boolean => options !== undefined && pool.held + bytes > poolShare && pool.byStanding.size > 0;
  let sweptAt = -Infinity;
  const evictFor = (pool: Pool, bytes: number): void => {
    if (!options || !beyondShare(pool, bytes)) return;
    // Counters that expired since the last sweep first: ranked above a live one, they would outlast it.
    const t = now();
    if (t - sweptAt >= SWEEP_GAP_MS) {
      sweptAt = t;
      for (const key of entries.keys()) live(key, t);
      if (!beyondShare(pool, bytes)) return;
    }
    if (!pool.evicting) options.logger.warn('attempt_counters_evicted', { pool: pool.name, pool_bytes: poolShare });
    pool.evicting = true;
    while (beyondShare(pool, bytes)) {
      const standing = lowest(pool);
      const key = standing === undefined ? undefined : pool.byStanding.get(standing)?.values().next().value;
      if (standing === undefined || key === undefined) return;
      pool.floor = Math.max(pool.floor, standing);
      drop(key);
    }
  };
  const live = (key: string, t: number): AttemptEntry | undefined => {
    const entry = entries.get(key);
    // Not `expiresAt > t`: an expiry that is not a number must keep the entry (fail closed), not drop it on every read.
    if (!entry || !(entry.expiresAt <= t)) return entry;
    drop(key);
    return undefined;
  };
  /** The live counter of `key`; without one, throws the store's refusal when a new one would not fit. */
  const counted = (key: string, t: number): AttemptEntry | undefined => {
    const entry = live(key, t);
    if (!entry && budget && !beyondShare(poolOf(key), cost(key)) && !budget.fits(cost(key))) throw budget.refusal();
    return entry;
  };
  /** Milliseconds until `entry` may try under `rule`, 0 when it may. */
  const wait = (entry: AttemptEntry | undefined, rule: AttemptRule, t: number): number => {
    if (!entry) return 0;
    if (entry.lockedUntil > t) return entry.lockedUntil - t;
    if (rule.consecutiveLimit !== undefined && entry.run >= rule.consecutiveLimit) return Math.max(1000, rule.maxCoolDownSeconds * 1000);
    return 0;
  };
  return {
    async check(key, rule) {
      const t = now();
      return wait(counted(key, t), rule, t);
    },
    async fail(key, rule) {
      const t = now();
      let entry = live(key, t);
      const known = entry !== undefined;
      const pool = poolOf(key);
      if (!entry) {
        evictFor(pool, cost(key));
        counted(key, t);
        entry = { failures: 0, windowEnd: 0, lockedUntil: 0, strikes: 0, run: 0, expiresAt: 0, standing: 0 };
        entries.set(key, entry);
        pool.held += cost(key);
        budget?.hold(cost(key));
      }
      const locked = wait(entry, rule, t);
      if (entry.lockedUntil + STRIKE_MEMORY_SECONDS * 1000 <= t) entry.strikes = 0;
      entry.run += 1;
      const standing = Math.max(entry.standing, pool.floor + (rule.expendable ? 0 : entry.run));
      rank(pool, key, known ? entry.standing : undefined, standing);
      entry.standing = standing;
      if (!locked) {
        if (entry.windowEnd <= t) {
          entry.failures = 0;
          entry.windowEnd = t + rule.windowSeconds * 1000;
        }
        entry.failures += 1;
        if (entry.failures >= rule.limit) {
          entry.strikes += 1;
          entry.lockedUntil = t + Math.min(rule.coolDownSeconds * 1000 * 2 ** (entry.strikes - 1), rule.maxCoolDownSeconds * 1000);
          entry.failures = 0;
          entry.windowEnd = 0;
        }
      }
      const strikesKept = entry.strikes > 0 ? entry.lockedUntil + STRIKE_MEMORY_SECONDS * 1000 : 0;
      entry.expiresAt = Math.max(entry.windowEnd, entry.lockedUntil, strikesKept, t + runMemoryMs(entry.run, rule.consecutiveLimit));
      budget?.hold(0, entry.expiresAt);
      return locked;
    },
    async forget(key) {
      drop(key);
    },
    sweep() {
      const t = now();
      let earliest = Infinity;
      for (const key of entries.keys()) earliest = Math.min(earliest, live(key, t)?.expiresAt ?? Infinity);
      return earliest;
    },
  };
}

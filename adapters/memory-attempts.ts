import type { Logger } from '../lib/logger.js';
import type { MemoryBudget } from './memory-budget.js';
import { runMemoryMs, STRIKE_MEMORY_SECONDS, type AttemptCounter, type AttemptRule } from './store.js';

/** The fields of the Redis scripts' hash (`ATTEMPT_HEAD`); times in epoch ms, `windowEnd` 0 while no window is open. */
interface AttemptEntry {
  failures: number;
  windowEnd: number;
  lockedUntil: number;
  strikes: number;
  run: number;
  expiresAt: number;
  /** Where it stands among the counters to replace: its run, 0 when expendable (see {@link AttemptRule.expendable}). */
  rank: number;
}

/** The approximate heap a counter takes beside its key. */
const COUNTER_OVERHEAD = 256;

/** Where {@link createMemoryAttempts} counts. */
export interface MemoryAttemptsOptions {
  /** The store's budget, which counters share with records. */
  budget: MemoryBudget;
  /** The bytes counters may hold together ({@link COUNTER_SHARE} of the budget). */
  shareBytes: number;
  /** Where the first eviction of a flood is logged (`attempt_counters_evicted`). */
  logger: Logger;
}

/**
 * The memory store's {@link AttemptCounter}: the rules of the Redis attempt scripts, each operation one synchronous step.
 * A new counter beyond `shareBytes` replaces an expendable one ({@link AttemptRule.expendable}), else the counter of
 * fewest failures in a row (the least recently failed of those), so people can still sign in while a flood of made-up names is counted, and a name's count is lost only after
 * as many names as the share holds have each failed at least as often. When `budget` has no room for a new counter
 * and counters hold less than their share, a key without a counter is refused (503) at its check already, so a guess
 * that could not be counted is never judged.
 */
export function createMemoryAttempts(now: () => number, options?: MemoryAttemptsOptions): AttemptCounter & { sweep(): number } {
  const budget = options?.budget;
  const entries = new Map<string, AttemptEntry>();
  /** The keys by their rank, each set in the order of their last failure. */
  const byRank = new Map<number, Set<string>>();
  let held = 0;
  let evicting = false;
  const cost = (key: string): number => key.length + COUNTER_OVERHEAD;
  const rank = (key: string, from: number | undefined, to: number | undefined): void => {
    const old = from === undefined ? undefined : byRank.get(from);
    old?.delete(key);
    if (old?.size === 0) byRank.delete(from ?? 0);
    if (to !== undefined) byRank.set(to, (byRank.get(to) ?? new Set()).add(key));
  };
  const drop = (key: string): void => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    rank(key, entry.rank, undefined);
    held -= cost(key);
    budget?.hold(-cost(key));
    if (evicting && held < (options?.shareBytes ?? 0) / 2) evicting = false;
  };
  /** Whether a new counter of `bytes` goes beyond the share, which holds one to replace. */
  const beyondShare = (bytes: number): boolean => options !== undefined && held + bytes > options.shareBytes && byRank.size > 0;
  const evictFor = (bytes: number): void => {
    if (!options || !beyondShare(bytes)) return;
    if (!evicting) options.logger.warn('attempt_counters_evicted', { share_bytes: options.shareBytes });
    evicting = true;
    while (beyondShare(bytes)) {
      const fewest = byRank.get(Math.min(...byRank.keys()));
      const key = fewest?.values().next().value;
      if (key === undefined) return;
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
    if (!entry && budget && !beyondShare(cost(key)) && !budget.fits(cost(key))) throw budget.refusal();
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
      if (!entry) {
        evictFor(cost(key));
        counted(key, t);
        entry = { failures: 0, windowEnd: 0, lockedUntil: 0, strikes: 0, run: 0, expiresAt: 0, rank: 0 };
        entries.set(key, entry);
        held += cost(key);
        budget?.hold(cost(key));
      }
      const locked = wait(entry, rule, t);
      if (entry.lockedUntil + STRIKE_MEMORY_SECONDS * 1000 <= t) entry.strikes = 0;
      entry.run += 1;
      rank(key, entry.rank, (entry.rank = rule.expendable ? 0 : entry.run));
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

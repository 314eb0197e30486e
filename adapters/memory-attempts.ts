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
}

/** The approximate heap a counter takes beside its key. */
const COUNTER_OVERHEAD = 256;

/**
 * The memory store's {@link AttemptCounter}: the rules of the Redis attempt scripts, each operation one synchronous step.
 * A counter is never evicted: when `budget` has no room for a new one, a key without a counter is refused (503) at its
 * check already, so a guess that could not be counted is never judged.
 */
export function createMemoryAttempts(now: () => number, budget?: MemoryBudget): AttemptCounter & { sweep(): number } {
  const entries = new Map<string, AttemptEntry>();
  const cost = (key: string): number => key.length + COUNTER_OVERHEAD;
  const drop = (key: string): void => {
    if (entries.delete(key)) budget?.hold(-cost(key));
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
    if (!entry && budget && !budget.fits(cost(key))) throw budget.refusal();
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
      let entry = counted(key, t);
      if (!entry) {
        entry = { failures: 0, windowEnd: 0, lockedUntil: 0, strikes: 0, run: 0, expiresAt: 0 };
        entries.set(key, entry);
        budget?.hold(cost(key));
      }
      const locked = wait(entry, rule, t);
      if (entry.lockedUntil + STRIKE_MEMORY_SECONDS * 1000 <= t) entry.strikes = 0;
      entry.run += 1;
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

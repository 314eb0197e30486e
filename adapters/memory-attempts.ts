import { LEASE_SECONDS, RUN_MEMORY_SECONDS, STRIKE_MEMORY_SECONDS, type AttemptCounter, type AttemptRule } from './store.js';

interface AttemptEntry {
  /** Failures in the current window. */
  failures: number;
  /** End of the current window, epoch ms (0: no window open). */
  windowEnd: number;
  /** Locked until, epoch ms. */
  lockedUntil: number;
  /** Lockouts so far. */
  strikes: number;
  /** Failures since the last success, across windows. */
  run: number;
  /** Leases of attempts in flight: lease id → lapses at, epoch ms. */
  leases: Map<string, number>;
  /** When the entry may be forgotten, epoch ms. */
  expiresAt: number;
}

/**
 * The memory store's {@link AttemptCounter}: the same rules as the Redis scripts `ATTEMPT_ENTER`,
 * `ATTEMPT_FAIL` and `ATTEMPT_LEAVE`, each operation one synchronous step (atomic within the process).
 */
export function createMemoryAttempts(now: () => number): AttemptCounter & { sweep(): void } {
  const entries = new Map<string, AttemptEntry>();
  const live = (key: string, t: number): AttemptEntry | undefined => {
    const entry = entries.get(key);
    if (entry && entry.expiresAt <= t && entry.leases.size === 0) {
      entries.delete(key);
      return undefined;
    }
    if (entry) for (const [lease, lapses] of entry.leases) if (lapses <= t) entry.leases.delete(lease);
    return entry;
  };
  const fresh = (): AttemptEntry => ({ failures: 0, windowEnd: 0, lockedUntil: 0, strikes: 0, run: 0, leases: new Map(), expiresAt: 0 });
  const keep = (entry: AttemptEntry, t: number): void => {
    let until = Math.max(entry.windowEnd, entry.lockedUntil, ...entry.leases.values());
    if (entry.strikes > 0) until = Math.max(until, t + STRIKE_MEMORY_SECONDS * 1000);
    if (entry.run > 0) until = Math.max(until, t + RUN_MEMORY_SECONDS * 1000);
    entry.expiresAt = until;
  };
  return {
    async enter(key, lease, rule: AttemptRule) {
      const t = now();
      const entry = live(key, t) ?? fresh();
      if (entry.lockedUntil > t) return entry.lockedUntil - t;
      if (rule.consecutiveLimit !== undefined && entry.run >= rule.consecutiveLimit) return Math.max(1000, rule.maxCoolDownSeconds * 1000);
      if (entry.windowEnd <= t) {
        entry.failures = 0;
        entry.windowEnd = 0;
      }
      if (entry.failures + entry.leases.size >= rule.limit) return -1;
      entry.leases.set(lease, t + LEASE_SECONDS * 1000);
      entries.set(key, entry);
      keep(entry, t);
      return 0;
    },
    async fail(key, lease, rule) {
      const t = now();
      const entry = live(key, t) ?? fresh();
      entries.set(key, entry);
      const held = entry.leases.delete(lease);
      entry.run += 1;
      if (entry.lockedUntil > t) {
        keep(entry, t);
        return held;
      }
      if (entry.windowEnd <= t) {
        entry.failures = 0;
        entry.windowEnd = t + rule.windowSeconds * 1000;
      }
      const within = held || entry.failures < rule.limit;
      entry.failures += 1;
      if (entry.failures >= rule.limit) {
        entry.strikes += 1;
        entry.lockedUntil = t + Math.min(rule.coolDownSeconds * 1000 * 2 ** (entry.strikes - 1), rule.maxCoolDownSeconds * 1000);
        entry.failures = 0;
        entry.windowEnd = 0;
      }
      keep(entry, t);
      return within;
    },
    async leave(key, lease, forget) {
      const t = now();
      const entry = live(key, t);
      if (!entry) return;
      if (lease !== undefined) entry.leases.delete(lease);
      if (forget) Object.assign(entry, { failures: 0, windowEnd: 0, lockedUntil: 0, strikes: 0, run: 0 });
      keep(entry, t);
      if (entry.leases.size === 0 && entry.expiresAt <= t) entries.delete(key);
    },
    sweep() {
      const t = now();
      for (const key of entries.keys()) live(key, t);
    },
  };
}

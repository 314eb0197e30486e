import { STRIKE_MEMORY_SECONDS, type AttemptCounter } from './store.js';

interface AttemptEntry {
  /** Attempts in the current window. */
  count: number;
  /** End of the current window, epoch ms (0: no window open). */
  windowEnd: number;
  /** Locked until, epoch ms. */
  lockedUntil: number;
  /** Lockouts so far. */
  strikes: number;
  /** When the entry may be forgotten, epoch ms. */
  expiresAt: number;
}

/**
 * The memory store's {@link AttemptCounter}: the same rules as the Redis script `ATTEMPT_TAKE`,
 * each operation one synchronous step (atomic within the process).
 */
export function createMemoryAttempts(now: () => number): AttemptCounter & { sweep(): void } {
  const entries = new Map<string, AttemptEntry>();
  const memoryMs = STRIKE_MEMORY_SECONDS * 1000;
  const live = (key: string): AttemptEntry | undefined => {
    const entry = entries.get(key);
    if (entry && entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  };
  return {
    async take(key, rule) {
      const t = now();
      const entry = live(key) ?? { count: 0, windowEnd: 0, lockedUntil: 0, strikes: 0, expiresAt: 0 };
      entries.set(key, entry);
      if (entry.lockedUntil > t) return entry.lockedUntil - t;
      if (entry.windowEnd > t) entry.count += 1;
      else {
        entry.count = 1;
        entry.windowEnd = t + rule.windowSeconds * 1000;
      }
      if (entry.count <= rule.limit) {
        entry.expiresAt = t + Math.max(entry.windowEnd - t, entry.strikes > 0 ? memoryMs : 0);
        return 0;
      }
      entry.strikes += 1;
      const coolDown = Math.min(rule.coolDownSeconds * 1000 * 2 ** (entry.strikes - 1), rule.maxCoolDownSeconds * 1000);
      entry.lockedUntil = t + coolDown;
      entry.count = 0;
      entry.windowEnd = 0;
      entry.expiresAt = t + Math.max(memoryMs, coolDown);
      return coolDown;
    },
    async giveBack(key) {
      const entry = live(key);
      if (entry && entry.count > 0) entry.count -= 1;
    },
    async reset(key) {
      entries.delete(key);
    },
    sweep() {
      const t = now();
      for (const [key, entry] of entries) if (entry.expiresAt <= t) entries.delete(key);
    },
  };
}

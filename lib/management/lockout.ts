/** Options of {@link createLockout}. */
export interface LockoutOptions {
  /** Failed attempts before a client is locked out. */
  threshold: number;
  /** How long a lockout lasts, in seconds. */
  coolDownSeconds: number;
}

/** Per-client failed-login tracking for the management endpoint (in this process). */
export interface Lockout {
  /** Seconds until `key` may try again, or 0. */
  retryAfter(key: string): number;
  /** Records a failed attempt; returns the seconds of a lockout it starts, or 0. */
  failure(key: string): number;
  /** Forgets the failures of `key` after a successful login. */
  success(key: string): void;
}

/** A lockout: after `threshold` failures from one client, 429 for `coolDownSeconds`. */
export function createLockout(options: LockoutOptions): Lockout {
  const entries = new Map<string, { failures: number; lockedUntil: number; lastFailure: number }>();
  const windowMs = options.coolDownSeconds * 1000;
  const prune = (now: number): void => {
    if (entries.size < 10_000) return;
    for (const [k, e] of entries) if (e.lockedUntil < now && now - e.lastFailure > windowMs) entries.delete(k);
  };
  return {
    retryAfter(key) {
      const entry = entries.get(key);
      const now = Date.now();
      if (!entry || entry.lockedUntil <= now) return 0;
      return Math.ceil((entry.lockedUntil - now) / 1000);
    },
    failure(key) {
      const now = Date.now();
      prune(now);
      let entry = entries.get(key);
      if (!entry || (entry.lockedUntil !== 0 && entry.lockedUntil <= now) || now - entry.lastFailure > windowMs) {
        entry = { failures: 0, lockedUntil: 0, lastFailure: now };
      }
      entry.failures += 1;
      entry.lastFailure = now;
      if (entry.failures >= options.threshold) entry.lockedUntil = now + windowMs;
      entries.set(key, entry);
      return entry.lockedUntil > now ? options.coolDownSeconds : 0;
    },
    success(key) {
      entries.delete(key);
    },
  };
}

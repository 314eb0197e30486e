import { randomBytes } from 'node:crypto';

import type { AttemptCounter, AttemptRule } from '../../adapters/store.js';
import type { Logger } from '../logger.js';

/** One counter an attempt passes (see {@link AttemptCounter}). */
export interface GateCounter<Label extends string = string> {
  key: string;
  rule: AttemptRule;
  /** What the counter stands for, as a refusal names it (`name`, `device`, `address`). */
  label: Label;
  /** A success forgets this counter's failures (a login name, a device), or only leaves it (an address). */
  forgetOnSuccess: boolean;
}

/** An attempt let through: exactly one of its settlements is used. */
export interface GatePass {
  /** The credentials were right: leaves every counter, forgetting those that say so. */
  succeeded(): Promise<void>;
  /**
   * The credentials were wrong: counts one failure on every counter. Resolves whether the attempt
   * was within every budget; only then may the answer say the credentials were wrong.
   */
  failed(): Promise<boolean>;
  /** The attempt was not judged (the authenticator failed): leaves every counter, counting nothing. */
  abandoned(): Promise<void>;
}

/** An attempt refused before it was judged. */
export interface GateRefusal<Label extends string = string> {
  /** Seconds until the attempt may be made again. */
  retryAfterSeconds: number;
  /** The counters in a cool-down, or `busy` when attempts in flight held the budget for too long. */
  locked: Label[] | 'busy';
}

/** Options of {@link createAttemptGate}. */
export interface AttemptGateOptions {
  attempts: AttemptCounter;
  /** Longest wait for attempts in flight to settle before answering `busy`, in ms (default 10 s). */
  maxWaitMs?: number;
  /** Where a failed settlement is logged (`attempt_settle_failed`, keys never named). */
  logger?: Logger;
}

/** Admits attempts through failure counters (see {@link createAttemptGate}). */
export interface AttemptGate {
  enter<Label extends string>(counters: GateCounter<Label>[]): Promise<GatePass | GateRefusal<Label>>;
}

/** Whether {@link AttemptGate.enter} let the attempt through. */
export function isPass<Label extends string>(result: GatePass | GateRefusal<Label>): result is GatePass {
  return 'succeeded' in result;
}

/**
 * The gate in front of everything that judges a secret (sign-ins, the management login): only
 * completed failures count. An attempt takes a lease on each counter at once; when a counter's
 * budget is held by attempts in flight it waits for one of them to settle (woken at once within
 * this process, polling across processes) instead of being refused, so concurrent honest attempts
 * all get through, and no more attempts than the budget are ever judged before a lockout is known.
 */
export function createAttemptGate(options: AttemptGateOptions): AttemptGate {
  const { attempts } = options;
  const maxWaitMs = options.maxWaitMs ?? 10_000;
  const waiters = new Map<string, Set<() => void>>();
  const wake = (keys: string[]): void => {
    for (const key of keys) {
      const set = waiters.get(key);
      if (!set) continue;
      waiters.delete(key);
      for (const resolve of set) resolve();
    }
  };
  const waitFor = (keys: string[]): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        for (const key of keys) waiters.get(key)?.delete(done);
        resolve();
      };
      const timer = setTimeout(done, 50 + Math.floor(Math.random() * 100));
      for (const key of keys) waiters.set(key, (waiters.get(key) ?? new Set()).add(done));
    });
  /**
   * Settles each counter at most once: a settlement whose answer was lost (a timeout) may still
   * run when the store answers, so sending it again could count a failure twice or forget failures
   * counted after an outage. One that failed is logged; its lease lapses by itself.
   */
  const settle = async (settlements: Promise<unknown>[]): Promise<PromiseSettledResult<unknown>[]> => {
    const results = await Promise.allSettled(settlements);
    const failed = results.filter((r) => r.status === 'rejected').length;
    if (failed) options.logger?.warn('attempt_settle_failed', { count: failed });
    return results;
  };
  return {
    async enter(counters) {
      const lease = randomBytes(12).toString('base64url');
      const keys = counters.map((c) => c.key);
      const leave = (taken: GateCounter[], forget: boolean): Promise<PromiseSettledResult<unknown>[]> =>
        settle(taken.map((c) => attempts.leave(c.key, lease, forget && c.forgetOnSuccess))).finally(() => wake(keys));
      const started = Date.now();
      for (;;) {
        const answers = await Promise.allSettled(counters.map((c) => attempts.enter(c.key, lease, c.rule)));
        const taken = counters.filter((_c, i) => answers[i]?.status === 'fulfilled' && answers[i].value === 0);
        const fault = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected');
        if (fault) {
          // An outage is not a failure: what was taken is left, and nothing is counted.
          await leave(taken, false);
          throw fault.reason;
        }
        const waits = answers.map((a) => (a as PromiseFulfilledResult<number>).value);
        if (waits.every((w) => w === 0)) {
          return {
            succeeded: async () => void (await leave(counters, true)),
            abandoned: async () => void (await leave(counters, false)),
            failed: async () => {
              const results = await settle(counters.map((c) => attempts.fail(c.key, lease, c.rule))).finally(() => wake(keys));
              const fault = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
              // A failure that could not be counted is not answered as one (see the caller).
              if (fault) throw fault.reason;
              return results.every((r) => (r as PromiseFulfilledResult<boolean>).value);
            },
          };
        }
        if (taken.length) await leave(taken, false);
        const locked = counters.filter((_c, i) => (waits[i] ?? 0) > 0);
        if (locked.length) {
          return { retryAfterSeconds: Math.ceil(Math.max(...waits) / 1000), locked: locked.map((c) => c.label) };
        }
        if (Date.now() - started >= maxWaitMs) return { retryAfterSeconds: 1, locked: 'busy' };
        await waitFor(counters.filter((_c, i) => waits[i] === -1).map((c) => c.key));
      }
    },
  };
}

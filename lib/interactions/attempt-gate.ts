import type { AttemptCounter, AttemptRule } from '../../adapters/store.js';
import type { Logger } from '../logger.js';

/** One counter an attempt passes (see {@link AttemptCounter}). */
export interface GateCounter<Label extends string = string> {
  key: string;
  rule: AttemptRule;
  /** What the counter stands for, as a refusal names it (`name`, `device`, `address`). */
  label: Label;
  /** A success forgets this counter's failures (a login name, a device), or only passes it (an address). */
  forgetOnSuccess: boolean;
}

/** An attempt that passed the pre-check: exactly one of its settlements is used. */
export interface GatePass {
  /**
   * The credentials were right: resolves 0 to let it in (the `forgetOnSuccess` counters forgotten), or the seconds
   * to wait when failures settled meanwhile locked a counter (counted then as a wrong guess would be).
   */
  succeeded(): Promise<number>;
  /** The credentials were wrong: counts a failure on every counter; resolves 0 within every budget, else the seconds to wait. */
  failed(): Promise<number>;
}

/** An attempt refused by the pre-check, before it was judged. */
export interface GateRefusal<Label extends string = string> {
  /** Seconds until the attempt may be made again. */
  retryAfterSeconds: number;
  /** The counters that refused it. */
  locked: Label[];
}

/** Checks and settles attempts on failure counters (see {@link createAttemptGate}). */
export interface AttemptGate {
  enter<Label extends string>(counters: GateCounter<Label>[]): Promise<GatePass | GateRefusal<Label>>;
}

/** Whether {@link AttemptGate.enter} let the attempt through. */
export function isPass<Label extends string>(result: GatePass | GateRefusal<Label>): result is GatePass {
  return 'succeeded' in result;
}

const seconds = (ms: number): number => Math.ceil(ms / 1000);

/**
 * The gate in front of everything that judges a secret (sign-ins, the management login): a
 * pre-check that writes nothing refuses a locked counter; after the secret is judged, one atomic
 * settle per counter decides whether the outcome may be revealed. Only completed failures count, so
 * honest attempts never hold each other up, and of concurrent guesses only the first `limit` are answered as wrong.
 */
export function createAttemptGate(options: { attempts: AttemptCounter; logger?: Logger }): AttemptGate {
  const { attempts } = options;
  return {
    async enter(counters) {
      const answers = await Promise.all(counters.map((c) => attempts.check(c.key, c.rule)));
      const locked = counters.filter((_c, i) => (answers[i] ?? 0) > 0);
      if (locked.length) return { retryAfterSeconds: seconds(Math.max(...answers)), locked: locked.map((c) => c.label) };
      return {
        async failed() {
          // A failure that could not be counted throws: it is never answered as a wrong guess.
          const waits = await Promise.all(counters.map((c) => attempts.fail(c.key, c.rule)));
          return seconds(Math.max(0, ...waits));
        },
        async succeeded() {
          const results = await Promise.allSettled(counters.map((c) => attempts.check(c.key, c.rule)));
          // An outage is not a wrong password: a right guess whose settle failed goes in, and is logged.
          const failed = results.filter((r) => r.status === 'rejected').length;
          if (failed) options.logger?.warn('attempt_settle_failed', { count: failed });
          const wait = Math.max(0, ...results.map((r) => (r.status === 'fulfilled' ? r.value : 0)));
          // Refused by a counter that failures locked while it was judged: it leaves the trace a wrong guess
          // leaves, so no counter tells a right guess from a wrong one, and it forgets nothing.
          if (wait > 0) return seconds(Math.max(wait, ...(await Promise.all(counters.map((c) => attempts.fail(c.key, c.rule))))));
          const forgotten = await Promise.allSettled(counters.filter((c) => c.forgetOnSuccess).map((c) => attempts.forget(c.key, { afterSuccess: true })));
          const unforgotten = forgotten.filter((r) => r.status === 'rejected').length;
          if (unforgotten) options.logger?.warn('attempt_settle_failed', { count: unforgotten });
          return 0;
        },
      };
    },
  };
}

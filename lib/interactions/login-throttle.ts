import { createHmac } from 'node:crypto';

import type { Context } from 'koa';

import type { AttemptCounter, AttemptRule } from '../../adapters/store.js';
import type { Logger } from '../logger.js';
import { addressCounterKey, clientAddress, type ProxyTrust } from '../web/client-address.js';

/** What a sign-in attempt may do next (see {@link LoginThrottle.begin}). */
export type LoginAttempt =
  | {
      readonly allowed: true;
      /** The credentials were right: forget the name's failures and do not count this attempt. */
      succeeded(): Promise<void>;
    }
  | {
      readonly allowed: false;
      /** Seconds until the name or address may try again. */
      readonly retryAfterSeconds: number;
      /** What is locked: the login name, the client address, or both. */
      readonly locked: 'name' | 'address' | 'both';
    };

/**
 * Throttles sign-ins per login name and per client address (C8), counted in the shared store so
 * every provider process sees the same counts. The router asks before it checks a password; an
 * embedder's `Authenticator` is throttled without doing anything.
 */
export interface LoginThrottle {
  /** Reserves one attempt for `login` from the request's client address. */
  begin(ctx: Context, login: string): Promise<LoginAttempt>;
}

/** Options of {@link createLoginThrottle}. */
export interface LoginThrottleOptions {
  attempts: AttemptCounter;
  rule: AttemptRule;
  /** Which `X-Forwarded-For` entry is the client (`svc.proxy`, `svc.proxy.hops`). */
  proxy: ProxyTrust;
  /**
   * Key of the MAC that turns login names and client addresses into counter keys. It must not be
   * kept in the store (the cookie key is used), so a store dump does not list who tried to sign in.
   */
  nameKey: string;
  /** Where a deferred settlement is logged (`login_throttle_settle_deferred`, keys never named). */
  logger?: Logger;
}

/** A login name as it is counted: Unicode NFKC, trimmed, lower case (one person, one budget). */
export function normalizeLoginName(login: string): string {
  return login.normalize('NFKC').trim().toLowerCase();
}

/** The counter name of a login name: a MAC of its normalized form, so a store dump lists no names. */
export function loginNameCounterKey(login: string, macKey: string): string {
  return `login-name:${createHmac('sha256', macKey).update(normalizeLoginName(login), 'utf8').digest('base64url')}`;
}

/** The sign-in throttle over the store's attempt counters. */
export function createLoginThrottle(options: LoginThrottleOptions): LoginThrottle {
  const { attempts, rule } = options;
  const later = settleLater(attempts, rule.windowSeconds * 1000, options.logger);
  return {
    async begin(ctx, login) {
      const nameKey = loginNameCounterKey(login, options.nameKey);
      const addressKey = addressCounterKey('login-address', clientAddress(ctx, options.proxy), options.nameKey);
      // Both are reserved before the password is judged, so concurrent guesses cannot all slip in.
      const [name, address] = await Promise.allSettled([attempts.take(nameKey, rule), attempts.take(addressKey, rule)]);
      if (name.status === 'rejected' || address.status === 'rejected') {
        // A store fault on one side (a Cluster node away): the attempt is not judged, so the side
        // that did reserve gets its reservation back, or a short outage would lock people out. A side
        // whose answer was lost is left counted: giving back what may never have been taken would
        // let requests that fail during an outage erase earlier failures.
        const taken = [name.status === 'fulfilled' && name.value === 0 ? nameKey : undefined, address.status === 'fulfilled' && address.value === 0 ? addressKey : undefined];
        await later.giveBack(taken.filter((key): key is string => key !== undefined));
        throw name.status === 'rejected' ? name.reason : (address as PromiseRejectedResult).reason;
      }
      const [nameWait, addressWait] = [name.value, address.value];
      if (nameWait > 0 || addressWait > 0) {
        // The refused attempt is not counted against the side that still had budget.
        await later.giveBack([nameWait === 0 ? nameKey : undefined, addressWait === 0 ? addressKey : undefined].filter((key): key is string => key !== undefined));
        const locked = nameWait > 0 && addressWait > 0 ? 'both' : nameWait > 0 ? 'name' : 'address';
        return { allowed: false, retryAfterSeconds: Math.ceil(Math.max(nameWait, addressWait) / 1000), locked };
      }
      return {
        allowed: true,
        async succeeded() {
          await later.settle([
            { settle: () => attempts.reset(nameKey) },
            { settle: () => attempts.giveBack(addressKey) },
          ]);
        },
      };
    },
  };
}

interface Settlement {
  settle: () => Promise<void>;
}

/**
 * Settles reservations now, and those the store refused (a fault) again later, until they succeed
 * or the counting window has passed (the reservation is gone with it). The sign-in does not wait
 * for a retry: its own writes fail on their own if the store is still away.
 */
function settleLater(attempts: AttemptCounter, windowMs: number, logger: Logger | undefined): { settle(work: Settlement[]): Promise<void>; giveBack(keys: string[]): Promise<void> } {
  const MAX_PENDING = 10_000;
  let pending = 0;
  const retry = (work: Settlement, until: number, delayMs: number): void => {
    if (Date.now() + delayMs > until) {
      pending -= 1;
      return;
    }
    setTimeout(() => {
      work.settle().then(
        () => {
          pending -= 1;
        },
        () => retry(work, until, Math.min(delayMs * 2, 5000)),
      );
    }, delayMs).unref();
  };
  const settle = async (work: Settlement[]): Promise<void> => {
    const results = await Promise.allSettled(work.map((w) => w.settle()));
    const failed = work.filter((_, i) => results[i]?.status === 'rejected');
    if (!failed.length) return;
    logger?.warn('login_throttle_settle_deferred', { count: failed.length, pending });
    for (const w of failed) {
      if (pending >= MAX_PENDING) break;
      pending += 1;
      retry(w, Date.now() + windowMs, 250);
    }
  };
  return {
    settle,
    giveBack: (keys) => settle(keys.map((key) => ({ settle: () => attempts.giveBack(key) }))),
  };
}

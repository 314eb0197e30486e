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
  /** Where a failed settlement is logged (`login_throttle_settle_failed`, keys never named). */
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
  /** Gives back the reservations of the keys named (the others were not taken). */
  const giveBack = (keys: (string | undefined)[]): Promise<void> =>
    settleOnce(options.logger, keys.filter((key): key is string => key !== undefined).map((key) => attempts.giveBack(key)));
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
        await giveBack([name.status === 'fulfilled' && name.value === 0 ? nameKey : undefined, address.status === 'fulfilled' && address.value === 0 ? addressKey : undefined]);
        throw name.status === 'rejected' ? name.reason : (address as PromiseRejectedResult).reason;
      }
      const [nameWait, addressWait] = [name.value, address.value];
      if (nameWait > 0 || addressWait > 0) {
        // The refused attempt is not counted against the side that still had budget.
        await giveBack([nameWait === 0 ? nameKey : undefined, addressWait === 0 ? addressKey : undefined]);
        const locked = nameWait > 0 && addressWait > 0 ? 'both' : nameWait > 0 ? 'name' : 'address';
        return { allowed: false, retryAfterSeconds: Math.ceil(Math.max(nameWait, addressWait) / 1000), locked };
      }
      return {
        allowed: true,
        async succeeded() {
          await settleOnce(options.logger, [attempts.reset(nameKey), attempts.giveBack(addressKey)]);
        },
      };
    },
  };
}

/**
 * Settles reservations now, each at most once, and never again later: a give-back or reset whose
 * answer was lost (a timeout) may still run when the store answers, so sending it again could give
 * one reservation back twice (a free guess each time) or erase failures counted after the outage.
 * (The Redis store resends one only when its breaker refused to send it: then it never ran.) One
 * that failed leaves its count standing until the window ends, and is logged
 * (`login_throttle_settle_failed`); the sign-in goes on either way.
 */
async function settleOnce(logger: Logger | undefined, settlements: Promise<void>[]): Promise<void> {
  const failed = (await Promise.allSettled(settlements)).filter((r) => r.status === 'rejected').length;
  if (failed) logger?.warn('login_throttle_settle_failed', { count: failed });
}

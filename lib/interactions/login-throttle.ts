import { createHmac } from 'node:crypto';

import type { Context } from 'koa';

import type { AttemptCounter, AttemptRule } from '../../adapters/store.js';
import { addressCounterKey, clientAddress, type ProxyTrust } from '../http/client-address.js';

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
}

/** A login name as it is counted: Unicode NFKC, trimmed, lower case (one person, one budget). */
export function normalizeLoginName(login: string): string {
  return login.normalize('NFKC').trim().toLowerCase();
}

/** The sign-in throttle over the store's attempt counters. */
export function createLoginThrottle(options: LoginThrottleOptions): LoginThrottle {
  const { attempts, rule } = options;
  const nameKeyOf = (login: string): string =>
    `login-name:${createHmac('sha256', options.nameKey).update(normalizeLoginName(login), 'utf8').digest('base64url')}`;
  return {
    async begin(ctx, login) {
      const nameKey = nameKeyOf(login);
      const addressKey = addressCounterKey('login-address', clientAddress(ctx, options.proxy), options.nameKey);
      // Both are reserved before the password is judged, so concurrent guesses cannot all slip in.
      const [nameWait, addressWait] = await Promise.all([attempts.take(nameKey, rule), attempts.take(addressKey, rule)]);
      if (nameWait > 0 || addressWait > 0) {
        // The refused attempt is not counted against the side that still had budget.
        if (nameWait === 0) await attempts.giveBack(nameKey);
        if (addressWait === 0) await attempts.giveBack(addressKey);
        const locked = nameWait > 0 && addressWait > 0 ? 'both' : nameWait > 0 ? 'name' : 'address';
        return { allowed: false, retryAfterSeconds: Math.ceil(Math.max(nameWait, addressWait) / 1000), locked };
      }
      return {
        allowed: true,
        async succeeded() {
          await Promise.all([attempts.reset(nameKey), attempts.giveBack(addressKey)]);
        },
      };
    },
  };
}

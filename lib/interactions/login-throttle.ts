import type { Context } from 'koa';

import type { AttemptCounter, AttemptRule } from '../../adapters/store.js';
import type { Logger } from '../logger.js';
import { createAttemptGate, isPass, type GateCounter, type GatePass } from './attempt-gate.js';
import { DEVICE_COOKIE, DeviceCookies, deviceCookieValues } from './device-cookie.js';
import { addressCounterKey, clientAddress, counterKey, type ProxyTrust } from '../web/client-address.js';

/** What a sign-in attempt may do next (see {@link LoginThrottle.begin}). */
export type LoginAttempt =
  | ({ readonly allowed: true } & GatePass)
  | {
      readonly allowed: false;
      /** Seconds until the name, device or address may try again. */
      readonly retryAfterSeconds: number;
      /** What is locked: the login name, the device, the client address, or both name and address. */
      readonly locked: 'name' | 'device' | 'address' | 'both';
    };

/**
 * Throttles sign-ins by completed failures, counted in the shared store: per device for a browser
 * with a device cookie for the name, otherwise per login name and per client address.
 */
export interface LoginThrottle {
  /** Lets one attempt for `login` through, or refuses it. A success sets or renews the device cookie. */
  begin(ctx: Context, login: string): Promise<LoginAttempt>;
}

/** Options of {@link createLoginThrottle}. */
export interface LoginThrottleOptions {
  attempts: AttemptCounter;
  /** Failures per login name (browsers without a device cookie) and per device. */
  rule: AttemptRule;
  /** Failures per client address, of attempts without a device cookie. */
  addressRule: AttemptRule;
  /** Failures in a row after which only device-cookie browsers may try the name, and then no device either. */
  consecutiveLimit: number;
  /** The authenticator's canonical form of a login (`Authenticator.canonicalLogin`); default {@link normalizeLoginName}. */
  canonicalLogin?: (login: string) => string;
  /** Which `X-Forwarded-For` entry is the client (`svc.proxy`, `svc.proxy.hops`). */
  proxy: ProxyTrust;
  /** The cookie keys, newest first: the first keys the counter names (a store dump lists nobody); all verify device cookies. */
  cookieKeys: readonly string[];
  /** How long a device cookie stays valid after a sign-in, in seconds. */
  deviceLifetimeSeconds: number;
  /** The device cookie's path and whether it is `Secure` (an https base URL). */
  cookie: { path: string; secure: boolean };
  /** Where a failed settlement is logged. */
  logger?: Logger;
}

/**
 * A login name as it is counted: without default-ignorable characters (zero-width spaces and joiners, soft hyphens,
 * variation selectors: invisible, and ignored by collations, which would take each of endless such spellings for one
 * login), then Unicode NFKC (dropped after it, one between a letter and its accent left the letter decomposed, one
 * more budget for each place it sat), trimmed, lower case (one person, one budget).
 */
export function normalizeLoginName(login: string): string {
  return login.replace(/\p{Default_Ignorable_Code_Point}/gu, '').normalize('NFKC').trim().toLowerCase();
}

/** The counter name of a login name: a MAC of its canonical form, so a store dump lists no names. */
export function loginNameCounterKey(login: string, macKey: string, canonical: (login: string) => string = normalizeLoginName): string {
  return counterKey('login-name', canonical(login), macKey);
}

/** The sign-in throttle over the store's attempt counters. */
export function createLoginThrottle(options: LoginThrottleOptions): LoginThrottle {
  const macKey = options.cookieKeys[0] ?? '';
  const devices = new DeviceCookies(options.cookieKeys, options.deviceLifetimeSeconds);
  const gate = createAttemptGate({ attempts: options.attempts, logger: options.logger });
  const nameRule: AttemptRule = { ...options.rule, consecutiveLimit: options.consecutiveLimit };
  const canonical = options.canonicalLogin ?? normalizeLoginName;
  return {
    async begin(ctx, login) {
      const name = canonical(login);
      // One another host planted may come before hers: the first that verifies counts, and a success renews it.
      const values = deviceCookieValues(ctx.get('cookie'));
      const verified = values.map((value) => ({ value, device: devices.deviceFor(value, name) })).find(({ device }) => device);
      const cookie = verified?.value ?? values[0];
      const device = verified?.device;
      const nameKey = loginNameCounterKey(login, macKey, canonical);
      const counters: GateCounter<'name' | 'device' | 'address'>[] = device
        ? [{ key: counterKey('login-device', device, macKey), rule: nameRule, label: 'device', forgetOnSuccess: true }]
        : [
            { key: nameKey, rule: nameRule, label: 'name', forgetOnSuccess: true },
            { key: addressCounterKey('login-address', clientAddress(ctx, options.proxy), macKey), rule: options.addressRule, label: 'address', forgetOnSuccess: false },
          ];
      const result = await gate.enter(counters);
      if (!isPass(result)) {
        const { locked } = result;
        return { allowed: false, retryAfterSeconds: result.retryAfterSeconds, locked: locked.length > 1 ? 'both' : (locked[0] ?? 'name') };
      }
      return {
        allowed: true,
        failed: () => result.failed(),
        async succeeded() {
          const wait = await result.succeeded();
          if (wait) return wait;
          // A sign-in from a device also forgets the name's failures: she is the one it belongs to.
          if (device) await options.attempts.forget(nameKey, { afterSuccess: true }).catch(() => options.logger?.warn('attempt_settle_failed', { count: 1 }));
          ctx.cookies.set(DEVICE_COOKIE, devices.issue(cookie, name, device), {
            path: options.cookie.path,
            secure: options.cookie.secure,
            httpOnly: true,
            sameSite: 'strict',
            maxAge: options.deviceLifetimeSeconds * 1000,
            overwrite: true,
            signed: false,
          });
          return 0;
        },
      };
    },
  };
}

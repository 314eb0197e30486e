import { createHash, timingSafeEqual } from 'node:crypto';

import type { Authenticator } from '../claims/authenticator.js';

/** A demo account of the example server (C8). */
export interface DemoAccount {
  /** The `sub`. */
  accountId: string;
  login: string;
  password: string;
}

/** The demo accounts `demo`/`demo` and `demo-basic`/`demo-basic` (only when `svc.demo.enabled`). */
const DEMO_ACCOUNTS: readonly DemoAccount[] = [
  { accountId: 'demo-0001', login: 'demo', password: 'demo' },
  { accountId: 'demo-0002', login: 'demo-basic', password: 'demo-basic' },
];

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** An {@link Authenticator} over fixed accounts, checking all in constant time so timing reveals no login. */
export function createStaticAuthenticator(accounts: readonly DemoAccount[] = DEMO_ACCOUNTS): Authenticator {
  const entries = accounts.map((a) => ({ id: a.accountId, login: digest(a.login), password: digest(a.password) }));
  const ids = new Set(accounts.map((a) => a.accountId));
  return {
    // Logins are compared as they are: `DEMO` is not `demo`.
    canonicalLogin: (login) => login,
    async authenticate(login, password) {
      const l = digest(login);
      const p = digest(password);
      let found: string | undefined;
      for (const e of entries) {
        const loginOk = timingSafeEqual(l, e.login);
        const passwordOk = timingSafeEqual(p, e.password);
        if (loginOk && passwordOk) found = e.id;
      }
      return found;
    },
    async exists(accountId) {
      return ids.has(accountId);
    },
  };
}

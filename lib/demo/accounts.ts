import type { Authenticator } from '../claims/authenticator.js';
import { sameSecret } from '../web/basic-auth.js';

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

/** An {@link Authenticator} over fixed accounts, checking all with {@link sameSecret} so timing reveals no login. */
export function createStaticAuthenticator(accounts: readonly DemoAccount[] = DEMO_ACCOUNTS): Authenticator {
  const ids = new Set(accounts.map((a) => a.accountId));
  return {
    // Logins are compared as they are: `DEMO` is not `demo`.
    canonicalLogin: (login) => login,
    async authenticate(login, password) {
      let found: string | undefined;
      for (const account of accounts) {
        const loginOk = sameSecret(login, account.login);
        const passwordOk = sameSecret(password, account.password);
        if (loginOk && passwordOk) found = account.accountId;
      }
      return found;
    },
    async exists(accountId) {
      return ids.has(accountId);
    },
  };
}

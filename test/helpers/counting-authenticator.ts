import type { Authenticator } from '../../lib/claims/authenticator.js';
import { createStaticAuthenticator } from '../../lib/demo/accounts.js';

/**
 * The demo accounts and `person-{n}` (password `pw-person-{n}`), counting the passwords judged: each wrong one judged is
 * one failure counted against her name and address. `bound-{n}` throws, as an LDAP bind refusing a wrong password does.
 */
export function countingAuthenticator(): { authenticator: Authenticator; judged: () => number } {
  const inner = createStaticAuthenticator();
  const person = (login: string): boolean => /^person-\d+$/.test(login);
  let judged = 0;
  return {
    judged: () => judged,
    authenticator: {
      authenticate: async (login, password) => {
        judged += 1;
        if (login.startsWith('bound-')) throw Object.assign(new Error(`invalid credentials for ${login}`), { name: 'InvalidCredentialsError' });
        if (person(login)) return password === `pw-${login}` ? login : undefined;
        return inner.authenticate(login, password);
      },
      exists: async (sub) => person(sub) || inner.exists(sub),
    },
  };
}

/**
 * How svc-connect signs people in. Embedders implement this against their own user store; the
 * example server uses the demo accounts. Implementations must not reveal whether an account exists
 * (answer `undefined` for both an unknown login and a wrong password) and should compare secrets in
 * constant time.
 */
export interface Authenticator {
  /**
   * Checks a login/password pair.
   * @returns the stable account id (the `sub`), or `undefined` when the pair is not valid.
   */
  authenticate(login: string, password: string): Promise<string | undefined>;
  /**
   * Tells whether an account id still exists (sessions of deleted accounts end).
   */
  exists(accountId: string): Promise<boolean>;
  /**
   * How this authenticator tells logins apart: two logins with the same canonical form must be one
   * account. The sign-in throttle counts failures, device cookies and successes per canonical form,
   * so one person has one budget however her login is spelled, and one account's success never
   * forgets another's failures. Default: Unicode NFKC, trimmed, lower case. An authenticator that
   * tells `Erika` from `erika` must supply its own (for example the login as it is).
   */
  canonicalLogin?(login: string): string;
}

/**
 * How svc-connect signs people in. Embedders implement this against their own user store; the
 * example server uses the demo accounts. Implementations must not reveal whether an account exists
 * (answer `undefined` for both an unknown login and a wrong password) and should compare secrets in
 * constant time.
 */
export interface Authenticator {
  /** The stable account id (the `sub`) of a login/password pair, or `undefined` when it is not valid. */
  authenticate(login: string, password: string): Promise<string | undefined>;
  /** Whether an account id still exists (sessions of deleted accounts end). */
  exists(accountId: string): Promise<boolean>;
  /**
   * How logins are told apart: logins with one canonical form must be one account (the sign-in
   * throttle counts per canonical form). Default: Unicode NFKC, trimmed, lower case; an
   * authenticator that tells `Erika` from `erika` must supply its own.
   */
  canonicalLogin?(login: string): string;
}

/**
 * How svc-connect signs people in. Embedders implement this against their own user store; the
 * example server uses the demo accounts. Implementations must not reveal whether an account exists
 * (answer `undefined` for both an unknown login and a wrong password) and should compare secrets in
 * constant time.
 */
export interface Authenticator {
  /**
   * The stable account id (the `sub`) of a login/password pair, or `undefined` when it is not valid. An account id is 1
   * to 255 printable ASCII characters without spaces (a database key, a UUID); anything else, and a throw or no answer
   * within `svc.authenticator.timeout-ms`, fails the sign-in with `server_error` and counts as a failed attempt. When
   * the directory could not judge the password (unreachable), throw `AuthenticatorUnavailableError`: a 503 that counts
   * nothing; never throw it for a wrong password.
   */
  authenticate(login: string, password: string): Promise<string | undefined>;
  /**
   * Whether an account id still exists (sessions of deleted accounts end; an account it denies does not sign in). When
   * the directory cannot tell, throw `AuthenticatorUnavailableError` (a 503).
   */
  exists(accountId: string): Promise<boolean>;
  /**
   * How logins are told apart: logins with one canonical form must be one account, and the logins
   * of one account should have one canonical form (the sign-in throttle counts per canonical form,
   * so each form gets its own budget). Default: Unicode NFKC, without default-ignorable characters,
   * trimmed, lower case; an authenticator that tells `Erika` from `erika` must supply its own, and
   * so should one that takes more logins for one (`érika` for `erika` by an accent-insensitive collation).
   */
  canonicalLogin?(login: string): string;
}

import { AuthenticatorError, AuthenticatorUnavailableError } from '../errors.js';
import type { Authenticator } from './authenticator.js';

/**
 * Whether `value` may be an account id: 1 to 255 printable ASCII characters, no space (OpenID Connect Core 2 bounds a
 * `sub` at 255 ASCII characters). So no two spellings of one id exist (composed and decomposed accents, a trailing
 * space, invisible characters), no two ids hash alike into one pairwise `sub` (a lone surrogate is hashed as U+FFFD),
 * and no id carries a control character into the store, a log or a terminal.
 */
export const isAccountId = (value: unknown): value is string => typeof value === 'string' && /^[\x21-\x7e]{1,255}$/.test(value);

/** What an authenticator answered that is no account id: its `code` says what is wrong, never the value. */
const invalidAnswer = (code: string): Error => Object.assign(new TypeError('the authenticator answered something that is not an account id'), { name: 'AuthenticatorAnswerInvalid', code });

/**
 * What an authenticator threw as an {@link AuthenticatorError} (kept when it already is one), or, for an outage it
 * reported, a fresh {@link AuthenticatorUnavailableError} (its fixed text, whatever the thrown one was given).
 */
export const asAuthenticatorError = (thrown: unknown): AuthenticatorError | AuthenticatorUnavailableError => {
  try {
    if (thrown instanceof AuthenticatorUnavailableError) return new AuthenticatorUnavailableError({ cause: thrown.thrown });
    if (thrown instanceof AuthenticatorError) return thrown;
  } catch {
    // A Proxy whose prototype throws when read: none of ours, and what reading it threw goes nowhere.
  }
  return new AuthenticatorError(thrown);
};

/** Whether the authenticator reported an outage ({@link AuthenticatorUnavailableError}): it judged no password. */
export const isAuthenticatorOutage = (err: unknown): err is AuthenticatorUnavailableError => err instanceof AuthenticatorUnavailableError;

/** `call`'s answer, or an {@link AuthenticatorError} when it throws or gives none within `timeoutMs`. */
async function bounded<T>(timeoutMs: number, call: () => Promise<T> | T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('no answer in time'), { name: 'AuthenticatorTimeout' })), timeoutMs);
  });
  try {
    return await Promise.race([(async () => call())(), timeout]);
  } catch (thrown) {
    throw asAuthenticatorError(thrown);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The embedder's authenticator as svc-connect calls it: each call bounded by `timeoutMs` (`svc.authenticator.timeout-ms`),
 * what it throws an {@link AuthenticatorError} (never its message; an {@link AuthenticatorUnavailableError} stays one),
 * and its answers checked before anything is stored:
 * `authenticate` answers an account id ({@link isAccountId}) or no account (`undefined`, and `null` or `false` as a
 * JavaScript module may write it); anything else (a number, the directory's row, a name with a space) throws
 * `AuthenticatorAnswerInvalid` with the code `ACCOUNT_ID_NOT_STRING` or `ACCOUNT_ID_MALFORMED`. `canonicalLogin` must
 * answer a string (`CANONICAL_LOGIN_NOT_STRING`).
 */
export function guardAuthenticator(authenticator: Authenticator, timeoutMs: number): Authenticator {
  const canonical = authenticator.canonicalLogin?.bind(authenticator);
  return {
    async authenticate(login, password) {
      const answer: unknown = await bounded(timeoutMs, () => authenticator.authenticate(login, password));
      if (answer === undefined || answer === null || answer === false) return undefined;
      if (typeof answer !== 'string') throw new AuthenticatorError(invalidAnswer('ACCOUNT_ID_NOT_STRING'));
      if (!isAccountId(answer)) throw new AuthenticatorError(invalidAnswer('ACCOUNT_ID_MALFORMED'));
      return answer;
    },
    exists: (accountId) => bounded(timeoutMs, () => authenticator.exists(accountId)),
    ...(canonical && {
      canonicalLogin(login: string): string {
        let form: unknown;
        try {
          form = canonical(login);
        } catch (thrown) {
          throw asAuthenticatorError(thrown);
        }
        if (typeof form !== 'string') throw new AuthenticatorError(invalidAnswer('CANONICAL_LOGIN_NOT_STRING'));
        return form;
      },
    }),
  };
}

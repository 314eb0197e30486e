import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** The outcome of checking an `Authorization: Basic` header. */
export type BasicAuthResult = 'ok' | 'missing' | 'malformed' | 'wrong';

/**
 * Checks HTTP Basic credentials in constant time: both the user and the password are compared as
 * SHA-256 digests with `timingSafeEqual`, always both, so timing reveals neither length nor which
 * part was wrong.
 */
export function checkBasicAuth(header: string | undefined, user: string, password: string): BasicAuthResult {
  if (!header) return 'missing';
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!match?.[1]) return 'malformed';
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  const userOk = timingSafeEqual(digest(decoded.slice(0, colon)), digest(user));
  const passwordOk = timingSafeEqual(digest(decoded.slice(colon + 1)), digest(password));
  return userOk && passwordOk ? 'ok' : 'wrong';
}

import { createHash, timingSafeEqual } from 'node:crypto';

/** The two parts of HTTP Basic credentials (RFC 7617). */
export interface BasicCredentials {
  user: string;
  password: string;
}

/** How the parts are spelled inside the base64: as they are, or form-url-encoded (OAuth `client_secret_basic`, RFC 6749 section 2.3.1). */
interface BasicOptions {
  formEncoded?: boolean;
}

const formDecode = (part: string): string => decodeURIComponent(part.replace(/\+/g, '%20'));

/** The `Authorization` value `Basic base64(user:password)`, each part form-url-encoded first when `formEncoded`. */
export function basicAuthorization(user: string, password: string, options: BasicOptions = {}): string {
  const pair = options.formEncoded ? `${encodeURIComponent(user)}:${encodeURIComponent(password)}` : `${user}:${password}`;
  return `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
}

/**
 * The credentials of an `Authorization: Basic` header, read as oidc-provider reads client
 * credentials (scheme in any case, lenient base64, split at the first colon); `undefined` when absent or malformed.
 */
export function parseBasicAuthorization(header: string | undefined, options: BasicOptions = {}): BasicCredentials | undefined {
  const parts = header?.split(' ');
  if (parts?.length !== 2 || parts[0]?.toLowerCase() !== 'basic' || !parts[1]) return undefined;
  const decoded = Buffer.from(parts[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const [user, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  if (!options.formEncoded) return { user, password };
  try {
    return { user: formDecode(user), password: formDecode(password) };
  } catch {
    return undefined;
  }
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Whether `given` is `expected`, compared as SHA-256 digests in constant time: timing tells nothing of either. */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** The outcome of checking an `Authorization: Basic` header. */
export type BasicAuthResult = 'ok' | 'missing' | 'malformed' | 'wrong';

/**
 * Checks HTTP Basic credentials with {@link sameSecret}, always both parts, each in Unicode Normalization Form C (what a
 * challenge with `charset="UTF-8"` asks of them, RFC 7617 2.1), so a letter composed otherwise than configured still matches.
 */
export function checkBasicAuth(header: string | undefined, user: string, password: string): BasicAuthResult {
  if (!header) return 'missing';
  const given = parseBasicAuthorization(header);
  if (!given) return 'malformed';
  const userOk = sameSecret(given.user.normalize('NFC'), user.normalize('NFC'));
  const passwordOk = sameSecret(given.password.normalize('NFC'), password.normalize('NFC'));
  return userOk && passwordOk ? 'ok' : 'wrong';
}

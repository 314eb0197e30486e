/**
 * A users file for the bundled server in production (docs/operations/production.md): a JSON array
 * of `{ "login", "sub", "password", "claims" }`, where `password` is an scrypt hash made by
 * `npx tsx examples/authenticator-file.ts hash` and `claims` holds the person's claims by name.
 * Read once at start by examples/authenticator-file.ts and examples/claims-file.ts.
 */
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// The claims module itself, not the package index: `hash` then runs without loading the provider.
import { isAccountId } from '../lib/claims/authenticator-guard.js';
import { fitsClaimType } from '../lib/claims/claim-types.js';
import { PROTOCOL_CLAIMS } from '../lib/claims/scopes.js';
import { readJsonFile } from '../lib/user-files.js';

/** One person of the users file. */
export interface FileUser {
  /** What the person types as login name. */
  login: string;
  /** The stable account id (the `sub` relying parties see). */
  sub: string;
  /** `scrypt:N:r:p:salt:hash` (salt and hash base64url), from {@link hashPassword}. */
  password: string;
  /** The person's claims by name (`name`, `email`, `email_verified`, …). */
  claims?: Record<string, unknown>;
}

/** The environment variable naming the users file; default `users.json` in the working directory. */
export const USERS_FILE_ENV = 'AUTH_USERS_FILE';

/** The users file named by {@link USERS_FILE_ENV}, or `users.json`. */
export function usersFilePath(env: NodeJS.ProcessEnv = process.env): string {
  return env[USERS_FILE_ENV] || 'users.json';
}

/** scrypt parameters of new hashes (OWASP's minimum for scrypt: N=2^17, r=8, p=1). */
const DEFAULT_PARAMS = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;
/** The most a users file holds: tens of thousands of users with their claims. */
const USERS_FILE_LIMIT = { maxBytes: 16 * 2 ** 20 };

function scrypt(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** Parses `scrypt:N:r:p:salt:hash`; throws without echoing the value. */
function parseHash(encoded: string): { N: number; r: number; p: number; salt: Buffer; hash: Buffer } {
  const parts = encoded.split(':');
  const [scheme, n, r, p, salt, hash] = parts;
  if (parts.length !== 6 || scheme !== 'scrypt') throw new Error('password must be scrypt:N:r:p:salt:hash (make one with `npx tsx examples/authenticator-file.ts hash`)');
  const N = Number(n);
  const params = { N, r: Number(r), p: Number(p) };
  // Bounded so a users file cannot make a sign-in cost more than 256 MiB and 8 times the default work
  // (a long salt is hashed once per 32 bytes of p·128·r).
  if (!Number.isInteger(N) || N < 2 ** 14 || N > 2 ** 17 || (N & (N - 1)) !== 0) throw new Error('scrypt N must be a power of two from 16384 to 131072');
  if (!Number.isInteger(params.r) || params.r < 1 || params.r > 16) throw new Error('scrypt r must be from 1 to 16');
  if (!Number.isInteger(params.p) || params.p < 1 || params.p > 4) throw new Error('scrypt p must be from 1 to 4');
  const saltBytes = Buffer.from(salt ?? '', 'base64url');
  const hashBytes = Buffer.from(hash ?? '', 'base64url');
  if (saltBytes.length < 16 || saltBytes.length > 64) throw new Error('scrypt salt must be 16 to 64 bytes');
  if (hashBytes.length < 32 || hashBytes.length > 64) throw new Error('scrypt hash must be 32 to 64 bytes');
  return { ...params, salt: saltBytes, hash: hashBytes };
}

const memoryFor = (h: { N: number; r: number }): number => 128 * h.N * h.r * 2;

/**
 * A login as the users file tells logins apart: in Unicode Normalization Form C, so a letter typed composed otherwise
 * (`e` and a combining accent, as macOS file names and some keyboards give it) is the same letter, without white space
 * around it (a phone keyboard completing the word adds a space); case and compatibility forms (`ﬁ`, full-width letters)
 * still make another login.
 */
export const sameLogin = (login: string): string => login.normalize('NFC').trim();

/**
 * A password as it is hashed and verified: in Unicode Normalization Form C (RFC 8265's OpaqueString, as NIST SP 800-63B
 * 5.1.1.2 asks), so a letter composed otherwise than when it was hashed still matches.
 */
const samePassword = (password: string): string => password.normalize('NFC');

/** Hashes a password (in NFC) with scrypt and a random salt: `scrypt:N:r:p:salt:hash`. */
export async function hashPassword(password: string, params: { N: number; r: number; p: number } = DEFAULT_PARAMS): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(samePassword(password), salt, KEY_LENGTH, { ...params, maxmem: memoryFor(params) });
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), hash.toString('base64url')].join(':');
}

/** Whether `password` (in NFC) matches the scrypt hash `encoded` (compared in constant time). */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const h = parseHash(encoded);
  const key = await scrypt(samePassword(password), h.salt, h.hash.length, { N: h.N, r: h.r, p: h.p, maxmem: memoryFor(h) });
  return timingSafeEqual(key, h.hash);
}

/**
 * Reads and checks the users file: unique logins and subs, valid hashes, claims that are not
 * protocol claims and have the type OpenID Connect gives them. Errors name the file and the entry, never a hash or a
 * claim value.
 */
export function readUsersFile(path: string): FileUser[] {
  const parsed = readJsonFile(path, (reason) => new Error(`the users file: ${reason}; set ${USERS_FILE_ENV} to its path`), USERS_FILE_LIMIT);
  if (!Array.isArray(parsed)) throw new Error(`the users file ${path} must hold a JSON array of users`);
  const logins = new Set<string>();
  const subs = new Set<string>();
  return parsed.map((entry: unknown, i) => {
    const at = `the users file ${path}, entry ${i}`;
    const user = (entry ?? {}) as Partial<FileUser>;
    if (typeof user.login !== 'string' || !sameLogin(user.login)) throw new Error(`${at}: login must be a non-empty string`);
    if (!isAccountId(user.sub)) throw new Error(`${at}: sub must be 1 to 255 printable ASCII characters`);
    if (logins.has(sameLogin(user.login))) throw new Error(`${at}: the login is used twice`);
    if (subs.has(user.sub)) throw new Error(`${at}: the sub is used twice`);
    logins.add(sameLogin(user.login));
    subs.add(user.sub);
    try {
      parseHash(typeof user.password === 'string' ? user.password : '');
    } catch (err) {
      throw new Error(`${at}: ${(err as Error).message}`);
    }
    if (user.claims !== undefined && (typeof user.claims !== 'object' || user.claims === null || Array.isArray(user.claims))) {
      throw new Error(`${at}: claims must be an object of claim names`);
    }
    const protocol = Object.keys(user.claims ?? {}).filter((name) => PROTOCOL_CLAIMS.has(name));
    if (protocol.length > 0) throw new Error(`${at}: claims must not set protocol claims (${protocol.join(', ')})`);
    const mistyped = Object.entries(user.claims ?? {}).filter(([name, value]) => value !== null && !fitsClaimType(name, value));
    if (mistyped.length > 0) throw new Error(`${at}: claims must have the type OpenID Connect gives them (${mistyped.map(([name]) => name).join(', ')})`);
    return { login: user.login, sub: user.sub, password: user.password as string, ...(user.claims ? { claims: user.claims } : {}) };
  });
}

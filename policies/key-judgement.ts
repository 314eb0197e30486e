import { createPublicKey, diffieHellman, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';

import type { JWK } from 'jose';

import { usageDefect, withArticle } from './key-usage.js';
import { modulusDefect } from './rsa-modulus.js';

/** JWK members that only a private or symmetric key has (RFC 7518 section 6). */
export const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'] as const;

/** Smallest accepted RSA modulus, in bits. */
export const MIN_RSA_BITS = 2048;
/**
 * Largest accepted RSA modulus, in bits. Telling a prime modulus from a real one takes a modular
 * exponentiation whose cost grows with the cube of the size: about 2 ms at 2048 bits, 25 ms at
 * 4096, 110 ms at 8192 and 850 ms at 16384 (OpenSSL, one core).
 */
export const MAX_RSA_BITS = 4096;
/** Smallest accepted RSA public exponent (NIST SP 800-56B: 65537 ≤ e, e odd). */
export const MIN_RSA_EXPONENT = 65537n;
/** Longest accepted RSA public exponent, in bits: OpenSSL refuses to encrypt with a longer one to a modulus above 3072 bits. */
export const MAX_RSA_EXPONENT_BITS = 64;

/** Curve → exact coordinate length in bytes (RFC 7518 section 6.2.1.2, RFC 8037 section 2). */
const EC_COORDINATE_BYTES: Record<string, number> = { 'P-256': 32, 'P-384': 48, 'P-521': 66 };
const OKP_X_BYTES: Record<string, number> = { X25519: 32, X448: 56, Ed25519: 32, Ed448: 57 };

class Defect extends Error {}
const defect = (reason: string): never => {
  throw new Defect(reason);
};

/** Decodes a base64url member, insisting on its one canonical spelling (no padding, `+`, `/` or stray bits). */
function octets(key: JWK, member: string): Buffer {
  const value: unknown = (key as Record<string, unknown>)[member];
  if (typeof value !== 'string' || value === '') return defect(`${member} must be a non-empty base64url string`);
  const bytes = Buffer.from(value, 'base64url');
  if (!/^[A-Za-z0-9_-]+$/.test(value) || bytes.toString('base64url') !== value) return defect(`${member} is not canonical base64url`);
  return bytes;
}

/** An RFC 7518 Base64urlUInt member: canonical base64url of the fewest octets (zero is one zero octet). */
function unsignedOctets(key: JWK, member: string): Buffer {
  const bytes = octets(key, member);
  if (bytes.length > 1 && bytes[0] === 0) {
    const zeros = bytes.findIndex((byte) => byte !== 0);
    const count = zeros === -1 ? bytes.length - 1 : zeros;
    return defect(`${member} carries ${count} leading zero byte${count === 1 ? '' : 's'}; RFC 7518 requires the fewest octets`);
  }
  return bytes;
}

/** Bits of the unsigned integer in minimal big-endian `bytes`, read without building a bigint. */
const bitsOf = (bytes: Buffer): number => (bytes.length === 0 || bytes[0] === 0 ? 0 : (bytes.length - 1) * 8 + 32 - Math.clz32(bytes[0] as number));

const bigint = (bytes: Buffer): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${bytes.toString('hex')}`));

/** Imports the public members only, so nothing but the public key is ever judged. */
function importPublic(jwk: Record<string, string>): KeyObject {
  // Node's JsonWebKey type is structurally the JWK we build here.
  return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
}

/**
 * The RSA rules that need no arithmetic on the key: spellings and sizes, read from the decoded
 * lengths. They come first, so no bigint is built and nothing is imported from an oversized member
 * (reading a 64 KB exponent back from OpenSSL alone took half a second).
 */
function rsaSizes(key: JWK, lowerLimit = true): { nBytes: Buffer; eBytes: Buffer } {
  const nBytes = unsignedOctets(key, 'n');
  const eBytes = unsignedOctets(key, 'e');
  const bits = bitsOf(nBytes);
  if (lowerLimit && bits < MIN_RSA_BITS) return defect(`RSA modulus of ${bits} bits, at least ${MIN_RSA_BITS} needed`);
  if (bits > MAX_RSA_BITS) return defect(`RSA modulus of ${bits} bits, at most ${MAX_RSA_BITS} supported`);
  if (bitsOf(eBytes) > MAX_RSA_EXPONENT_BITS) return defect(`RSA public exponent is longer than ${MAX_RSA_EXPONENT_BITS} bits`);
  return { nBytes, eBytes };
}

function judgeRsa(key: JWK): void {
  const { nBytes, eBytes } = rsaSizes(key);
  const e = bigint(eBytes);
  if (e < MIN_RSA_EXPONENT) return defect(`RSA public exponent ${e} is below ${MIN_RSA_EXPONENT}`);
  if (e % 2n === 0n) return defect(`RSA public exponent ${e} is even; it must be odd`);
  const n = bigint(nBytes);
  if (n % 2n === 0n) return defect('RSA modulus is even, so it is not a product of two large primes');
  let imported: KeyObject;
  try {
    imported = importPublic({ kty: 'RSA', n: key.n as string, e: key.e as string });
  } catch {
    return defect('does not import as an RSA public key');
  }
  const details = imported.asymmetricKeyDetails ?? {};
  if (details.modulusLength !== bitsOf(nBytes) || details.publicExponent !== e) return defect('does not import as the RSA public key it describes');
  const modulus = modulusDefect(n);
  if (modulus !== undefined) return defect(modulus);
}

function ecSizes(key: JWK): void {
  const crv = key.crv;
  const size = typeof crv === 'string' ? EC_COORDINATE_BYTES[crv] : undefined;
  if (size === undefined) return defect(`curve ${JSON.stringify(crv)} is not supported; EC keys must use P-256, P-384 or P-521`);
  for (const member of ['x', 'y']) {
    const length = octets(key, member).length;
    if (length !== size) return defect(`${member} is ${length} bytes, but ${withArticle(String(crv))} coordinate is exactly ${size}`);
  }
}

function judgeEc(key: JWK): void {
  const crv = key.crv;
  ecSizes(key);
  try {
    importPublic({ kty: 'EC', crv: String(crv), x: key.x as string, y: key.y as string });
  } catch {
    return defect(`its point (x, y) is not on the ${String(crv)} curve`);
  }
}

function okpSizes(key: JWK): void {
  const crv = key.crv;
  const size = typeof crv === 'string' ? OKP_X_BYTES[crv] : undefined;
  if (size === undefined) return defect(`curve ${JSON.stringify(crv)} is not supported; OKP keys must use X25519, X448, Ed25519 or Ed448`);
  const length = octets(key, 'x').length;
  if (length !== size) return defect(`x is ${length} bytes, but ${withArticle(String(crv))} public key is exactly ${size}`);
}

function judgeOkp(key: JWK): void {
  const crv = key.crv;
  okpSizes(key);
  let imported: KeyObject;
  try {
    imported = importPublic({ kty: 'OKP', crv: String(crv), x: key.x as string });
  } catch {
    return defect(`does not import as ${withArticle(String(crv))} public key`);
  }
  if (crv === 'X25519' || crv === 'X448') {
    // A low-order point makes every shared secret all zeros, readable by anyone; OpenSSL refuses to derive one.
    const { privateKey } = crv === 'X25519' ? generateKeyPairSync('x25519') : generateKeyPairSync('x448');
    try {
      diffieHellman({ privateKey, publicKey: imported });
    } catch {
      return defect(`x is a low-order ${crv} point (every shared secret would be zero)`);
    }
  }
}

/**
 * Judges one client key as the key it is, independent of any algorithm (CONTRACT C6 item 6): it
 * must be a public RSA, EC or OKP key without private or symmetric members; its `use`, `key_ops`
 * and `alg` must not contradict each other or its type, and an encryption key's `key_ops` and
 * `ext` must be ones jose (the provider's JOSE library) can encrypt with; and it must import
 * (node:crypto) as the public key it describes. RSA: `n` and `e` in the fewest octets, a modulus
 * of 2048–4096 bits that is odd, has no prime factor below 2^18, is no perfect power and no
 * (probable) prime (NIST SP 800-89 partial validation, {@link modulusDefect}); a public exponent
 * that is odd, ≥ 65537 and at most 64 bits. EC on P-256/384/521 with full-length coordinates of a
 * point on the curve; OKP on X25519/X448/Ed25519/Ed448 with a full-length `x`, and for X25519/X448
 * not a low-order point. Base64url members must be spelled canonically.
 *
 * Every length is checked before anything is imported or computed, so the cost of a judgement is
 * bounded by the largest key accepted (about 25 ms for a 4096-bit modulus, 3 ms for 2048 bits),
 * whatever the member lengths. Pure and synchronous; safe to call on keys fetched at any time
 * (registration or a later `jwks_uri` refresh).
 *
 * @param key - a JWK as the client published it (not trusted to be well-formed)
 * @returns a human-readable reason the key is refused, to follow the key's label
 *   (`key #2 ("enc-1"): <reason>`), or `undefined` when the key is fine
 */
export function keyDefect(key: JWK): string | undefined {
  if (!key || typeof key !== 'object' || Array.isArray(key) || typeof key.kty !== 'string') return 'not a JWK (needs a "kty")';
  if (key.kty === 'oct') return 'a symmetric key; only public RSA, EC and OKP keys are accepted';
  const secret = PRIVATE_MEMBERS.filter((m) => m in key);
  if (secret.length > 0) return `contains private key material (${secret.join(', ')}); register public keys only`;
  if (!['RSA', 'EC', 'OKP'].includes(key.kty)) return `kty ${JSON.stringify(key.kty)} is not supported; only public RSA, EC and OKP keys are accepted`;
  const usage = usageDefect(key);
  if (usage !== undefined) return usage;
  try {
    if (key.kty === 'RSA') judgeRsa(key);
    else if (key.kty === 'EC') judgeEc(key);
    else judgeOkp(key);
  } catch (err) {
    if (err instanceof Defect) return err.message;
    throw err;
  }
  return undefined;
}

/**
 * Why using `key` could cost more than a key the rules accept, or `undefined`: only the upper
 * limits of {@link keyDefect} that are read from lengths (RSA: spellings, a modulus of at most 4096
 * bits and an exponent of at most 64; EC and OKP: a supported curve and full-length coordinates).
 * Nothing is imported or computed. For keys the provider merely verifies a certificate with.
 *
 * @param key - a JWK (not trusted to be well-formed)
 */
export function keySizeDefect(key: JWK): string | undefined {
  try {
    if (key.kty === 'RSA') rsaSizes(key, false);
    else if (key.kty === 'EC') ecSizes(key);
    else if (key.kty === 'OKP') okpSizes(key);
    else return `kty ${JSON.stringify(key.kty)} is not supported; only RSA, EC and OKP keys are accepted`;
  } catch (err) {
    if (err instanceof Defect) return err.message;
    throw err;
  }
  return undefined;
}

import { createPublicKey, diffieHellman, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';

import type { JWK } from 'jose';

import { modulusDefect, valueOf } from './rsa-modulus.js';
import { clip } from '../lib/terminal-text.js';

// Every rule a JWK is judged by (C6): client keys, the provider's own keys and certificate issuer keys.

/** JWK members that only a private or symmetric key has (RFC 7518 section 6). */
export const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k', 'priv'] as const;

/** Smallest accepted RSA modulus, in bits. */
export const MIN_RSA_BITS = 2048;
/**
 * Largest accepted RSA modulus, in bits: the probable-prime test grows with the cube of the size
 * (about 2 ms at 2048 bits, 25 ms at 4096, 850 ms at 16384; OpenSSL, one core).
 */
const MAX_RSA_BITS = 4096;
/** Smallest accepted RSA public exponent (NIST SP 800-56B: 65537 ≤ e, e odd). */
const MIN_RSA_EXPONENT = 65537n;
/** Longest accepted RSA public exponent, in bits (OpenSSL refuses a longer one above 3072-bit moduli). */
const MAX_RSA_EXPONENT_BITS = 64;

/** The NIST curves accepted for EC keys, client's and provider's alike. */
export const EC_CURVES = ['P-256', 'P-384', 'P-521'] as const;
/** The one JWS algorithm of each EC curve (RFC 7518 section 3.4). */
export const EC_SIGNING_ALG: Readonly<Record<string, string>> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' };
/** By key type: curve → exact length in bytes of each point member (RFC 7518 section 6.2.1.2, RFC 8037 section 2). */
const POINT_SIZES: Record<'EC' | 'OKP', { bytes: Record<string, number>; members: string[]; what: string }> = {
  EC: { bytes: { 'P-256': 32, 'P-384': 48, 'P-521': 66 }, members: ['x', 'y'], what: 'coordinate' },
  OKP: { bytes: { X25519: 32, X448: 56, Ed25519: 32, Ed448: 57 }, members: ['x'], what: 'public key' },
};

/** `table[name]` when `name` is one of its own keys: a client's `crv` or `alg` may be "constructor" or "__proto__". */
const own = <T>(table: Readonly<Record<string, T>>, name: unknown): T | undefined => (typeof name === 'string' && Object.hasOwn(table, name) ? table[name] : undefined);

/** "a, b or c". */
const orList = (values: readonly string[]): string => values.join(', ').replace(/, ([^,]*)$/, ' or $1');

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

/** The members RFC 7518 spells as integers, by key type (section 6.3 for RSA, 6.2 for EC). */
const INTEGER_MEMBERS: Record<string, readonly string[]> = { RSA: ['n', 'e', 'd', 'p', 'q', 'dp', 'dq', 'qi'], EC: ['x', 'y', 'd'] };

/**
 * `key` with its integer members in the one spelling RFC 7518 gives them, which {@link keyDefect} demands of a client's
 * key: base64url without padding, an RSA member in the fewest octets (Base64urlUInt, section 2), an EC member at its curve's
 * size (section 6.2). The same key as another tool writes it (a Java BigInteger's sign byte before `n`, base64 with `+`,
 * `/` and `=`, a coordinate that lost its leading zero byte); an EC member too long for its curve is left as written, for
 * the key checks to refuse. A new object, or why a member is no base64 text at all (OpenSSL would skip what is not).
 */
export function canonicalJwk(key: JWK): JWK | string {
  const size = key.kty === 'EC' ? own(POINT_SIZES.EC.bytes, key.crv) : undefined;
  const spelled: Record<string, unknown> = { ...key };
  for (const member of own(INTEGER_MEMBERS, key.kty) ?? []) {
    const value = spelled[member];
    if (typeof value !== 'string') continue;
    if (!/^[\w+/-]+={0,2}$/.test(value)) return `has ${member} that is not base64url text`;
    const bytes = Buffer.from(value, 'base64');
    const first = bytes.findIndex((byte) => byte !== 0);
    const fewest = bytes.subarray(first === -1 ? Math.max(bytes.length - 1, 0) : first);
    if (size === undefined) spelled[member] = fewest.toString('base64url');
    else if (fewest.length <= size) spelled[member] = Buffer.concat([Buffer.alloc(size - fewest.length), fewest]).toString('base64url');
  }
  return spelled;
}

/** Bits of the unsigned integer in minimal big-endian `bytes`, read without building a bigint. */
const bitsOf = (bytes: Buffer): number => (bytes.length === 0 || bytes[0] === 0 ? 0 : (bytes.length - 1) * 8 + 32 - Math.clz32(bytes[0] as number));

/** Imports the public members only (so nothing but the public key is ever judged), or fails with `reason`. */
function importPublic(jwk: Record<string, string>, reason: string): KeyObject {
  try {
    return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    return defect(reason);
  }
}

/**
 * The RSA rules read from lengths alone. They come first, so nothing is built or imported from an
 * oversized member (reading a 64 KB exponent back from OpenSSL alone took half a second).
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

/**
 * Why an RSA public exponent is refused (NIST SP 800-56B: odd, at least 65537), or `undefined`. One rule
 * for client keys and the provider's own: with e = 1 a signature is the padded message itself, so anyone
 * could sign; with e = 3 lax verifiers accept forged signatures.
 */
export function rsaExponentDefect(e: bigint): string | undefined {
  if (e < MIN_RSA_EXPONENT) return `RSA public exponent ${e} is below ${MIN_RSA_EXPONENT}`;
  if (e % 2n === 0n) return `RSA public exponent ${e} is even; it must be odd`;
  return undefined;
}

function judgeRsa(key: JWK): void {
  const { nBytes, eBytes } = rsaSizes(key);
  const e = valueOf(eBytes);
  const exponent = rsaExponentDefect(e);
  if (exponent !== undefined) return defect(exponent);
  const n = valueOf(nBytes);
  if (n % 2n === 0n) return defect('RSA modulus is even, so it is not a product of two large primes');
  const imported = importPublic({ kty: 'RSA', n: key.n as string, e: key.e as string }, 'does not import as an RSA public key');
  const details = imported.asymmetricKeyDetails ?? {};
  if (details.modulusLength !== bitsOf(nBytes) || details.publicExponent !== e) return defect('does not import as the RSA public key it describes');
  const modulus = modulusDefect(n);
  if (modulus !== undefined) return defect(modulus);
}

/** The EC and OKP rules read from lengths alone: a supported curve and full-length point members. */
function pointSizes(key: JWK): void {
  const { bytes, members, what } = POINT_SIZES[key.kty as 'EC' | 'OKP'];
  const crv = key.crv;
  const size = own(bytes, crv);
  if (size === undefined) return defect(`curve ${JSON.stringify(crv)} is not supported; ${key.kty} keys must use ${orList(Object.keys(bytes))}`);
  for (const member of members) {
    const length = octets(key, member).length;
    if (length !== size) return defect(`${member} is ${length} bytes, but ${withArticle(String(crv))} ${what} is exactly ${size}`);
  }
}

function judgeEc(key: JWK): void {
  pointSizes(key);
  importPublic({ kty: 'EC', crv: String(key.crv), x: key.x as string, y: key.y as string }, `its point (x, y) is not on the ${String(key.crv)} curve`);
}

function judgeOkp(key: JWK): void {
  const crv = key.crv;
  pointSizes(key);
  const imported = importPublic({ kty: 'OKP', crv: String(crv), x: key.x as string }, `does not import as ${withArticle(String(crv))} public key`);
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

/** The defect `judge` throws, or `undefined`. */
function caught(judge: () => void): string | undefined {
  try {
    judge();
  } catch (err) {
    if (err instanceof Defect) return err.message;
    throw err;
  }
  return undefined;
}

/**
 * Judges one client key as the key it is, independent of any algorithm (C6 item 6): a public RSA,
 * EC or OKP key without private members, a `kid` (if any) a non-empty string and an `x5c` (if any) a list of non-empty
 * strings, no member named `constructor`, `__proto__` or `prototype` ({@link memberNameDefect}), whose labels agree ({@link usageDefect}), spelled in
 * canonical base64url, that imports as the public key it describes. RSA: `n` and `e` in the fewest
 * octets, a 2048–4096-bit modulus that passes NIST SP 800-89 partial validation
 * ({@link modulusDefect}), an odd exponent from 65537 to 64 bits. EC on P-256/384/521 and OKP on
 * X25519/X448/Ed25519/Ed448 with full-length coordinates on the curve; X25519/X448 not low-order.
 *
 * Lengths are checked before anything is imported or computed, so a judgement costs at most what
 * the largest accepted key costs (about 25 ms at 4096 bits). Pure and synchronous.
 *
 * @param key - a JWK as the client published it (not trusted to be well-formed)
 * @returns why the key is refused, to follow its label (`key #2 ("enc-1"): <reason>`), or `undefined`
 */
export function keyDefect(key: JWK): string | undefined {
  if (!key || typeof key !== 'object' || Array.isArray(key) || typeof key.kty !== 'string') return 'not a JWK (needs a "kty")';
  if (key.kty === 'oct') return 'a symmetric key; only public RSA, EC and OKP keys are accepted';
  const secret = PRIVATE_MEMBERS.filter((m) => m in key);
  if (secret.length > 0) return `contains private key material (${secret.join(', ')}); register public keys only`;
  if (!['RSA', 'EC', 'OKP'].includes(key.kty)) return `kty ${JSON.stringify(key.kty)} is not supported; only public RSA, EC and OKP keys are accepted`;
  // oidc-provider refuses a whole set for one such member: refused here, the key is left out alone.
  const { kid, x5c } = key as { kid?: unknown; x5c?: unknown };
  if (kid !== undefined && (typeof kid !== 'string' || kid === '')) return 'kid must be a non-empty string';
  if (x5c !== undefined && !(Array.isArray(x5c) && x5c.every((c) => typeof c === 'string' && c !== ''))) return 'x5c must be an array of non-empty strings (base64 DER certificates)';
  const named = memberNameDefect(key);
  if (named !== undefined) return named;
  return usageDefect(key) ?? caught(() => (key.kty === 'RSA' ? judgeRsa(key) : key.kty === 'EC' ? judgeEc(key) : judgeOkp(key)));
}

/**
 * Why `key` carries a member of an object's machinery rather than a JWK parameter, or `undefined`: oidc-provider takes a
 * key as an object only if its `constructor` is `Object`, and a copy of the key by assignment makes a `__proto__` member
 * its prototype, lending it the members that one holds (a private `d`). For client keys and the provider's own.
 */
export function memberNameDefect(key: object): string | undefined {
  const name = ['constructor', '__proto__', 'prototype'].find((member) => Object.hasOwn(key, member));
  return name === undefined ? undefined : `a member named "${name}" is not allowed (it is no JWK parameter)`;
}

/**
 * Why using `key` could cost more than a key the rules accept, or `undefined`: the upper limits of
 * {@link keyDefect} read from lengths, nothing imported or computed. For certificate issuer keys.
 *
 * @param key - a JWK (not trusted to be well-formed)
 */
export function keySizeDefect(key: JWK): string | undefined {
  if (key.kty === 'RSA') return caught(() => rsaSizes(key, false));
  if (key.kty === 'EC' || key.kty === 'OKP') return caught(() => pointSizes(key));
  return `kty ${JSON.stringify(key.kty)} is not supported; only RSA, EC and OKP keys are accepted`;
}

/** RFC 7517 section 4.3 operations that belong to signatures. */
const SIGNATURE_OPS: readonly string[] = ['sign', 'verify'];
/** RFC 7517 section 4.3 operations that belong to encryption and key agreement. */
const ENCRYPTION_OPS: readonly string[] = ['encrypt', 'decrypt', 'wrapKey', 'unwrapKey', 'deriveKey', 'deriveBits'];
const KNOWN_OPS = [...SIGNATURE_OPS, ...ENCRYPTION_OPS];

/** The `key_ops` values that mark a public key for encryption (C6.2); ECDH keys also derive. */
const encryptionLabels = (key: JWK): readonly string[] => (key.kty === 'RSA' ? ['encrypt', 'wrapKey'] : ['encrypt', 'wrapKey', 'deriveKey', 'deriveBits']);

/**
 * An encryption key (already past {@link usageDefect}) as the provider stores and uses it: RSA with
 * `key_ops` gets `["encrypt", "wrapKey"]`, EC and OKP lose `key_ops` and get `use: "enc"`; other
 * keys come back as they are. oidc-provider picks an RSA key only when its `key_ops` contain
 * `encrypt`, while jose (WebCrypto) imports an RSA public key only for both operations together and
 * refuses an ECDH public key with any `key_ops`. A new object; `key` is not changed.
 */
export function normaliseKeyLabels(key: JWK): JWK {
  if (!isEncryptionKey(key)) return key;
  const ops = Array.isArray(key.key_ops) ? key.key_ops : undefined;
  const { key_ops: _ops, ...rest } = key;
  if (key.kty === 'RSA') return ops === undefined ? { ...key } : { ...rest, key_ops: ['encrypt', 'wrapKey'] };
  return { ...rest, use: 'enc' };
}

/** Registered asymmetric JWS algorithms (RFC 7518, RFC 8037, RFC 9864) by key type / curve. */
const SIGNATURE_ALGS: Record<string, readonly string[]> = {
  RSA: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
  ...Object.fromEntries(Object.entries(EC_SIGNING_ALG).map(([crv, alg]) => [crv, [alg]])),
  Ed25519: ['EdDSA', 'Ed25519'],
  Ed448: ['EdDSA', 'Ed448'],
};
const ECDH = ['ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'];
/** Registered asymmetric JWE key-management algorithms by key type / curve. */
const ENCRYPTION_ALGS: Record<string, readonly string[]> = {
  RSA: ['RSA-OAEP', 'RSA-OAEP-256', 'RSA-OAEP-384', 'RSA-OAEP-512', 'RSA1_5'],
  ...Object.fromEntries([...EC_CURVES, 'X25519', 'X448'].map((crv) => [crv, ECDH])),
};

/** "an RSA", "an X25519", "a P-256": the article English wants before a key family. */
const withArticle = (family: string): string => `${family.startsWith('P-') ? 'a' : 'an'} ${family}`;

const quoted = (values: readonly string[]): string => values.map((v) => `"${v}"`).join(', ');

/**
 * Why the key's `use`, `key_ops`, `ext` and `alg` contradict each other or the key's type, or
 * `undefined`: distinct RFC 7517 `key_ops` all of one purpose, agreeing with `use`; an algorithm
 * registered for the key's type and curve; Ed25519/Ed448 only sign, X25519/X448 only encrypt; an
 * encryption key's `key_ops` hold one of its {@link encryptionLabels} (EC and OKP: or none).
 */
function usageDefect(key: JWK): string | undefined {
  const { use, key_ops: ops, alg } = key as { use?: unknown; key_ops?: unknown; alg?: unknown };
  if (use !== undefined && use !== 'sig' && use !== 'enc') return `use ${JSON.stringify(use)} is neither "sig" nor "enc"`;
  let purpose = use;
  if (ops !== undefined) {
    if (!Array.isArray(ops) || !ops.every((op): op is string => typeof op === 'string')) return 'key_ops must be an array of strings';
    const unknown = ops.find((op) => !KNOWN_OPS.includes(op));
    if (unknown !== undefined) return `key_ops value ${JSON.stringify(unknown)} is not an RFC 7517 operation (${KNOWN_OPS.join(', ')})`;
    const twice = ops.find((op, i) => ops.indexOf(op) !== i);
    if (twice !== undefined) return `key_ops lists "${twice}" more than once`;
    const sig = ops.filter((op) => SIGNATURE_OPS.includes(op));
    const enc = ops.filter((op) => ENCRYPTION_OPS.includes(op));
    if (sig.length > 0 && enc.length > 0) return `key_ops mixes signature operations (${quoted(sig)}) with encryption operations (${quoted(enc)})`;
    if (use === 'sig' && enc.length > 0) return `use "sig" contradicts key_ops ${quoted(enc)}`;
    if (use === 'enc' && sig.length > 0) return `use "enc" contradicts key_ops ${quoted(sig)}`;
    if (sig.length > 0) purpose ??= 'sig';
    else if (enc.length > 0) purpose ??= 'enc';
  }
  const ext = (key as { ext?: unknown }).ext;
  if (ext !== undefined && typeof ext !== 'boolean') return 'ext must be true or false';
  // What the key can do at all, from its type and curve.
  const family = key.kty === 'RSA' ? 'RSA' : String(key.crv);
  const [canSign, canEncrypt] = [own(SIGNATURE_ALGS, family) !== undefined, own(ENCRYPTION_ALGS, family) !== undefined];
  if (purpose === 'enc' && !canEncrypt && canSign) return `${withArticle(family)} key can only sign, but it is marked for encryption`;
  if (purpose === 'sig' && !canSign && canEncrypt) return `${withArticle(family)} key cannot sign, but it is marked for signatures`;
  if (purpose === 'enc' && Array.isArray(ops) && (key.kty === 'RSA' || ops.length > 0)) {
    const labels = encryptionLabels(key);
    if (!ops.some((op) => labels.includes(op))) {
      return `key_ops ${JSON.stringify(ops)}: ${key.kty === 'RSA' ? 'an RSA' : 'an ECDH'} public encryption key needs key_ops containing ${orList(labels.map((l) => `"${l}"`))} (or none, with use "enc")`;
    }
  }
  if (alg === undefined) return undefined;
  if (typeof alg !== 'string') return 'alg must be a string';
  const sigAlgs = own(SIGNATURE_ALGS, family) ?? [];
  const encAlgs = own(ENCRYPTION_ALGS, family) ?? [];
  if (!sigAlgs.includes(alg) && !encAlgs.includes(alg)) {
    if (!canSign && !canEncrypt) return undefined;
    return `alg ${JSON.stringify(alg)} is not an algorithm for ${withArticle(family)} key (${[...sigAlgs, ...encAlgs].join(', ')})`;
  }
  if (purpose === 'enc' && sigAlgs.includes(alg)) return `alg "${alg}" is a signature algorithm, but the key is marked for encryption`;
  if (purpose === 'sig' && encAlgs.includes(alg)) return `alg "${alg}" is an encryption algorithm, but the key is marked for signatures`;
  return undefined;
}

/** Most keys a client's JWK Set may hold: judging imports each, so a big document cannot buy seconds of CPU. */
const MAX_KEYS = 32;

/** What the RSA keys of one set may weigh together ({@link rsaWeight}): about 100 ms of judging (`test/bench/key-judgement.ts`). */
const RSA_WEIGHT_BUDGET = 40;

/**
 * What judging an RSA key costs in 2048-bit keys, from the length of `n` alone: up to 2048 bits 1,
 * 3072 bits 3, 4096 bits 10 (the cube of the size). A longer `n` weighs nothing: its length refuses it.
 */
function rsaWeight(key: unknown): number {
  const { kty, n } = (key ?? {}) as { kty?: unknown; n?: unknown };
  if (kty !== 'RSA' || typeof n !== 'string') return 0;
  const bytes = Math.floor((n.length * 3) / 4);
  if (bytes <= 256) return 1;
  if (bytes <= 384) return 3;
  return bytes <= 512 ? 10 : 0;
}

/**
 * Why a JWK Set is refused whole before any key is judged, or `undefined`: too many keys, or RSA
 * keys too heavy together.
 *
 * @param keys - the `keys` array of the set, as published (not trusted to be well-formed)
 */
export function keySetDefect(keys: readonly unknown[]): string | undefined {
  if (keys.length > MAX_KEYS) return `a JWK Set may hold at most ${MAX_KEYS} keys; this one holds ${keys.length}`;
  const weight = keys.reduce<number>((sum, key) => sum + rsaWeight(key), 0);
  if (weight > RSA_WEIGHT_BUDGET) {
    return `the RSA keys of a JWK Set may weigh at most ${RSA_WEIGHT_BUDGET} together (a key of up to 2048 bits weighs 1, up to 3072 bits 3, up to 4096 bits 10, as judging it costs); these weigh ${weight}`;
  }
  return undefined;
}

/** Encryption key: `use=enc` or `key_ops` containing one of its {@link encryptionLabels}. */
const isEncryptionKey = (key: JWK): boolean => key.use === 'enc' || (Array.isArray(key.key_ops) && key.key_ops.some((op) => encryptionLabels(key).includes(op)));
/** Signature key: `use=sig` or `key_ops` containing `verify`. */
const isSignatureKey = (key: JWK): boolean => key.use === 'sig' || (Array.isArray(key.key_ops) && key.key_ops.includes('verify'));

/** Bits of an RSA key's modulus value (leading zero bytes of `n` don't count); 0 without an `n`. */
export function rsaBits(key: JWK): number {
  if (typeof key.n !== 'string') return 0;
  const bytes = Buffer.from(key.n, 'base64url');
  const first = bytes.findIndex((byte) => byte !== 0);
  return first === -1 ? 0 : bitsOf(bytes.subarray(first));
}

/**
 * Would oidc-provider consider `key` when it encrypts with `alg`? Mirrors its keystore's
 * `selectForEncrypt` (9.x); every such key must fit ({@link fitReason}), or encryption may fail.
 */
function isCandidateFor(key: JWK, alg: string): boolean {
  const families = alg.startsWith('RSA') ? ['RSA'] : ['EC', 'OKP'];
  if (!families.includes(String(key.kty))) return false;
  if (key.alg !== undefined && key.alg !== alg) return false;
  if (key.use !== undefined && key.use !== 'enc') return false;
  return !(key.kty === 'RSA' && Array.isArray(key.key_ops) && !key.key_ops.includes('encrypt'));
}

/** The keys `alg` encrypts to: "RSA", or "EC P-256/384/521 or X25519". */
export const encryptionKeyFamily = (alg: string): string => (alg.startsWith('RSA-OAEP') ? 'RSA' : 'EC P-256/384/521 or X25519');

/** "EC P-256 key", "RSA key": a key's type and curve, as descriptions name them. */
const keyKind = (key: JWK): string => `${String(key.kty)}${key.crv ? ` ${String(key.crv)}` : ''} key`;

/**
 * Why the provider could not encrypt to `key` with `alg`, whatever its labels say, or `undefined`.
 * jose imports the JWK with its `key_ops` as WebCrypto usages, so RSA-OAEP needs exactly `encrypt`
 * and `wrapKey` (or none), and an ECDH-ES public key no `key_ops` at all.
 */
function fitReason(key: JWK, alg: string): string | undefined {
  if (key.alg !== undefined && key.alg !== alg) return `its alg is ${String(key.alg)}`;
  const ops = Array.isArray(key.key_ops) ? key.key_ops : undefined;
  if (alg.startsWith('RSA-OAEP')) {
    if (key.kty !== 'RSA') return `${String(key.kty)} key, but ${alg} needs ${encryptionKeyFamily(alg)}`;
    const bits = rsaBits(key);
    if (bits < MIN_RSA_BITS) return `RSA modulus of ${bits} bits, at least ${MIN_RSA_BITS} needed`;
    if (ops && !(ops.length === 2 && ops.includes('encrypt') && ops.includes('wrapKey'))) {
      return `key_ops ${JSON.stringify(ops)}, but ${alg} needs key_ops ["encrypt", "wrapKey"] or none (use "enc" instead)`;
    }
    return undefined;
  }
  if (alg.startsWith('ECDH-ES')) {
    const curveFits = (key.kty === 'EC' && (EC_CURVES as readonly unknown[]).includes(key.crv)) || (key.kty === 'OKP' && key.crv === 'X25519');
    if (!curveFits) return `${keyKind(key)}, but ${alg} needs ${encryptionKeyFamily(alg)}`;
    if (ops) return `key_ops ${JSON.stringify(ops)}, but an ${alg} public key must carry no key_ops (use "enc" instead)`;
    return undefined;
  }
  return `${alg} is not supported`;
}

/** Why `key` cannot serve `alg` as an encryption key, or `undefined` when it can. */
export function unfitReason(key: JWK, alg: string): string | undefined {
  if (!isEncryptionKey(key)) return 'not an encryption key (needs use=enc or key_ops containing encrypt)';
  return fitReason(key, alg);
}

/** The key a JWS algorithm this provider verifies needs: its type and, for EC, its curve. */
const SIGNATURE_KEYS: Record<string, { kty: string; crv?: string }> = {
  RS256: { kty: 'RSA' },
  PS256: { kty: 'RSA' },
  ES256: { kty: 'EC', crv: 'P-256' },
};

/**
 * Why the provider could not verify `alg` signatures with `key`, or `undefined`: the type and size
 * {@link SIGNATURE_KEYS} names, its own `alg` equal, `key_ops` (which oidc-provider selects by)
 * holding `verify`. EdDSA is not offered: Ed25519 keys are not judged for small-order points.
 */
function signatureFitReason(key: JWK, alg: string): string | undefined {
  const needed = own(SIGNATURE_KEYS, alg);
  if (!needed) return `${alg} is not supported`;
  if (key.alg !== undefined && key.alg !== alg) return `its alg is ${String(key.alg)}`;
  if (key.kty !== needed.kty || (needed.crv !== undefined && key.crv !== needed.crv)) {
    return `${keyKind(key)}, but ${alg} needs ${needed.kty}${needed.crv ? ` ${needed.crv}` : ''}`;
  }
  if (key.kty === 'RSA' && rsaBits(key) < MIN_RSA_BITS) return `RSA modulus of ${rsaBits(key)} bits, at least ${MIN_RSA_BITS} needed`;
  if (Array.isArray(key.key_ops) && !key.key_ops.includes('verify')) return `key_ops ${JSON.stringify(key.key_ops)} lack "verify"`;
  return undefined;
}

/** Why `key` cannot verify signatures made with any of `algs`, or `undefined` when it can verify one. */
export function unfitSignatureReason(key: JWK, algs: readonly string[]): string | undefined {
  if (!isSignatureKey(key)) return 'not a signature key (needs use=sig or key_ops containing verify)';
  const reasons = algs.map((alg) => signatureFitReason(key, alg));
  if (reasons.some((r) => r === undefined)) return undefined;
  return algs.length === 1 ? reasons[0] : algs.map((alg, i) => `${alg}: ${String(reasons[i])}`).join(', ');
}

/** The encryption a client registered, as `[metadata field, alg]` pairs. */
export type RequestedEncryption = readonly (readonly [field: string, alg: string])[];

/**
 * C6 rule 7 for one key: why the provider may pick `key` for a `requested` algorithm
 * ({@link isCandidateFor}) and then fail to encrypt to it ({@link fitReason}), or `undefined`.
 */
export function candidateDefect(key: JWK, requested: RequestedEncryption): string | undefined {
  for (const [field, alg] of requested) {
    if (!isCandidateFor(key, alg)) continue;
    const why = fitReason(key, alg);
    if (why !== undefined) return `the provider may pick it for ${field} ${alg} (its use, key_ops and alg allow that), and it would fail: ${why}`;
  }
  return undefined;
}

/** "key #2 ("enc-1")": how descriptions name a key (a `kid` is cut at 40 characters). */
export function keyLabel(key: unknown, index: number): string {
  const kid = (key as { kid?: unknown } | null)?.kid;
  return `key #${index + 1}${typeof kid === 'string' ? ` (${JSON.stringify(clip(kid, 40))})` : ''}`;
}

/** A key with neither `use` nor `key_ops`: left out when the client asks for encryption (C6 item 2). */
export const isUnlabelled = (key: JWK): boolean => key.use === undefined && key.key_ops === undefined;

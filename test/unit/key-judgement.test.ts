import { checkPrimeSync, createPrivateKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { CompactEncrypt, compactDecrypt, type JWK } from 'jose';

import { judgeClientKeySet } from '../../policies/client-key-set.js';
import { keyDefect, normaliseKeyLabels, unfitReason } from '../../policies/jwk-rules.js';
import { b64uint, flipBit, keyMaterial, padModulus, uint, type KeyMaterial, type Pair } from '../helpers/hostile-keys.js';
import { RFC7517_PUBLIC_KEYS } from '../helpers/rfc7517-keys.js';

let m: KeyMaterial;
/** A 4096-bit pair: above 3072 bits OpenSSL refuses exponents over 64 bits (issue 14 F3). */
let big: { rsa4096: Pair };
beforeAll(() => {
  m = keyMaterial();
  const pair = generateKeyPairSync('rsa', { modulusLength: 4096 });
  big = { rsa4096: { privateKey: pair.privateKey, jwk: { ...(pair.publicKey.export({ format: 'jwk' }) as JWK), use: 'enc', kid: 'good-4096' } } };
});

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The same octets' spelling with a non-zero unused low bit in the last character (a second spelling). */
const strayBits = (b64: string): string => `${b64.slice(0, -1)}${ALPHABET[ALPHABET.indexOf(b64.slice(-1)) | 1] ?? ''}`;

/** An odd number of `bits + 1` bits with no prime factor below 2000. */
function cofactorWithoutSmallPrimes(bits: bigint): bigint {
  const small = Array.from({ length: 1998 }, (_v, i) => BigInt(i + 2)).filter((n, _i, all) => all.every((d) => d >= n || n % d !== 0n));
  for (let k = (1n << bits) + 1n; ; k += 2n) if (small.every((p) => k % p !== 0n)) return k;
}

const judge = (key: unknown): string | undefined => keyDefect(key as JWK);
const bits = (value: bigint): number => (value === 0n ? 0 : value.toString(2).length);

describe('keyDefect: every reason', () => {
  const rsa = (change: Record<string, unknown>): Record<string, unknown> => ({ ...m.rsa.jwk, ...change });
  const table: [string, () => unknown, string | undefined][] = [
    ['a good RSA encryption key', () => m.rsa.jwk, undefined],
    ['a good RSA signature key', () => m.rsaSig.jwk, undefined],
    ['a good 2048-bit modulus with one leading zero byte (RFC 7518: the fewest octets)', () => padModulus(m.rsa.jwk, 1), 'n carries 1 leading zero byte; RFC 7518 requires the fewest octets'],
    ['good EC keys', () => m.ec['P-521'].jwk, undefined],
    ['a good X25519 key', () => m.x25519.jwk, undefined],
    ['a good Ed25519 key', () => m.ed25519.jwk, undefined],
    ['a key with neither use nor key_ops', () => rsa({ use: undefined }), undefined],
    ['null', () => null, 'not a JWK (needs a "kty")'],
    ['an array', () => [], 'not a JWK (needs a "kty")'],
    ['a numeric kty', () => ({ kty: 1 }), 'not a JWK (needs a "kty")'],
    ['an oct key', () => ({ kty: 'oct', k: 'AAAA' }), 'a symmetric key; only public RSA, EC and OKP keys are accepted'],
    ['private members', () => rsa({ d: 'AA', p: 'AA' }), 'contains private key material (d, p); register public keys only'],
    ['kty AKP', () => ({ kty: 'AKP', pub: 'AAAA' }), 'kty "AKP" is not supported; only public RSA, EC and OKP keys are accepted'],
    ['use "Enc"', () => rsa({ use: 'Enc' }), 'use "Enc" is neither "sig" nor "enc"'],
    ['key_ops a string', () => rsa({ key_ops: 'encrypt' }), 'key_ops must be an array of strings'],
    ['key_ops with a number', () => rsa({ key_ops: [1] }), 'key_ops must be an array of strings'],
    ['key_ops empty on an EC encryption key (how WebCrypto exports ECDH public keys)', () => ({ ...m.ec['P-256'].jwk, key_ops: [], ext: true }), undefined],
    ['key_ops empty on an RSA encryption key', () => rsa({ key_ops: [] }), 'key_ops []: an RSA public encryption key needs key_ops containing "encrypt" or "wrapKey" (or none, with use "enc")'],
    ['key_ops encrypt only on an RSA key (the seed spec\'s label; stored normalised)', () => rsa({ use: undefined, key_ops: ['encrypt'] }), undefined],
    ['key_ops wrapKey only on an RSA key', () => rsa({ use: undefined, key_ops: ['wrapKey'] }), undefined],
    ['key_ops deriveKey only on an RSA key', () => rsa({ use: undefined, key_ops: ['deriveKey'] }), 'key_ops ["deriveKey"]: an RSA public encryption key needs key_ops containing "encrypt" or "wrapKey" (or none, with use "enc")'],
    ['key_ops wrapKey, encrypt on an RSA key', () => rsa({ key_ops: ['wrapKey', 'encrypt'] }), undefined],
    ['key_ops deriveKey on an EC encryption key (stored as use "enc")', () => ({ ...m.ec['P-384'].jwk, key_ops: ['deriveKey'] }), undefined],
    ['key_ops encrypt on an EC key without use', () => ({ ...m.ec['P-256'].jwk, use: undefined, key_ops: ['encrypt'] }), undefined],
    ['key_ops decrypt only on an EC key (an operation of the private half)', () => ({ ...m.ec['P-256'].jwk, use: undefined, key_ops: ['decrypt'] }), 'key_ops ["decrypt"]: an ECDH public encryption key needs key_ops containing "encrypt", "wrapKey", "deriveKey" or "deriveBits" (or none, with use "enc")'],
    ['key_ops verify on an EC key without use (a signature key)', () => ({ ...m.ec['P-384'].jwk, use: undefined, key_ops: ['verify'] }), undefined],
    ['ext "true"', () => rsa({ ext: 'true' }), 'ext must be true or false'],
    // oidc-provider refuses a whole set (every key in it) for one key with such a kid or x5c: refused here, it is left out alone.
    ['kid a number', () => rsa({ kid: 7 }), 'kid must be a non-empty string'],
    ['kid empty', () => rsa({ kid: '' }), 'kid must be a non-empty string'],
    ['no kid (the spec\'s keys carry none)', () => rsa({ kid: undefined }), undefined],
    ['x5c a string', () => rsa({ x5c: 'MIIB' }), 'x5c must be an array of non-empty strings (base64 DER certificates)'],
    ['x5c holding an empty string', () => rsa({ x5c: [''] }), 'x5c must be an array of non-empty strings (base64 DER certificates)'],
    // oidc-provider takes a key as an object only if its constructor is Object: a member named "constructor" refuses the whole set.
    ['a member named "constructor"', () => rsa(JSON.parse('{"constructor":"x"}') as Record<string, unknown>), 'a member named "constructor" is not allowed (it is no JWK parameter)'],
    // A copy of the key by assignment would make a "__proto__" member its prototype, lending it the members it holds (a private d).
    ['a member named "__proto__" holding a private d', () => rsa(JSON.parse('{"__proto__":{"d":"AAAA"}}') as Record<string, unknown>), 'a member named "__proto__" is not allowed (it is no JWK parameter)'],
    ['a member named "__proto__" holding use "enc"', () => rsa({ use: undefined, ...(JSON.parse('{"__proto__":{"use":"enc"}}') as Record<string, unknown>) }), 'a member named "__proto__" is not allowed (it is no JWK parameter)'],
    ['a member named "prototype"', () => rsa(JSON.parse('{"prototype":{}}') as Record<string, unknown>), 'a member named "prototype" is not allowed (it is no JWK parameter)'],
    ['kid with unusual but legal characters', () => rsa({ kid: 'enc 2024/06 #1 (ключ) "q" \\ constructor __proto__' }), undefined],
    ['x5c empty', () => rsa({ x5c: [] }), undefined],
    ['key_ops unknown', () => rsa({ key_ops: ['Encrypt'] }), 'key_ops value "Encrypt" is not an RFC 7517 operation (sign, verify, encrypt, decrypt, wrapKey, unwrapKey, deriveKey, deriveBits)'],
    ['key_ops twice', () => rsa({ key_ops: ['wrapKey', 'encrypt', 'wrapKey'] }), 'key_ops lists "wrapKey" more than once'],
    ['key_ops mixed', () => rsa({ use: undefined, key_ops: ['sign', 'verify', 'deriveBits'] }), 'key_ops mixes signature operations ("sign", "verify") with encryption operations ("deriveBits")'],
    ['use sig, key_ops deriveKey', () => rsa({ use: 'sig', key_ops: ['deriveKey'] }), 'use "sig" contradicts key_ops "deriveKey"'],
    ['use enc, key_ops sign', () => rsa({ key_ops: ['sign'] }), 'use "enc" contradicts key_ops "sign"'],
    ['Ed25519 with key_ops encrypt', () => ({ ...m.ed25519.jwk, use: undefined, key_ops: ['encrypt'] }), 'an Ed25519 key can only sign, but it is marked for encryption'],
    ['X25519 with key_ops verify', () => ({ ...m.x25519.jwk, use: undefined, key_ops: ['verify'] }), 'an X25519 key cannot sign, but it is marked for signatures'],
    ['alg a number', () => rsa({ alg: 256 }), 'alg must be a string'],
    ['alg none', () => rsa({ alg: 'none' }), 'alg "none" is not an algorithm for an RSA key (RS256, RS384, RS512, PS256, PS384, PS512, RSA-OAEP, RSA-OAEP-256, RSA-OAEP-384, RSA-OAEP-512, RSA1_5)'],
    ['alg dir on EC', () => ({ ...m.ec['P-256'].jwk, alg: 'dir' }), 'alg "dir" is not an algorithm for a P-256 key (ES256, ECDH-ES, ECDH-ES+A128KW, ECDH-ES+A192KW, ECDH-ES+A256KW)'],
    ['alg ES384 on P-256', () => ({ ...m.ec['P-256'].jwk, use: 'sig', alg: 'ES384' }), 'alg "ES384" is not an algorithm for a P-256 key (ES256, ECDH-ES, ECDH-ES+A128KW, ECDH-ES+A192KW, ECDH-ES+A256KW)'],
    ['alg RSA-OAEP on a signature key', () => ({ ...m.rsaSig.jwk, alg: 'RSA-OAEP' }), 'alg "RSA-OAEP" is an encryption algorithm, but the key is marked for signatures'],
    ['alg PS256 on an encryption key', () => rsa({ alg: 'PS256' }), 'alg "PS256" is a signature algorithm, but the key is marked for encryption'],
    ['alg RSA-OAEP-256 on an encryption key', () => rsa({ alg: 'RSA-OAEP-256' }), undefined],
    ['RSA without n', () => rsa({ n: undefined }), 'n must be a non-empty base64url string'],
    ['RSA with e ""', () => rsa({ e: '' }), 'e must be a non-empty base64url string'],
    ['n with stray bits in its last character', () => rsa({ n: strayBits(String(m.rsa.jwk.n)) }), 'n is not canonical base64url'],
    ['n with padding', () => rsa({ n: `${String(m.rsa.jwk.n)}==` }), 'n is not canonical base64url'],
    ['n with whitespace', () => rsa({ n: ` ${String(m.rsa.jwk.n)}` }), 'n is not canonical base64url'],
    ['e = 0', () => rsa({ e: 'AA' }), 'RSA public exponent 0 is below 65537'],
    ['e = 65535', () => rsa({ e: b64uint(65535n) }), 'RSA public exponent 65535 is below 65537'],
    ['e = 2^20 (even)', () => rsa({ e: b64uint(1n << 20n) }), 'RSA public exponent 1048576 is even; it must be odd'],
    ['e of 257 bits', () => rsa({ e: b64uint((1n << 256n) | 1n) }), 'RSA public exponent is longer than 64 bits'],
    ['e of 65 bits (OpenSSL refuses it above 3072-bit moduli)', () => rsa({ e: b64uint((1n << 64n) + 13n) }), 'RSA public exponent is longer than 64 bits'],
    ['e of 64 bits, the largest accepted', () => rsa({ e: b64uint((1n << 64n) - 59n) }), undefined],
    ['e of 64 KiB (reading it back from OpenSSL alone took 540 ms)', () => rsa({ e: Buffer.alloc(65536, 0xff).toString('base64url') }), 'RSA public exponent is longer than 64 bits'],
    ['e 65537 spelled with a leading zero byte (AAEAAQ)', () => rsa({ e: 'AAEAAQ' }), 'e carries 1 leading zero byte; RFC 7518 requires the fewest octets'],
    ['e = 3 spelled with two leading zero bytes', () => rsa({ e: 'AAAD' }), 'e carries 2 leading zero bytes; RFC 7518 requires the fewest octets'],
    ['n = 0', () => rsa({ n: 'AA' }), 'RSA modulus of 0 bits, at least 2048 needed'],
    ['n all zero bytes', () => rsa({ n: 'AAAA' }), 'n carries 2 leading zero bytes; RFC 7518 requires the fewest octets'],
    ['a 2047-bit modulus', () => rsa({ n: b64uint((1n << 2046n) | 1n) }), 'RSA modulus of 2047 bits, at least 2048 needed'],
    ['a 2048-bit modulus whose smallest factor is 1999', () => rsa({ n: b64uint(1999n * cofactorWithoutSmallPrimes(2037n)) }), 'RSA modulus is divisible by 1999, so it is not a product of two large primes'],
    ['a 4097-bit modulus', () => rsa({ n: b64uint((1n << 4096n) | 1n) }), 'RSA modulus of 4097 bits, at most 4096 supported'],
    ['a 16385-bit modulus', () => rsa({ n: b64uint((1n << 16384n) | 1n) }), 'RSA modulus of 16385 bits, at most 4096 supported'],
    ['a 512 KiB modulus', () => rsa({ n: Buffer.alloc(512 * 1024, 0xff).toString('base64url') }), 'RSA modulus of 4194304 bits, at most 4096 supported'],
    ['EC x of 64 KiB', () => ({ ...m.ec['P-256'].jwk, x: Buffer.alloc(65536, 1).toString('base64url') }), 'x is 65536 bytes, but a P-256 coordinate is exactly 32'],
    ['EC without crv', () => ({ ...m.ec['P-256'].jwk, crv: undefined }), 'curve undefined is not supported; EC keys must use P-256, P-384 or P-521'],
    ['EC secp256k1', () => ({ ...m.ec['P-256'].jwk, crv: 'secp256k1' }), 'curve "secp256k1" is not supported; EC keys must use P-256, P-384 or P-521'],
    ['EC P-256 coordinates labelled P-384', () => ({ ...m.ec['P-256'].jwk, crv: 'P-384' }), 'x is 32 bytes, but a P-384 coordinate is exactly 48'],
    ['EC y missing', () => ({ ...m.ec['P-384'].jwk, y: undefined }), 'y must be a non-empty base64url string'],
    ['EC y one byte long', () => ({ ...m.ec['P-521'].jwk, y: Buffer.concat([Buffer.alloc(1), Buffer.from(String(m.ec['P-521'].jwk.y), 'base64url')]).toString('base64url') }), 'y is 67 bytes, but a P-521 coordinate is exactly 66'],
    ['EC x and y swapped', () => ({ ...m.ec['P-256'].jwk, x: m.ec['P-256'].jwk.y, y: m.ec['P-256'].jwk.x }), 'its point (x, y) is not on the P-256 curve'],
    ['EC the point (0, 0)', () => ({ ...m.ec['P-256'].jwk, x: Buffer.alloc(32).toString('base64url'), y: Buffer.alloc(32).toString('base64url') }), 'its point (x, y) is not on the P-256 curve'],
    ['OKP X9999', () => ({ kty: 'OKP', crv: 'X9999', x: 'AAAA' }), 'curve "X9999" is not supported; OKP keys must use X25519, X448, Ed25519 or Ed448'],
    // Curve names that are Object.prototype members: looked up in plain objects they found functions (a TypeError, 500).
    ['EC crv "constructor" with alg ES256', () => ({ ...m.ec['P-256'].jwk, crv: 'constructor', alg: 'ES256' }), 'curve "constructor" is not supported; EC keys must use P-256, P-384 or P-521'],
    ['EC crv "__proto__" with use enc and alg ECDH-ES', () => ({ ...m.ec['P-256'].jwk, crv: '__proto__', alg: 'ECDH-ES' }), 'curve "__proto__" is not supported; EC keys must use P-256, P-384 or P-521'],
    ['OKP crv "toString"', () => ({ ...m.x25519.jwk, crv: 'toString' }), 'curve "toString" is not supported; OKP keys must use X25519, X448, Ed25519 or Ed448'],
    ['OKP crv "hasOwnProperty" with key_ops verify and alg EdDSA', () => ({ ...m.x25519.jwk, use: undefined, crv: 'hasOwnProperty', key_ops: ['verify'], alg: 'EdDSA' }), 'curve "hasOwnProperty" is not supported; OKP keys must use X25519, X448, Ed25519 or Ed448'],
    ['Ed25519 x of 31 bytes', () => ({ ...m.ed25519.jwk, x: Buffer.alloc(31, 1).toString('base64url') }), 'x is 31 bytes, but an Ed25519 public key is exactly 32'],
    ['X25519 u = 1 (low order)', () => ({ ...m.x25519.jwk, x: Buffer.concat([Buffer.from([1]), Buffer.alloc(31)]).toString('base64url') }), 'x is a low-order X25519 point (every shared secret would be zero)'],
    ['X25519 u = p (non-canonical zero)', () => ({ ...m.x25519.jwk, x: Buffer.from(b64uint((1n << 255n) - 19n), 'base64url').reverse().toString('base64url') }), 'x is a low-order X25519 point (every shared secret would be zero)'],
    ['X448 u = 0 (low order)', () => ({ kty: 'OKP', crv: 'X448', use: 'enc', x: Buffer.alloc(56).toString('base64url') }), 'x is a low-order X448 point (every shared secret would be zero)'],
    // The spec's own keys pass as written; a client's key in another spelling is refused (the provider respells only its own).
    ['RFC 7517 A.1: the example EC P-256 public key', () => RFC7517_PUBLIC_KEYS[0], undefined],
    ['RFC 7517 A.1: the example RSA public key', () => RFC7517_PUBLIC_KEYS[1], undefined],
    ['RFC 7517 A.1 RSA with a leading zero byte before n', () => padModulus(RFC7517_PUBLIC_KEYS[1], 1), 'n carries 1 leading zero byte; RFC 7518 requires the fewest octets'],
    ['RFC 7517 A.1 RSA with n in base64 with + and /', () => ({ ...RFC7517_PUBLIC_KEYS[1], n: Buffer.from(String(RFC7517_PUBLIC_KEYS[1].n), 'base64url').toString('base64') }), 'n is not canonical base64url'],
    ['RFC 7517 A.1 EC with a leading zero byte before y (33 bytes)', () => ({ ...RFC7517_PUBLIC_KEYS[0], y: Buffer.concat([Buffer.alloc(1), Buffer.from(String(RFC7517_PUBLIC_KEYS[0].y), 'base64url')]).toString('base64url') }), 'y is 33 bytes, but a P-256 coordinate is exactly 32'],
  ];

  it.each(table)('%s', (_name, key, reason) => {
    expect(judge(key())).toBe(reason);
  });
});

/** A candidate key: the public JWK vetting sees, and the private half when one exists. */
interface Candidate {
  jwk: JWK;
  privateKey?: KeyObject;
  alg: 'RSA-OAEP' | 'RSA-OAEP-256' | 'ECDH-ES' | 'ECDH-ES+A256KW';
}

function modInverse(a: bigint, modulus: bigint): bigint | undefined {
  let [r0, r1, s0, s1] = [((a % modulus) + modulus) % modulus, modulus, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1, s0, s1] = [r1, r0 - q * r1, s1, s0 - q * s1];
  }
  return r0 === 1n ? ((s0 % modulus) + modulus) % modulus : undefined;
}
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));

/** The private key of `priv`'s primes under another public exponent `e`, when one exists (gcd(e, λ) = 1). */
function privateForExponent(priv: KeyObject, e: bigint): KeyObject | undefined {
  const k = priv.export({ format: 'jwk' });
  const [p, q] = [uint(k.p), uint(k.q)];
  const lambda = ((p - 1n) * (q - 1n)) / gcd(p - 1n, q - 1n);
  const d = modInverse(e, lambda);
  const qi = modInverse(q, p);
  if (d === undefined || qi === undefined) return undefined;
  const jwk: JsonWebKey = { kty: 'RSA', n: k.n, e: b64uint(e), d: b64uint(d), p: k.p, q: k.q, dp: b64uint(d % (p - 1n)), dq: b64uint(d % (q - 1n)), qi: b64uint(qi) };
  return createPrivateKey({ key: jwk, format: 'jwk' });
}

/** `common` about half of the time, else one of `rare`. */
const mostly = <T>(common: T, ...rare: T[]): fc.Arbitrary<T> => fc.oneof({ weight: rare.length, arbitrary: fc.constant(common) }, { weight: rare.length, arbitrary: fc.constantFrom(...rare) });

const KEY_OPS = [['encrypt', 'wrapKey'], ['encrypt'], ['wrapKey'], ['deriveKey'], ['verify'], ['encrypt', 'encrypt'], ['encrypt', 'decrypt'], ['verify', 'encrypt'], ['Encrypt'], []];
const labels = fc.record({ use: mostly<string | undefined>('enc', undefined, 'sig'), key_ops: mostly<string[] | undefined>(undefined, ...KEY_OPS) });
const labelled = (jwk: JWK, l: { use: string | undefined; key_ops: string[] | undefined }): JWK => {
  const { use: _u, key_ops: _k, ...rest } = jwk;
  return { ...rest, ...(l.use === undefined ? {} : { use: l.use }), ...(l.key_ops === undefined ? {} : { key_ops: l.key_ops }) };
};

/** The largest prime below 2^size: a public exponent of exactly `size` bits that fits any key. */
function primeBelowPowerOfTwo(size: number): bigint {
  for (let candidate = (1n << BigInt(size)) - 1n; ; candidate -= 2n) if (checkPrimeSync(candidate)) return candidate;
}

function rsaCandidates(): fc.Arbitrary<Candidate> {
  // Exponents of every size around the limits (OpenSSL takes at most 64 bits above 3072-bit moduli).
  const sized = [17, 24, 32, 33, 48, 63, 64, 65, 66, 96, 128, 256, 257].map(primeBelowPowerOfTwo);
  return fc
    .record({
      base: mostly<'rsa' | 'rsaSig' | 'rsa1024' | 'rsaE3' | 'rsa4096'>('rsa', 'rsaSig', 'rsa1024', 'rsaE3', 'rsa4096', 'rsa4096'),
      e: mostly<bigint | undefined>(undefined, 1n, 3n, 17n, 65535n, 65537n, 65538n, 65539n, (1n << 32n) + 15n, (1n << 256n) + 1n, ...sized, ...sized),
      pad: mostly(0, 1, 2, 3, 128),
      labels,
      alg: fc.constantFrom<'RSA-OAEP' | 'RSA-OAEP-256'>('RSA-OAEP', 'RSA-OAEP-256'),
      algMember: fc.boolean(),
    })
    .map(({ base, e, pad, labels: l, alg, algMember }) => {
      const pair = base === 'rsa4096' ? big.rsa4096 : m[base];
      const privateKey = e === undefined ? pair.privateKey : privateForExponent(pair.privateKey, e);
      let jwk = labelled(e === undefined ? pair.jwk : { ...pair.jwk, e: b64uint(e) }, l);
      if (pad > 0) jwk = padModulus(jwk, pad);
      return { jwk: algMember ? { ...jwk, alg } : jwk, privateKey, alg };
    });
}

/** Encryption keys that differ only in modulus size and exponent: where OpenSSL's limits lie. */
function exponentCandidates(): fc.Arbitrary<Candidate> {
  const sized = [17, 24, 32, 33, 48, 63, 64, 65, 66, 96, 128, 256].map(primeBelowPowerOfTwo);
  return fc
    .record({ base: fc.constantFrom<'rsa' | 'rsa4096'>('rsa', 'rsa4096'), e: fc.constantFrom(...sized), alg: fc.constantFrom<'RSA-OAEP' | 'RSA-OAEP-256'>('RSA-OAEP', 'RSA-OAEP-256') })
    .map(({ base, e, alg }) => {
      const pair = base === 'rsa4096' ? big.rsa4096 : m.rsa;
      return { jwk: { ...pair.jwk, e: b64uint(e) }, privateKey: privateForExponent(pair.privateKey, e), alg };
    });
}

function ecCandidates(): fc.Arbitrary<Candidate> {
  return fc
    .record({
      crv: fc.constantFrom<'P-256' | 'P-384' | 'P-521'>('P-256', 'P-384', 'P-521'),
      flip: fc.option(fc.record({ byte: fc.nat({ max: 65 }), bit: fc.nat({ max: 7 }), coordinate: fc.constantFrom<'x' | 'y'>('x', 'y') }), { freq: 2 }),
      labels,
      alg: fc.constantFrom<'ECDH-ES' | 'ECDH-ES+A256KW'>('ECDH-ES', 'ECDH-ES+A256KW'),
    })
    .map(({ crv, flip, labels: l, alg }) => {
      const pair = m.ec[crv];
      let jwk = labelled(pair.jwk, l);
      if (flip) jwk = flipBit(jwk, flip.coordinate, flip.byte, flip.bit);
      return { jwk, privateKey: flip ? undefined : pair.privateKey, alg };
    });
}

function x25519Candidates(): fc.Arbitrary<Candidate> {
  const p = (1n << 255n) - 19n;
  /** RFC 7748 encoding: 32 bytes, little-endian. */
  const le = (u: bigint): string => Buffer.from(u.toString(16).padStart(64, '0'), 'hex').reverse().toString('base64url');
  return fc
    .record({
      x: mostly<'keep' | 'zero' | 'one' | 'p' | 'p+1' | 'short' | 'long'>('keep', 'zero', 'one', 'p', 'p+1', 'short', 'long'),
      labels,
      alg: fc.constantFrom<'ECDH-ES' | 'ECDH-ES+A256KW'>('ECDH-ES', 'ECDH-ES+A256KW'),
    })
    .map(({ x, labels: l, alg }) => {
      const real = String(m.x25519.jwk.x);
      const replaced = {
        keep: real,
        zero: le(0n),
        one: le(1n),
        p: le(p),
        'p+1': le(p + 1n),
        short: Buffer.from(real, 'base64url').subarray(1).toString('base64url'),
        long: Buffer.concat([Buffer.from(real, 'base64url'), Buffer.alloc(1)]).toString('base64url'),
      }[x];
      return { jwk: labelled({ ...m.x25519.jwk, x: replaced }, l), privateKey: x === 'keep' ? m.x25519.privateKey : undefined, alg };
    });
}

describe('property: a key vetting accepts is a key that works and meets the rules', () => {
  /** The key as vetting stores it for a client asking `alg` (the one key judgement), or undefined when refused. */
  const stored = (c: Candidate): JWK | undefined => {
    const verdict = judgeClientKeySet({ keys: [c.jwk] }, [['userinfo_encrypted_response_alg', c.alg]]);
    return verdict.setDefect === undefined && verdict.refused.length === 0 && verdict.unserved.length === 0 ? verdict.keys[0] : undefined;
  };

  async function roundTrip(c: Candidate, seen: { accepted: number; rejected: number }): Promise<void> {
    const key = stored(c);
    if (key === undefined) {
      seen.rejected += 1;
      return;
    }
    seen.accepted += 1;
    expect(c.privateKey).toBeDefined();
    if (c.jwk.kty === 'RSA') {
      const n = uint(c.jwk.n);
      const e = uint(c.jwk.e);
      expect(bits(n)).toBeGreaterThanOrEqual(2048);
      expect(e % 2n).toBe(1n);
      expect(e).toBeGreaterThanOrEqual(65537n);
      expect(bits(e)).toBeLessThanOrEqual(64);
      expect(bits(n)).toBeLessThanOrEqual(4096);
    }
    const plaintext = new TextEncoder().encode('only the relying party reads this');
    // The provider hands the stored JWK itself to jose (oidc-provider's JWT.encrypt).
    const jwe = await new CompactEncrypt(plaintext).setProtectedHeader({ alg: c.alg, enc: 'A256GCM' }).encrypt(key);
    const { plaintext: decrypted } = await compactDecrypt(jwe, c.privateKey as KeyObject);
    expect(Buffer.from(decrypted).equals(Buffer.from(plaintext))).toBe(true);
  }

  /**
   * Runs the round-trip property over `candidates` and checks that it saw both verdicts, so it is not
   * vacuous (each property on its own: the tests run alone and in any order).
   */
  async function property(candidates: fc.Arbitrary<Candidate>, numRuns: number): Promise<void> {
    const seen = { accepted: 0, rejected: 0 };
    await fc.assert(fc.asyncProperty(candidates, (c) => roundTrip(c, seen)), { numRuns });
    // Each generator accepts about 5-70 % of its candidates: seeing no key of a verdict means the
    // generator broke (the chance of it by luck is below 1 in 100,000).
    expect(seen.accepted).toBeGreaterThan(0);
    expect(seen.rejected).toBeGreaterThan(0);
    total.accepted += seen.accepted;
    total.rejected += seen.rejected;
    total.properties += 1;
  }

  const total = { accepted: 0, rejected: 0, properties: 0 };
  afterAll(() => {
    // All four properties together (whatever order they ran in) saw more than 20 keys of each verdict.
    if (total.properties < 4) return;
    expect(total.accepted).toBeGreaterThan(20);
    expect(total.rejected).toBeGreaterThan(20);
  });

  it('RSA: exponents of every size up to 257 bits on 2048- and 4096-bit moduli, zero padding, use/key_ops and alg members', async () => {
    await property(rsaCandidates(), 150);
  });

  it('RSA exponents of 17 to 256 bits on 2048- and 4096-bit moduli', async () => {
    await property(exponentCandidates(), 60);
  });

  it('EC P-256/384/521: coordinate bit flips, use/key_ops', async () => {
    await property(ecCandidates(), 150);
  });

  it('X25519: low-order, non-canonical and wrong-length x, use/key_ops', async () => {
    await property(x25519Candidates(), 100);
  });
});

describe('why the key_ops rules exist: jose, which the provider encrypts with, refuses these keys', () => {
  const encrypt = (jwk: JWK, alg: string): Promise<string> =>
    new CompactEncrypt(new TextEncoder().encode('x')).setProtectedHeader({ alg, enc: 'A256GCM' }).encrypt(jwk);
  const cases: [string, () => JWK, string][] = [
    ['an RSA key with key_ops ["encrypt"]', () => ({ ...m.rsa.jwk, key_ops: ['encrypt'] }), 'RSA-OAEP-256'],
    ['an RSA key with key_ops []', () => ({ ...m.rsa.jwk, key_ops: [] }), 'RSA-OAEP'],
    ['a P-256 key with key_ops ["deriveKey"]', () => ({ ...m.ec['P-256'].jwk, key_ops: ['deriveKey'] }), 'ECDH-ES'],
    ['a P-384 key with key_ops ["verify"]', () => ({ ...m.ec['P-384'].jwk, use: undefined, key_ops: ['verify'] }), 'ECDH-ES+A256KW'],
    ['an X25519 key with key_ops ["deriveBits"]', () => ({ ...m.x25519.jwk, key_ops: ['deriveBits'] }), 'ECDH-ES'],
    ['an X448 key', () => m.x448.jwk, 'ECDH-ES'],
    ['an Ed25519 key', () => ({ ...m.ed25519.jwk, use: undefined }), 'ECDH-ES'],
    // A hostile spelling on purpose: JWK types ext as a boolean.
    ['an RSA key with ext "yes"', () => ({ ...m.rsa.jwk, ext: 'yes' }) as unknown as JWK, 'RSA-OAEP-256'],
  ];

  it.each(cases)('%s', async (_name, key, alg) => {
    await expect(encrypt(key(), alg)).rejects.toThrow();
    const verdict = keyDefect(key()) ?? unfitReason(key(), alg);
    expect(verdict).toEqual(expect.any(String));
  });

  // The seed spec's labels (C6.2): jose refuses the key as labelled, so the provider stores and
  // uses it normalised, and jose encrypts to that; the relying party decrypts with its own key.
  const seedLabels: [string, () => Pair, Partial<JWK>, string, Partial<JWK>][] = [
    ['an RSA key with key_ops ["encrypt"]', () => m.rsa, { key_ops: ['encrypt'] }, 'RSA-OAEP-256', { key_ops: ['encrypt', 'wrapKey'] }],
    ['an RSA key with key_ops ["wrapKey"]', () => m.rsa, { key_ops: ['wrapKey'] }, 'RSA-OAEP', { key_ops: ['encrypt', 'wrapKey'] }],
    ['a P-256 key with key_ops ["encrypt"]', () => m.ec['P-256'], { key_ops: ['encrypt'] }, 'ECDH-ES', { use: 'enc' }],
    ['a P-384 key with key_ops ["deriveKey"]', () => m.ec['P-384'], { key_ops: ['deriveKey'] }, 'ECDH-ES+A256KW', { use: 'enc' }],
    ['an X25519 key with key_ops ["deriveBits"]', () => m.x25519, { key_ops: ['deriveBits'] }, 'ECDH-ES', { use: 'enc' }],
  ];
  it.each(seedLabels)('%s: refused by jose as labelled, stored normalised, and encrypted to', async (_name, pair, labels, alg, storedLabels) => {
    const { use: _use, key_ops: _ops, ...bare } = pair().jwk;
    const key: JWK = { ...bare, ...labels };
    if (key.kty === 'RSA') await expect(encrypt(key, alg)).rejects.toThrow();
    const verdict = judgeClientKeySet({ keys: [key] }, [['id_token_encrypted_response_alg', alg]]);
    expect([verdict.refused, verdict.unserved]).toEqual([[], []]);
    expect(verdict.keys).toEqual([{ ...bare, ...storedLabels }]);
    expect(normaliseKeyLabels(key)).toEqual(verdict.keys[0]);
    const { plaintext } = await compactDecrypt(await encrypt(verdict.keys[0] as JWK, alg), pair().privateKey);
    expect(new TextDecoder().decode(plaintext)).toBe('x');
  });
});

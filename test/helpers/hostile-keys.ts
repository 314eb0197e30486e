import { generateKeyPairSync, generatePrimeSync, randomBytes, type KeyObject } from 'node:crypto';

import type { JWK } from 'jose';

/** Base64url of a non-negative integer, minimal octets (RFC 7518 Base64urlUInt). */
export function b64uint(value: bigint): string {
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Buffer.from(hex, 'hex').toString('base64url');
}

/** The integer a base64url member spells. */
export function uint(b64: unknown): bigint {
  const hex = Buffer.from(String(b64), 'base64url').toString('hex');
  return hex === '' ? 0n : BigInt(`0x${hex}`);
}

/** `jwk` with `zeros` leading zero bytes in front of `n` (the value is unchanged). */
export function padModulus(jwk: JWK, zeros: number): JWK {
  return { ...jwk, n: Buffer.concat([Buffer.alloc(zeros), Buffer.from(String(jwk.n), 'base64url')]).toString('base64url') };
}

/** `jwk` with one bit of a base64url `member` flipped. */
export function flipBit(jwk: JWK, member: 'x' | 'y' | 'n', byte: number, bit: number): JWK {
  const value = Buffer.from(String(jwk[member]), 'base64url');
  value[byte % value.length] = (value[byte % value.length] as number) ^ (1 << bit);
  return { ...jwk, [member]: value.toString('base64url') };
}

/** `jwk` with one bit of `y` flipped: almost surely a point off the curve. */
export const flipY = (jwk: JWK, byte = 7, bit = 0): JWK => flipBit(jwk, 'y', byte, bit);

/**
 * The private RSA key `jwk` (with `p`, `q`) rewritten to public exponent 1 and private exponent 1: a
 * consistent key pair whose "signature" of a message is its padded message itself, so anyone can sign.
 */
export function exponentOneKey(jwk: JWK): JWK {
  const [p, q] = [uint(jwk.p), uint(jwk.q)];
  return { ...jwk, e: b64uint(1n), d: b64uint(1n), dp: b64uint(1n % (p - 1n)), dq: b64uint(1n % (q - 1n)) };
}

/** A key pair as tests need it: the private KeyObject and the public JWK. */
export interface Pair {
  privateKey: KeyObject;
  jwk: JWK;
}

const pair = (generated: { publicKey: KeyObject; privateKey: KeyObject }, extra: Partial<JWK>): Pair => ({
  privateKey: generated.privateKey,
  jwk: { ...(generated.publicKey.export({ format: 'jwk' }) as JWK), ...extra },
});

/** Real key pairs the hostile corpus is cut from (generated per test run, never committed). */
export interface KeyMaterial {
  rsa: Pair;
  rsaSig: Pair;
  rsa1024: Pair;
  /** A genuine 2048-bit RSA key with public exponent 3. */
  rsaE3: Pair;
  ec: Record<'P-256' | 'P-384' | 'P-521', Pair>;
  x25519: Pair;
  x448: Pair;
  ed25519: Pair;
  /** Primes to build moduli no one should register: a prime one, a square, one with a small factor. */
  primes: { p1030: bigint; p2040: bigint; p2048: bigint };
}

/** Generates the {@link KeyMaterial} with node:crypto (a second or two, mostly RSA keys and primes). */
export function keyMaterial(): KeyMaterial {
  const rsa = (modulusLength: number, publicExponent = 65537): { publicKey: KeyObject; privateKey: KeyObject } =>
    generateKeyPairSync('rsa', { modulusLength, publicExponent });
  const ec = (crv: 'P-256' | 'P-384' | 'P-521'): Pair => pair(generateKeyPairSync('ec', { namedCurve: crv }), { use: 'enc', kid: `good-${crv}` });
  return {
    rsa: pair(rsa(2048), { use: 'enc', kid: 'good' }),
    rsaSig: pair(rsa(2048), { use: 'sig', kid: 'good-sig' }),
    rsa1024: pair(rsa(1024), { use: 'enc', kid: 'weak' }),
    rsaE3: pair(rsa(2048, 3), { use: 'enc', kid: 'weak' }),
    ec: { 'P-256': ec('P-256'), 'P-384': ec('P-384'), 'P-521': ec('P-521') },
    x25519: pair(generateKeyPairSync('x25519'), { use: 'enc', kid: 'good-x25519' }),
    x448: pair(generateKeyPairSync('x448'), { use: 'enc', kid: 'good-x448' }),
    ed25519: pair(generateKeyPairSync('ed25519'), { use: 'sig', kid: 'good-ed25519' }),
    primes: { p1030: generatePrimeSync(1030, { bigint: true }), p2040: generatePrimeSync(2040, { bigint: true }), p2048: generatePrimeSync(2048, { bigint: true }) },
  };
}

/** One hostile key set and the exact judgement it must get. */
export interface HostileCase {
  name: string;
  /** The encryption alg the registration asks for (a fitting good key is in every set that needs one). */
  alg: 'RSA-OAEP-256' | 'ECDH-ES+A256KW';
  keys: JWK[];
  /** The error description after "`field`: ". */
  message: string;
}

/** Rejects a key by replacing one member, keeping the rest of a real key. */
const weak = (base: JWK, change: Record<string, unknown>): JWK => ({ ...base, kid: 'weak', ...change });

/** Every hostile key of the corpus (issue 14), each beside the keys it hides among. */
export function hostileCases(m: KeyMaterial): HostileCase[] {
  const good = m.rsa.jwk;
  const pick = (alg: string): string => `the provider may pick it for id_token_encrypted_response_alg ${alg} (its use, key_ops and alg allow that), and it would fail: `;
  const rsa = (name: string, key: JWK, message: string): HostileCase => ({ name, alg: 'RSA-OAEP-256', keys: [key], message: `key #1 ("weak"): ${message}` });
  const n = uint(good.n);
  const multipleOf3 = n - (n % 3n);
  const divisibleBy3 = multipleOf3 % 2n === 0n ? multipleOf3 - 3n : multipleOf3;
  const odd = (bytes: Buffer): Buffer => {
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) | 1;
    return bytes;
  };
  const huge = odd(Buffer.concat([Buffer.from([0x80]), randomBytes(2048)]));
  const justOver = odd(Buffer.concat([Buffer.from([0x01]), randomBytes(512)]));
  const hugeExponent = odd(Buffer.concat([Buffer.from([0x80]), randomBytes(32 * 1024 - 1)]));
  const { p1030, p2040, p2048 } = m.primes;
  const cases: HostileCase[] = [
    rsa('e = 1 on a real 2048-bit modulus', weak(good, { e: b64uint(1n) }), 'RSA public exponent 1 is below 65537'),
    rsa('a genuine e = 3 key', { ...m.rsaE3.jwk }, 'RSA public exponent 3 is below 65537'),
    rsa('an even exponent 65538', weak(good, { e: b64uint(65538n) }), 'RSA public exponent 65538 is even; it must be odd'),
    rsa('an exponent of 257 bits', weak(good, { e: b64uint((1n << 256n) + 1n) }), 'RSA public exponent is longer than 64 bits'),
    rsa('an exponent of 65 bits (OpenSSL refuses it above 3072-bit moduli: the token endpoint failed)', weak(good, { e: b64uint((1n << 64n) + 13n) }), 'RSA public exponent is longer than 64 bits'),
    rsa('a 32 KiB exponent (reading it back from OpenSSL alone blocks for 100 ms and more)', weak(good, { e: hugeExponent.toString('base64url') }), 'RSA public exponent is longer than 64 bits'),
    rsa('e 65537 spelled with a leading zero byte ("AAEAAQ")', weak(good, { e: 'AAEAAQ' }), 'e carries 1 leading zero byte; RFC 7518 requires the fewest octets'),
    rsa('a 1024-bit modulus padded with zero bytes to 2048', padModulus(m.rsa1024.jwk, 128), 'n carries 128 leading zero bytes; RFC 7518 requires the fewest octets'),
    rsa('a good modulus with one leading zero byte', weak(padModulus(good, 1), {}), 'n carries 1 leading zero byte; RFC 7518 requires the fewest octets'),
    rsa('a plain 1024-bit modulus', { ...m.rsa1024.jwk }, 'RSA modulus of 1024 bits, at least 2048 needed'),
    rsa('a modulus divisible by 3', weak(good, { n: b64uint(divisibleBy3) }), 'RSA modulus is divisible by 3, so it is not a product of two large primes'),
    rsa('a modulus divisible by 262139, the largest prime below 2^18', weak(good, { n: b64uint(262139n * p2040) }), 'RSA modulus is divisible by 262139, so it is not a product of two large primes'),
    rsa('a prime modulus (anyone decrypts: d = e^-1 mod n - 1)', weak(good, { n: b64uint(p2048) }), 'RSA modulus is a probable prime, so anyone can compute the private key'),
    rsa('the square of a prime', weak(good, { n: b64uint(p1030 * p1030) }), 'RSA modulus is a perfect power (x^2), so it is not a product of two distinct primes'),
    rsa('an even modulus', weak(good, { n: b64uint(n + 1n) }), 'RSA modulus is even, so it is not a product of two large primes'),
    rsa('a modulus of 4097 bits', weak(good, { n: justOver.toString('base64url') }), 'RSA modulus of 4097 bits, at most 4096 supported'),
    rsa('a modulus of 16392 bits', weak(good, { n: huge.toString('base64url') }), 'RSA modulus of 16392 bits, at most 4096 supported'),
    rsa('n padded with "="', weak(good, { n: `${String(good.n)}=` }), 'n is not canonical base64url'),
    rsa('n in base64, not base64url', weak(good, { n: Buffer.from(String(good.n), 'base64url').toString('base64').replace(/=+$/, '') }), 'n is not canonical base64url'),
    ...(['P-256', 'P-384', 'P-521'] as const).map((crv): HostileCase => ({
      name: `a ${crv} point off the curve`,
      alg: 'ECDH-ES+A256KW',
      keys: [weak(flipY(m.ec[crv].jwk), {})],
      message: `key #1 ("weak"): its point (x, y) is not on the ${crv} curve`,
    })),
    {
      name: 'a P-256 x one byte short',
      alg: 'ECDH-ES+A256KW',
      keys: [weak(m.ec['P-256'].jwk, { x: Buffer.from(String(m.ec['P-256'].jwk.x), 'base64url').subarray(1).toString('base64url') })],
      message: 'key #1 ("weak"): x is 31 bytes, but a P-256 coordinate is exactly 32',
    },
    ...[31, 33].map((length): HostileCase => ({
      name: `an X25519 x of ${length} bytes`,
      alg: 'ECDH-ES+A256KW',
      keys: [weak(m.x25519.jwk, { x: Buffer.alloc(length, 9).toString('base64url') })],
      message: `key #1 ("weak"): x is ${length} bytes, but an X25519 public key is exactly 32`,
    })),
    {
      name: 'an EC key on curve "constructor" with alg ECDH-ES+A256KW (an Object.prototype member: once a TypeError, 500)',
      alg: 'ECDH-ES+A256KW',
      keys: [weak(m.ec['P-256'].jwk, { crv: 'constructor', alg: 'ECDH-ES+A256KW' })],
      message: 'key #1 ("weak"): curve "constructor" is not supported; EC keys must use P-256, P-384 or P-521',
    },
    {
      name: 'an X25519 low-order point (all zeros)',
      alg: 'ECDH-ES+A256KW',
      keys: [weak(m.x25519.jwk, { x: Buffer.alloc(32).toString('base64url') })],
      message: 'key #1 ("weak"): x is a low-order X25519 point (every shared secret would be zero)',
    },
    rsa('use "sig" with key_ops ["encrypt"]', weak(good, { use: 'sig', key_ops: ['encrypt'] }), 'use "sig" contradicts key_ops "encrypt"'),
    rsa('use "sig" with key_ops ["wrapKey"]', weak(good, { use: 'sig', key_ops: ['wrapKey'] }), 'use "sig" contradicts key_ops "wrapKey"'),
    rsa('use "enc" with key_ops ["verify"]', weak(good, { key_ops: ['verify'] }), 'use "enc" contradicts key_ops "verify"'),
    rsa('key_ops listing encrypt twice', weak(good, { use: undefined, key_ops: ['encrypt', 'encrypt'] }), 'key_ops lists "encrypt" more than once'),
    rsa('an unknown key_ops value', weak(good, { key_ops: ['encipher'] }), 'key_ops value "encipher" is not an RFC 7517 operation (sign, verify, encrypt, decrypt, wrapKey, unwrapKey, deriveKey, deriveBits)'),
    rsa('key_ops mixing verify and encrypt', weak(good, { use: undefined, key_ops: ['verify', 'encrypt'] }), 'key_ops mixes signature operations ("verify") with encryption operations ("encrypt")'),
    rsa('an empty key_ops on an RSA encryption key', weak(good, { key_ops: [] }), 'key_ops []: an RSA public encryption key needs key_ops containing "encrypt" or "wrapKey" (or none, with use "enc")'),
    rsa('key_ops ["deriveKey"] on an RSA key', weak(good, { use: undefined, key_ops: ['deriveKey'] }), 'key_ops ["deriveKey"]: an RSA public encryption key needs key_ops containing "encrypt" or "wrapKey" (or none, with use "enc")'),
    rsa('ext "yes" (jose refuses the key)', weak(good, { ext: 'yes' }), 'ext must be true or false'),
    rsa('use "encryption"', weak(good, { use: 'encryption' }), 'use "encryption" is neither "sig" nor "enc"'),
    // A kid or x5c oidc-provider refuses makes it refuse the whole set, so every key beside it: refused by name, left out alone later.
    { name: 'a numeric kid beside a good key', alg: 'RSA-OAEP-256', keys: [good, weak(m.rsaSig.jwk, { kid: 7 })], message: 'key #2: kid must be a non-empty string' },
    { name: 'an empty kid', alg: 'RSA-OAEP-256', keys: [weak(good, { kid: '' })], message: 'key #1 (""): kid must be a non-empty string' },
    rsa('an x5c that is a string', weak(good, { x5c: 'MIIB' }), 'x5c must be an array of non-empty strings (base64 DER certificates)'),
    rsa('a member named "constructor"', weak(good, JSON.parse('{"constructor":{}}') as Record<string, unknown>), 'a member named "constructor" is not allowed (it is no JWK parameter)'),
    rsa('alg RS256 on an encryption key', weak(good, { alg: 'RS256' }), 'alg "RS256" is a signature algorithm, but the key is marked for encryption'),
    rsa('alg ES256 on an RSA key', weak(good, { alg: 'ES256' }), 'alg "ES256" is not an algorithm for an RSA key (RS256, RS384, RS512, PS256, PS384, PS512, RSA-OAEP, RSA-OAEP-256, RSA-OAEP-384, RSA-OAEP-512, RSA1_5)'),
    { name: 'private member d', alg: 'RSA-OAEP-256', keys: [weak(good, { d: 'AAAA' })], message: 'key #1 ("weak") contains private key material; register public keys only' },
    { name: 'private member priv', alg: 'RSA-OAEP-256', keys: [weak(good, { priv: 'AAAA' })], message: 'key #1 ("weak") contains private key material; register public keys only' },
    {
      name: 'an Ed25519 key marked for encryption',
      alg: 'ECDH-ES+A256KW',
      keys: [m.x25519.jwk, weak(m.ed25519.jwk, { use: 'enc' })],
      message: 'key #2 ("weak"): an Ed25519 key can only sign, but it is marked for encryption',
    },
    {
      name: 'an X25519 key marked for signatures',
      alg: 'ECDH-ES+A256KW',
      keys: [m.x25519.jwk, weak(m.x25519.jwk, { use: 'sig' })],
      message: 'key #2 ("weak"): an X25519 key cannot sign, but it is marked for signatures',
    },
    {
      name: 'a P-384 key with key_ops ["decrypt"] (an operation of the private half) beside a good one',
      alg: 'ECDH-ES+A256KW',
      keys: [m.ec['P-256'].jwk, weak(m.ec['P-384'].jwk, { use: undefined, key_ops: ['decrypt'] })],
      message: 'key #2 ("weak"): key_ops ["decrypt"]: an ECDH public encryption key needs key_ops containing "encrypt", "wrapKey", "deriveKey" or "deriveBits" (or none, with use "enc")',
    },
    {
      name: 'a P-384 signature key labelled only by key_ops ["verify"] beside a good one, ECDH asked for',
      alg: 'ECDH-ES+A256KW',
      keys: [m.ec['P-256'].jwk, weak(m.ec['P-384'].jwk, { use: undefined, key_ops: ['verify'] })],
      message: `key #2 ("weak"): ${pick('ECDH-ES+A256KW')}key_ops ["verify"], but an ECDH-ES+A256KW public key must carry no key_ops (use "enc" instead)`,
    },
    {
      name: 'an X448 encryption key beside a good X25519 one',
      alg: 'ECDH-ES+A256KW',
      keys: [m.x25519.jwk, weak({ kty: 'OKP', crv: 'X448', x: m.x448.jwk.x }, { use: 'enc' })],
      message: `key #2 ("weak"): ${pick('ECDH-ES+A256KW')}OKP X448 key, but ECDH-ES+A256KW needs EC P-256/384/521 or X25519`,
    },
    {
      name: 'an Ed25519 key with key_ops ["verify"] and no use beside a good X25519 one',
      alg: 'ECDH-ES+A256KW',
      keys: [m.x25519.jwk, weak(m.ed25519.jwk, { use: undefined, key_ops: ['verify'] })],
      message: `key #2 ("weak"): ${pick('ECDH-ES+A256KW')}OKP Ed25519 key, but ECDH-ES+A256KW needs EC P-256/384/521 or X25519`,
    },
    { name: 'a weak key before a good one', alg: 'RSA-OAEP-256', keys: [m.rsa1024.jwk, good], message: 'key #1 ("weak"): RSA modulus of 1024 bits, at least 2048 needed' },
    { name: 'a weak key after a good one', alg: 'RSA-OAEP-256', keys: [good, m.rsa1024.jwk], message: 'key #2 ("weak"): RSA modulus of 1024 bits, at least 2048 needed' },
    {
      name: 'a weak signature key beside a good encryption key',
      alg: 'RSA-OAEP-256',
      keys: [good, { ...m.rsa1024.jwk, use: 'sig', kid: 'weak-sig' }],
      message: 'key #2 ("weak-sig"): RSA modulus of 1024 bits, at least 2048 needed',
    },
    {
      name: 'an e = 1 signature key beside a good encryption key',
      alg: 'RSA-OAEP-256',
      keys: [good, weak(m.rsaSig.jwk, { e: b64uint(1n) })],
      message: 'key #2 ("weak"): RSA public exponent 1 is below 65537',
    },
  ];
  return cases;
}

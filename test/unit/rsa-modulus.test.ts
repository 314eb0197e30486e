import { constants, createPublicKey, generateKeyPairSync, generatePrimeSync, getDiffieHellman, publicEncrypt, type JsonWebKey } from 'node:crypto';

import { beforeAll, describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';

import { keyDefect } from '../../policies/jwk-rules.js';
import { fermatResidue, fermatResidueSlow, perfectPower, smallFactor } from '../../policies/rsa-modulus.js';
import { b64uint, uint } from '../helpers/hostile-keys.js';

/** A real encryption key whose modulus the tests replace (its e stays 65537). */
let base: JWK;
beforeAll(() => {
  base = { ...(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }) as JWK), use: 'enc', kid: 'base' };
});

const judge = (key: JWK): string | undefined => keyDefect(key);

/** a^-1 mod m (extended Euclid). */
function modInverse(a: bigint, modulus: bigint): bigint {
  let [r0, r1, s0, s1] = [a % modulus, modulus, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1, s0, s1] = [r1, r0 - q * r1, s1, s0 - q * s1];
  }
  return ((s0 % modulus) + modulus) % modulus;
}

/** b^x mod n, square-and-multiply: how an attacker decrypts. */
function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let [result, b, x] = [1n, base % modulus, exponent];
  while (x > 0n) {
    if (x & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
    x >>= 1n;
  }
  return result;
}

describe('keyDefect: what an RSA modulus is made of (NIST SP 800-89 partial validation; issue 14 F1)', () => {
  const prime = (size: number): bigint => generatePrimeSync(size, { bigint: true });
  /** The published primes of RFC 3526's groups 14 (2048 bits) and 15 (3072 bits): generating primes that long takes seconds. */
  const modp = (group: 'modp14' | 'modp15'): bigint => uint(getDiffieHellman(group).getPrime().toString('base64url'));
  const withModulus = (n: bigint): JWK => ({ ...base, kid: 'hostile', n: b64uint(n) });
  const PROBABLE_PRIME = 'RSA modulus is a probable prime, so anyone can compute the private key';

  it('refuses a prime modulus, which anyone can decrypt for (d = e^-1 mod n - 1)', () => {
    const n = modp('modp14');
    const key = withModulus(n);
    // The attack: encrypt to the key as the provider would, decrypt without any secret.
    const message = 0x5ec2e7n;
    const ciphertext = uint(publicEncrypt({ key: createPublicKey({ key: key as JsonWebKey, format: 'jwk' }), padding: constants.RSA_NO_PADDING }, Buffer.from(message.toString(16).padStart(512, '0'), 'hex')).toString('base64url'));
    const d = modInverse(65537n, n - 1n);
    expect(modPow(ciphertext, d, n)).toBe(message);
    expect(judge(key)).toBe(PROBABLE_PRIME);
  });

  it.each([
    ['3072 bits, the prime of RFC 3526 group 15 (one OpenSSL operation)', (): bigint => modp('modp15')],
    ['3217 bits, the Mersenne prime 2^3217 - 1 (above 3072 bits: OpenSSL raises to the 256th power, byte by byte)', (): bigint => (1n << 3217n) - 1n],
  ])('refuses a prime modulus of %s', (_name, n) => {
    expect(judge(withModulus(n()))).toBe(PROBABLE_PRIME);
  });

  it.each([
    ['a square (p^2)', (): bigint => prime(1030) ** 2n, 'RSA modulus is a perfect power (x^2), so it is not a product of two distinct primes'],
    ['a cube (p^3)', (): bigint => prime(700) ** 3n, 'RSA modulus is a perfect power (x^3), so it is not a product of two distinct primes'],
    ['a fifth power (p^5)', (): bigint => prime(420) ** 5n, 'RSA modulus is a perfect power (x^5), so it is not a product of two distinct primes'],
    ['the largest prime below 2^18 times a prime', (): bigint => 262139n * modp('modp14'), 'RSA modulus is divisible by 262139, so it is not a product of two large primes'],
    ['small primes near the bound, the smallest named', (): bigint => 262139n * 262133n * 262127n * prime(2000), 'RSA modulus is divisible by 262127, so it is not a product of two large primes'],
    ['a product of two primes', (): bigint => prime(1024) * prime(1025), undefined],
  ])('%s', (_name, n, reason) => {
    expect(judge(withModulus(n()))).toBe(reason);
  });

  it('accepts what no public test reveals at this cost (documented in docs/registration.md): three primes, a factor just above 2^18, a 48-bit factor', () => {
    expect(judge(withModulus(prime(700) * prime(700) * prime(700)))).toBeUndefined();
    expect(judge(withModulus(262147n * modp('modp14')))).toBeUndefined();
    expect(judge(withModulus(prime(48) * prime(2001)))).toBeUndefined();
  });

  it('computes the Fermat residue 2^(n-1) mod n through OpenSSL exactly as BigInt does, below and above 3072 bits', () => {
    const above = prime(1700) * prime(1700);
    for (const n of [uint(base.n), modp('modp14'), modp('modp15'), above, (1n << 3217n) - 1n, above * 3n]) {
      expect(fermatResidue(n)).toBe(fermatResidueSlow(n));
    }
  });

  it('finds the smallest small factor and perfect powers by themselves', () => {
    const p = prime(1030);
    expect(smallFactor(p * 3n * 262139n)).toBe(3);
    expect(smallFactor(p * 262147n)).toBeUndefined();
    expect(perfectPower(p ** 2n)).toBe(2);
    expect(perfectPower(p ** 2n * 5n)).toBeUndefined();
    expect(perfectPower(prime(300) ** 7n)).toBe(7);
  });
});

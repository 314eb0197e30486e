/**
 * What judging a hostile key costs is bounded before any work is done (issue 14 F2): oversized
 * members are refused by their decoded lengths, so nothing is imported into OpenSSL and no bigint
 * is built. Counted, not timed: node:crypto is wrapped so every import and RSA operation is seen.
 */
import { describe, expect, it, jest } from '@jest/globals';
import type { JWK } from 'jose';

const real = await import('node:crypto');
const calls = { createPublicKey: 0, publicEncrypt: 0 };
jest.unstable_mockModule('node:crypto', () => ({
  ...real,
  default: real.default,
  createPublicKey: (...args: Parameters<typeof real.createPublicKey>) => {
    calls.createPublicKey += 1;
    return real.createPublicKey(...args);
  },
  publicEncrypt: (...args: Parameters<typeof real.publicEncrypt>) => {
    calls.publicEncrypt += 1;
    return real.publicEncrypt(...args);
  },
}));
const { keyDefect, keySetDefect } = await import('../../policies/jwk-rules.js');

const good = { ...(real.generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }) as JWK), use: 'enc', kid: 'good' };
const ec = real.generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }) as JWK;
const ones = (bytes: number): string => Buffer.alloc(bytes, 0xff).toString('base64url');

/** The judgement of `key`, and how many imports and RSA operations it took. */
function judged(key: JWK): { reason: string | undefined; imports: number; operations: number } {
  const before = { ...calls };
  const reason = keyDefect(key);
  return { reason, imports: calls.createPublicKey - before.createPublicKey, operations: calls.publicEncrypt - before.publicEncrypt };
}

describe('keyDefect refuses oversized members by their length, before importing or computing anything', () => {
  it('counts a real judgement (the counters work): a good 2048-bit key is imported and tested for primality', () => {
    expect(judged(good)).toEqual({ reason: undefined, imports: 2, operations: 1 });
  });

  it.each([
    ['a 64 KiB exponent (reading it back from OpenSSL took 540 ms; 380 KiB took 179 s)', { ...good, e: ones(64 * 1024) }, 'RSA public exponent is longer than 64 bits'],
    ['a 380 KiB exponent', { ...good, e: ones(380 * 1024) }, 'RSA public exponent is longer than 64 bits'],
    ['a 512 KiB modulus', { ...good, n: ones(512 * 1024) }, 'RSA modulus of 4194304 bits, at most 4096 supported'],
    ['a 16384-bit modulus (its primality test alone would take most of a second)', { ...good, n: ones(2048) }, 'RSA modulus of 16384 bits, at most 4096 supported'],
    ['an exponent of 100 leading zero bytes', { ...good, e: Buffer.concat([Buffer.alloc(100), Buffer.from([1, 0, 1])]).toString('base64url') }, 'e carries 100 leading zero bytes; RFC 7518 requires the fewest octets'],
    ['a 64 KiB EC coordinate', { ...ec, x: ones(64 * 1024) }, 'x is 65536 bytes, but a P-256 coordinate is exactly 32'],
    ['a 64 KiB OKP key', { kty: 'OKP', crv: 'X25519', x: ones(64 * 1024) }, 'x is 65536 bytes, but an X25519 public key is exactly 32'],
  ] as [string, JWK, string][])('%s', (_name, key, reason) => {
    expect(judged(key)).toEqual({ reason, imports: 0, operations: 0 });
  });

  it('refuses a set whose RSA keys weigh too much without judging any of them', () => {
    const before = { ...calls };
    const keys = Array.from({ length: 5 }, () => ({ ...good, n: ones(512) }));
    expect(keySetDefect(keys)).toMatch(/^the RSA keys of a JWK Set may weigh at most 40 together .*; these weigh 50$/);
    expect(calls).toEqual(before);
  });
});

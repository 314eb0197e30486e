import { generateKeyPairSync } from 'node:crypto';

import { describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';

import { generateProviderKeys, SettingsError } from '../../lib/index.js';
import { validateProviderKeys } from '../../lib/provider/keys.js';
import { exponentOneKey } from '../helpers/hostile-keys.js';

const reason = (jwks: unknown): string => {
  try {
    validateProviderKeys(jwks, 'keys.json');
  } catch (err) {
    if (err instanceof SettingsError) return err.message;
    throw err;
  }
  return 'accepted';
};

/** A private JWK made by node:crypto, which (unlike WebCrypto) makes small RSA and secp256k1 keys. */
const privateJwk = (kind: 'rsa1024' | 'secp256k1', extra: Partial<JWK>): JWK => {
  const { privateKey } = kind === 'rsa1024' ? generateKeyPairSync('rsa', { modulusLength: 1024 }) : generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  return { ...(privateKey.export({ format: 'jwk' }) as JWK), ...extra };
};

describe('the provider keys (svc.keys.file): signing and request-object decryption keys', () => {
  it('generates RSA and EC P-256 keys for each use, every kid distinct, every key private', async () => {
    const { keys } = await generateProviderKeys();
    expect(keys.map((k) => `${k.use}:${k.kty}:${k.crv ?? ''}`)).toEqual(['sig:RSA:', 'sig:EC:P-256', 'enc:RSA:', 'enc:EC:P-256']);
    expect(new Set(keys.map((k) => k.kid)).size).toBe(4);
    for (const key of keys) expect(typeof key.d).toBe('string');
    expect(reason({ keys })).toBe('accepted');
  });

  it('accepts a signing-only file (then no encrypted request objects are offered)', async () => {
    const { keys } = await generateProviderKeys();
    expect(reason({ keys: keys.filter((k) => k.use === 'sig') })).toBe('accepted');
  });

  it('refuses weak, foreign or muddled keys, naming the key and svc.keys.file', async () => {
    const { keys } = await generateProviderKeys();
    const [rsaSig, , rsaEnc, ecEnc] = keys as [JWK, JWK, JWK, JWK];
    const small = privateJwk('rsa1024', { use: 'enc', kid: 'small' });
    const k1 = privateJwk('secp256k1', { use: 'enc', kid: 'k1' });
    expect(reason({ keys: [rsaSig, small] })).toBe('invalid signing keys in keys.json (svc.keys.file): key #2 is an RSA key of 1024 bits; at least 2048 are needed');
    expect(reason({ keys: [rsaSig, k1] })).toBe('invalid signing keys in keys.json (svc.keys.file): key #2 is on curve secp256k1; EC keys need P-256, P-384 or P-521');
    expect(reason({ keys: [rsaSig, { ...rsaEnc, use: 'wrap' }] })).toBe(
      'invalid signing keys in keys.json (svc.keys.file): key #2 has use wrap; keys need use "sig" (signing) or "enc" (request object decryption)',
    );
    expect(reason({ keys: [rsaSig, { ...rsaEnc, kid: rsaSig.kid }] })).toBe(`invalid signing keys in keys.json (svc.keys.file): kid ${String(rsaSig.kid)} appears twice`);
    expect(reason({ keys: [rsaEnc, ecEnc] })).toBe('invalid signing keys in keys.json (svc.keys.file): no RSA signing key (RS256 is the default signing algorithm)');
    const { d: _d, ...publicOnly } = rsaEnc;
    expect(reason({ keys: [rsaSig, publicOnly] })).toBe('invalid signing keys in keys.json (svc.keys.file): key #2 has no private part');
  });

  it('attack: refuses a key with a member named "__proto__" (a copy by assignment would make it the key\'s prototype), "prototype" or "constructor", naming the key; honest: a kid "__proto__" is accepted', async () => {
    const [rsaSig, ecSig] = (await generateProviderKeys()).keys as [JWK, JWK];
    for (const [member, name] of [['{"__proto__":{"use":"enc"}}', '__proto__'], ['{"prototype":{}}', 'prototype'], ['{"constructor":"x"}', 'constructor']] as const) {
      const key = { ...ecSig, ...(JSON.parse(member) as object) };
      expect(reason({ keys: [rsaSig, key] })).toBe(`invalid signing keys in keys.json (svc.keys.file): key #2: a member named "${name}" is not allowed (it is no JWK parameter)`);
    }
    expect(reason({ keys: [rsaSig, { ...ecSig, kid: '__proto__' }] })).toBe('accepted');
  });

  it('names what an RSA private key given by its d alone lacks (RFC 7518 allows it; OpenSSL signs with the CRT members), not a foreign private part; honest: with them it is accepted', async () => {
    const [rsaSig, ecSig] = (await generateProviderKeys()).keys as [JWK, JWK];
    const { p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...dOnly } = rsaSig;
    expect(reason({ keys: [dOnly, ecSig] })).toBe(
      'invalid signing keys in keys.json (svc.keys.file): key #1 has d without p, q, dp, dq and qi, which the provider signs and decrypts with; export the key with all its private members',
    );
    expect(reason({ keys: [{ ...dOnly, qi: rsaSig.qi }, ecSig] })).toContain('key #1 has d without p, q, dp, dq and qi');
    expect(reason({ keys: [rsaSig, ecSig] })).toBe('accepted');
  });

  it('refuses a private part that is not its public key\'s, and a file whose only RSA key cannot sign (ID tokens would not verify, or the token endpoint fail)', async () => {
    const [[rsaSig, ecSig, rsaEnc, ecEnc], [theirRsa, theirEc]] = (await Promise.all([generateProviderKeys(), generateProviderKeys()])).map((j) => j.keys) as [JWK[], JWK[]];
    const prefix = 'invalid signing keys in keys.json (svc.keys.file): ';
    const { d, p, q, dp, dq, qi } = theirRsa as JWK;
    expect(reason({ keys: [{ ...rsaSig, d, p, q, dp, dq, qi }, ecSig] })).toBe(`${prefix}key #1 has a private part that does not belong to its public key`);
    expect(reason({ keys: [rsaSig, { ...ecSig, d: (theirEc as JWK).d }] })).toBe(`${prefix}key #2 has a private part that does not belong to its public key`);
    expect(reason({ keys: [rsaSig, { ...rsaEnc, d: (theirRsa as JWK).d }] })).toBe(`${prefix}key #2 has a private part that does not belong to its public key`);
    expect(reason({ keys: [{ ...rsaSig, key_ops: ['verify'] }, ecSig] })).toBe(`${prefix}no RSA signing key (RS256 is the default signing algorithm)`);
    const { use: _use, ...unmarked } = rsaSig as JWK;
    expect(reason({ keys: [{ ...unmarked, alg: 'RSA-OAEP' }, ecSig] })).toBe(`${prefix}no RSA signing key (RS256 is the default signing algorithm)`);
    // Long in value: zero bytes before a value only spell it otherwise (read as the value, the provider-keys-spelling test).
    const huge = 'Q'.repeat(2_000_000);
    expect(reason({ keys: [{ ...rsaSig, d: huge, p: huge }, ecSig] })).toBe(`${prefix}key #1 has a member longer than any key OpenSSL signs with`);
    expect(reason({ keys: [{ ...rsaSig, e: `B${'A'.repeat(19)}` }, ecSig] })).toBe(`${prefix}key #1 has a public exponent longer than 64 bits`);
    // Honest: keys labelled as oidc-provider reads them still sign.
    expect(reason({ keys: [{ ...rsaSig, key_ops: ['sign'] }, { ...unmarked, kid: 'plain', alg: 'PS256' }, ecSig, { ...rsaEnc, key_ops: ['decrypt', 'unwrapKey'] }, ecEnc] })).toBe('accepted');
  });

  it('attack: refuses a signing or decryption key whose key_ops WebCrypto will not import it with (every ID token would fail to sign)', async () => {
    const [rsaSig, ecSig, rsaEnc, ecEnc] = (await generateProviderKeys()).keys as [JWK, JWK, JWK, JWK];
    const prefix = 'invalid signing keys in keys.json (svc.keys.file): ';
    const refusal = (i: number, ops: string[]): string => `${prefix}key #${i} has key_ops ${JSON.stringify(ops)}; a private key is imported with exactly its key_ops, which may then hold only ${ops.includes('sign') ? '"sign"' : ops.includes('decrypt') ? '"decrypt" and "unwrapKey"' : '"deriveBits" and "deriveKey"'}`;
    expect(reason({ keys: [{ ...rsaSig, key_ops: ['sign', 'verify'] }, ecSig] })).toBe(refusal(1, ['sign', 'verify']));
    expect(reason({ keys: [rsaSig, { ...ecSig, key_ops: ['verify', 'sign'] }] })).toBe(refusal(2, ['verify', 'sign']));
    const { use: _use, ...unmarked } = rsaSig;
    expect(reason({ keys: [{ ...unmarked, key_ops: ['sign', 'decrypt'] }, ecSig] })).toBe(refusal(1, ['sign', 'decrypt']));
    expect(reason({ keys: [rsaSig, ecSig, { ...rsaEnc, key_ops: ['decrypt', 'encrypt'] }] })).toBe(refusal(3, ['decrypt', 'encrypt']));
    expect(reason({ keys: [rsaSig, ecSig, { ...ecEnc, key_ops: ['deriveBits', 'encrypt'] }] })).toBe(refusal(3, ['deriveBits', 'encrypt']));
    // Honest: what WebCrypto imports a private key with, and key_ops that never select the key at all.
    const honest = [{ ...rsaSig, key_ops: ['sign'] }, { ...ecSig, key_ops: ['sign'] }, { ...rsaEnc, key_ops: ['decrypt', 'unwrapKey'] }, { ...ecEnc, key_ops: ['deriveBits', 'deriveKey'] }];
    expect(reason({ keys: honest })).toBe('accepted');
  });

  it('attack: refuses a decryption key (or an empty key_ops) whose key_ops lack an op oidc-provider picks it by ("decrypt", "deriveBits") or jose decrypts with ("unwrapKey"): listed for encryption, it would decrypt nothing', async () => {
    const [rsaSig, ecSig, rsaEnc, ecEnc] = (await generateProviderKeys()).keys as [JWK, JWK, JWK, JWK];
    const prefix = 'invalid signing keys in keys.json (svc.keys.file): ';
    const rsaFix = 'give it key_ops ["decrypt", "unwrapKey"], or none';
    const refused = (key: JWK): string => reason({ keys: [rsaSig, ecSig, key] });
    expect(refused({ ...rsaEnc, key_ops: ['decrypt'] })).toBe(`${prefix}key #3 is a decryption key whose key_ops ["decrypt"] lack "unwrapKey": oidc-provider picks it by "decrypt" and decrypts with "unwrapKey", so request objects encrypted to it would fail; ${rsaFix}`);
    expect(refused({ ...rsaEnc, key_ops: ['unwrapKey'] })).toBe(`${prefix}key #3 is a decryption key whose key_ops ["unwrapKey"] lack "decrypt": oidc-provider picks it by "decrypt" and decrypts with "unwrapKey", so request objects encrypted to it would fail; ${rsaFix}`);
    expect(refused({ ...rsaEnc, key_ops: ['encrypt', 'wrapKey'] })).toBe(`${prefix}key #3 is a decryption key whose key_ops ["encrypt","wrapKey"] lack "decrypt" and "unwrapKey": oidc-provider picks it by "decrypt" and decrypts with "unwrapKey", so request objects encrypted to it would fail; ${rsaFix}`);
    // An encryption key labelled for signing.
    expect(refused({ ...rsaEnc, key_ops: ['sign'] })).toContain('key #3 is a decryption key whose key_ops ["sign"] lack "decrypt" and "unwrapKey"');
    expect(refused({ ...ecEnc, key_ops: ['deriveKey'] })).toBe(`${prefix}key #3 is a decryption key whose key_ops ["deriveKey"] lack "deriveBits": oidc-provider picks it by "deriveBits" and decrypts with "deriveBits", so request objects encrypted to it would fail; give it key_ops ["deriveBits"], or none`);
    const { use: _use, ...unmarked } = rsaEnc;
    expect(refused({ ...unmarked, alg: 'RSA-OAEP-256', key_ops: ['decrypt'] })).toContain('key #3 is a decryption key whose key_ops ["decrypt"] lack "unwrapKey"');
    expect(refused({ ...rsaEnc, key_ops: [] })).toBe(`${prefix}key #3 has an empty key_ops; leave it out, or name the ops the key is for`);
    // Honest: the ops that decrypt; signing keys listed to verify with only (a key kept for tokens it signed).
    const { use: _u, ...plainSig } = rsaSig;
    for (const key of [{ ...rsaEnc, key_ops: ['decrypt', 'unwrapKey'] }, { ...ecEnc, key_ops: ['deriveBits'] }, { ...ecEnc, key_ops: ['deriveBits', 'deriveKey'] }, { ...plainSig, kid: 'verify-only', key_ops: ['verify'] }, { ...rsaSig, kid: 'sig-verify-only', key_ops: ['verify'] }]) {
      expect({ ops: key.key_ops, outcome: refused(key) }).toEqual({ ops: key.key_ops, outcome: 'accepted' });
    }
  });

  it('attack: refuses a key whose use "sig" and key_ops name decryption (RFC 7517 4.3: they must agree), published as one to sign with and to encrypt to; honest: use "sig" with "sign", use "enc" with the ops that decrypt', async () => {
    const [rsaSig, ecSig, rsaEnc, ecEnc] = (await generateProviderKeys()).keys as [JWK, JWK, JWK, JWK];
    const prefix = 'invalid signing keys in keys.json (svc.keys.file): ';
    const refused = (key: JWK): string => reason({ keys: [rsaSig, ecSig, key] });
    for (const [key, ops] of [[rsaEnc, ['decrypt', 'unwrapKey']], [ecEnc, ['deriveBits']], [ecEnc, ['deriveBits', 'deriveKey']]] as const) {
      expect(refused({ ...key, use: 'sig', key_ops: [...ops] })).toBe(`${prefix}key #3 has use "sig" and key_ops ${JSON.stringify(ops)}, which name decryption (RFC 7517 4.3: the two must agree); leave one of them out`);
    }
    expect(refused({ ...rsaEnc, key_ops: ['decrypt', 'unwrapKey'] })).toBe('accepted');
    expect(reason({ keys: [{ ...rsaSig, key_ops: ['sign'] }, { ...ecSig, key_ops: ['sign'] }] })).toBe('accepted');
  });

  it('refuses an x5c that is not a list of certificates (a chain pasted as one string), naming the key, where oidc-provider stopped the start and a reload with a bare "Error"; honest: a list of base64 certificates is accepted', async () => {
    const [rsaSig, ecSig, rsaEnc] = (await generateProviderKeys()).keys as [JWK, JWK, JWK];
    const prefix = 'invalid signing keys in keys.json (svc.keys.file): ';
    for (const x5c of ['MIIBszCCAVmgAwIBAgIU', [], [5], ['']]) {
      expect({ x5c, outcome: reason({ keys: [rsaSig, ecSig, { ...rsaEnc, x5c } as JWK] }) }).toEqual({ x5c, outcome: `${prefix}key #3 has an x5c that is not a list of certificates (base64 DER strings)` });
    }
    expect(reason({ keys: [rsaSig, ecSig, { ...rsaEnc, x5c: ['MIIBszCCAVmgAwIBAgIU'] }] })).toBe('accepted');
  });

  it('refuses an RSA key whose public exponent is 1 (every signature forgeable, request objects readable) or 3, as it refuses such client keys', async () => {
    const { keys } = await generateProviderKeys();
    const [rsaSig, ecSig, rsaEnc] = keys as [JWK, JWK, JWK];
    const prefix = 'invalid signing keys in keys.json (svc.keys.file): ';
    const exportOf = (publicExponent: number): JWK => generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent }).privateKey.export({ format: 'jwk' });
    const one = { ...exponentOneKey(rsaSig), kid: 'e1' };
    expect(reason({ keys: [one, ecSig] })).toBe(`${prefix}key #1 has an unsafe public exponent (RSA public exponent 1 is below 65537)`);
    expect(reason({ keys: [rsaSig, ecSig, { ...exponentOneKey(rsaEnc), kid: 'e1-enc' }] })).toBe(`${prefix}key #3 has an unsafe public exponent (RSA public exponent 1 is below 65537)`);
    expect(reason({ keys: [{ ...exportOf(3), use: 'sig', kid: 'e3' }, ecSig] })).toBe(`${prefix}key #1 has an unsafe public exponent (RSA public exponent 3 is below 65537)`);
    // Honest: 65537 (every tool's default) and a larger odd exponent.
    expect(reason({ keys: [{ ...exportOf(65537), use: 'sig', kid: 'e65537' }, { ...exportOf(65539), use: 'enc', kid: 'e65539' }, ecSig] })).toBe('accepted');
  });
});

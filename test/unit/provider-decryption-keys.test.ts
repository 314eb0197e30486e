import { describe, expect, it } from '@jest/globals';
import { CompactEncrypt, importJWK, type JWK } from 'jose';

import { generatePrivateJwk } from '../../lib/provider/keys.js';
import { decryptedWithKeys } from '../../lib/provider/nested-json.js';

/*
 * svc-connect opens encrypted request objects and `id_token_hint`s itself (to judge them, and to hand oidc-provider the
 * signed hint inside): only with the keys oidc-provider would decrypt with, never with a key labelled for signing or
 * for another key-management alg (the published JWKS tells relying parties not to encrypt to those).
 */
const plaintext = 'header.payload.signature';

async function encryptedTo(key: JWK, alg: string): Promise<string> {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, alg: _alg, use: _use, key_ops: _ops, ...members } = key;
  return new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader({ alg, enc: 'A256GCM', kid: key.kid }).encrypt(await importJWK(members, alg));
}

describe('the provider keys svc-connect decrypts with', () => {
  it('attack: a JWE to an RSA key labelled "alg": "RS256" (a signing key, without use) is not decrypted with it', async () => {
    const { use: _use, ...key } = await generatePrivateJwk('RS256', { modulusLength: 2048 });
    const signing = { ...key, alg: 'RS256' };
    expect(await decryptedWithKeys(await encryptedTo(signing, 'RSA-OAEP'), [signing])).toBeUndefined();
    expect(await decryptedWithKeys(await encryptedTo(signing, 'RSA-OAEP-256'), [signing])).toBeUndefined();
  });

  it('attack: a JWE under RSA-OAEP to a key labelled "alg": "RSA-OAEP-256" is not decrypted with it', async () => {
    const key = { ...(await generatePrivateJwk('RSA-OAEP-256', { modulusLength: 2048 }, 'enc')), alg: 'RSA-OAEP-256' };
    expect(await decryptedWithKeys(await encryptedTo(key, 'RSA-OAEP'), [key])).toBeUndefined();
  });

  it('honest: a JWE to an encryption key (use "enc", with or without its alg, or no use at all) is decrypted', async () => {
    const enc = await generatePrivateJwk('RSA-OAEP-256', { modulusLength: 2048 }, 'enc');
    const { use: _use, ...unlabelled } = enc;
    for (const key of [enc, { ...enc, alg: 'RSA-OAEP-256' }, unlabelled]) expect(await decryptedWithKeys(await encryptedTo(key, 'RSA-OAEP-256'), [key])).toBe(plaintext);
    const ec = { ...(await generatePrivateJwk('ECDH-ES', { crv: 'P-256' }, 'enc')), alg: 'ECDH-ES+A128KW' };
    expect(await decryptedWithKeys(await encryptedTo(ec, 'ECDH-ES+A128KW'), [ec])).toBe(plaintext);
  });
});

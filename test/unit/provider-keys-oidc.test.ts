import { describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';

import { createMemoryStore, createProvider, generateProviderKeys, loadSettings, SettingsError, silentLogger } from '../../lib/index.js';
import { generatePrivateJwk, validateProviderKeys } from '../../lib/provider/keys.js';

/*
 * The keys check judges a file as oidc-provider will use it: a key it would refuse to load, or a file with no key it
 * signs RS256 with (the default ID token algorithm), is refused with a SettingsError naming the key, instead of a
 * provider that cannot start or starts with no client able to get an ID token.
 */

const reason = (jwks: unknown): string => {
  try {
    validateProviderKeys(jwks, 'keys.json');
  } catch (err) {
    if (err instanceof SettingsError) return err.message;
    return `escaped as ${(err as Error).constructor.name}: ${(err as Error).message}`;
  }
  return 'accepted';
};

const client = { client_id: 'rp', client_secret: 'a-client-secret-that-is-long-enough-for-the-rules-000', redirect_uris: ['https://rp.example/cb'] };

/** What building the provider with `keys` comes to: refused by the check, failed otherwise, or the default client's fate. */
async function outcome(keys: JWK[]): Promise<string> {
  let provider;
  try {
    provider = await createProvider(loadSettings({ env: {}, properties: {} }), { jwks: { keys }, store: createMemoryStore(), logger: silentLogger, clients: [client] });
  } catch (err) {
    return err instanceof SettingsError ? 'refused by the keys check' : `start fails with ${(err as Error).constructor.name}: ${(err as Error).message}`;
  }
  try {
    await provider.Client.find('rp');
    return 'client usable';
  } catch (err) {
    return `client unusable: ${(err as { error_description?: string }).error_description ?? String(err)}`;
  }
}

describe('provider keys as oidc-provider uses them: what the keys check refuses, oidc-provider would refuse or sign nothing with', () => {
  it('refuses a file whose only RSA key has use "sig" with an encryption alg, or a non-RSA alg (oidc-provider then refuses to start)', async () => {
    const [rsaSig, ecSig] = (await generateProviderKeys()).keys as [JWK, JWK];
    const { use: _use, ...unmarked } = rsaSig;
    for (const rsa of [{ ...rsaSig, alg: 'RSA-OAEP' }, { ...unmarked, alg: 'ES256' }]) {
      const keys = [rsa, ecSig];
      // oidc-provider would throw "jwks.keys[0] is of no use given the other configuration" (a plain Error).
      expect(await outcome(keys)).toBe('refused by the keys check');
      expect(reason({ keys })).toBe(`invalid signing keys in keys.json (svc.keys.file): key #1 has alg ${String(rsa.alg)}, which does not fit a${rsa.use ? ' use "sig"' : 'n'} RSA key`);
    }
  });

  it('refuses a file whose only RSA key is labelled for another RSA alg (no RS256 key: every client defaulting to RS256 is invalid)', async () => {
    const [rsaSig, ecSig] = (await generateProviderKeys()).keys as [JWK, JWK];
    const { use: _use, ...unmarked } = rsaSig;
    expect(await outcome([rsaSig, ecSig])).toBe('client usable'); // the harness: generated keys give a usable client
    for (const rsa of [{ ...unmarked, alg: 'PS256' }, { ...rsaSig, alg: 'RS384' }]) {
      const keys = [rsa, ecSig];
      expect(await outcome(keys)).not.toMatch(/^client unusable/);
      expect(reason({ keys })).toBe('invalid signing keys in keys.json (svc.keys.file): no RSA signing key (RS256 is the default signing algorithm)');
    }
  });

  it('accepts keys labelled for algorithms the provider does not offer (RS384, PS512, ES384) beside the RS256 key: oidc-provider starts and leaves them unused', async () => {
    const keys = (await generateProviderKeys()).keys;
    const extra = [
      { ...(await generatePrivateJwk('RS384', { modulusLength: 2048 }, 'sig')), alg: 'RS384' },
      { ...(await generatePrivateJwk('PS512', { modulusLength: 2048 }, 'sig')), alg: 'PS512' },
      { ...(await generatePrivateJwk('ES384', { crv: 'P-384' }, 'sig')), alg: 'ES384' },
    ];
    expect(reason({ keys: [...keys, ...extra] })).toBe('accepted');
    expect(await outcome([...keys, ...extra])).toBe('client usable');
  });
});

describe('provider keys as oidc-provider uses them: what the keys check refuses, oidc-provider would refuse or sign nothing with', () => {
  it('answers an RSA key_ops that is not an array with a SettingsError naming svc.keys.file', async () => {
    const [rsaSig, ecSig] = (await generateProviderKeys()).keys as [JWK, JWK];
    const { use: _use, ...unmarked } = rsaSig;
    for (const rsa of [{ ...unmarked, key_ops: 5 }, { ...unmarked, key_ops: null }, { ...rsaSig, key_ops: {} }]) {
      expect(reason({ keys: [rsa, ecSig] })).toMatch(/^invalid signing keys in keys\.json \(svc\.keys\.file\): /);
    }
  });
});

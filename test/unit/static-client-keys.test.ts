import { generatePrimeSync } from 'node:crypto';

import { describe, expect, it } from '@jest/globals';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Adapter, ClientMetadata } from 'oidc-provider';

import { ClaimRegistry, createConfiguration, loadSettings, type ConfigurationParts } from '../../lib/index.js';
import { b64uint } from '../helpers/hostile-keys.js';
import { testProviderKeys } from '../helpers/provider-keys.js';

describe("createConfiguration (the configuration face, C1) judges its static clients' inline keys as registration does (C6)", () => {
  const settings = loadSettings({ env: {}, properties: { 'svc.base-url': 'http://127.0.0.1:1' } });
  const partsWith = async (clients: ClientMetadata[]): Promise<ConfigurationParts> => ({
    jwks: await testProviderKeys(),
    cookieKeys: ['cookie-key-for-tests-0123456789abcdef'],
    pairwiseKey: 'pairwise-key-for-tests-0123456789abcdef',
    adapter: () => ({}) as Adapter,
    findAccount: async () => undefined,
    registry: new ClaimRegistry([]),
    clients,
  });
  const secret = 'static-rp-secret-that-is-long-enough-0123456789';

  it('attack: a static client given to createConfiguration with a prime-modulus encryption key is refused, naming the client and the rule', async () => {
    const prime: JWK = { kty: 'RSA', n: b64uint(generatePrimeSync(2048, { bigint: true })), e: 'AQAB', use: 'enc', kid: 'prime' };
    const client: ClientMetadata = { client_id: 'prime-rp', client_secret: secret, redirect_uris: ['https://prime.example/cb'], id_token_encrypted_response_alg: 'RSA-OAEP', jwks: { keys: [prime] } };
    const parts = await partsWith([client]);
    expect(() => createConfiguration(settings, parts)).toThrow(/^clients: client "prime-rp": jwks: key #1 \("prime"\): RSA modulus is a probable prime/);
  });

  it('honest: a seed-labelled EC key (key_ops ["encrypt"]) is held as registration stores it', async () => {
    const { publicKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), key_ops: ['encrypt'], kid: 'seed-ec' };
    const client: ClientMetadata = { client_id: 'seed-rp', client_secret: secret, redirect_uris: ['https://seed.example/cb'], id_token_encrypted_response_alg: 'ECDH-ES+A256KW', jwks: { keys: [jwk] } };
    const configured = createConfiguration(settings, await partsWith([client]));
    const [held] = configured.clients ?? [];
    expect(held?.jwks?.keys).toEqual([expect.objectContaining({ kid: 'seed-ec', use: 'enc' })]);
    expect(held?.jwks?.keys[0]).not.toHaveProperty('key_ops');
  });

  it('attack: a static client whose redirect URI hides its host behind a backslash is refused, naming the client and the URI', async () => {
    const client: ClientMetadata = { client_id: 'hidden-rp', client_secret: secret, redirect_uris: ['https://seed.example/cb', 'https://seed.example\\@evil.example/cb'] };
    const parts = await partsWith([client]);
    expect(() => createConfiguration(settings, parts)).toThrow(/^clients: client "hidden-rp": redirect_uris\[1\] holds a backslash/);
  });

  it('honest: a static client with default_acr_values is held without them, as registration stores it (acr is never issued)', async () => {
    const client: ClientMetadata = { client_id: 'acr-rp', client_secret: secret, redirect_uris: ['https://acr.example/cb'], default_acr_values: ['urn:mace:incommon:iap:silver'] };
    const [held] = createConfiguration(settings, await partsWith([client])).clients ?? [];
    expect(held).toMatchObject({ client_id: 'acr-rp', redirect_uris: ['https://acr.example/cb'] });
    expect(held).not.toHaveProperty('default_acr_values');
  });

  it('attack: a static client whose default_acr_values is not an array of strings stops the start, naming the client and the field', async () => {
    const client: ClientMetadata = { client_id: 'acr-rp', client_secret: secret, redirect_uris: ['https://acr.example/cb'], default_acr_values: 'urn:mace:incommon:iap:silver' as unknown as string[] };
    const parts = await partsWith([client]);
    expect(() => createConfiguration(settings, parts)).toThrow(/^clients: client "acr-rp": default_acr_values: must be an array of strings$/);
  });
});

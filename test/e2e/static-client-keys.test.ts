import { generateKeyPairSync, generatePrimeSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it, jest } from '@jest/globals';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { createApp, loadSettings, silentLogger } from '../../lib/index.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { confidentialClient, startApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { b64uint } from '../helpers/hostile-keys.js';
import { testProviderKeys } from '../helpers/provider-keys.js';
import { rawIdToken, recordingAnswers, type RawAnswers } from '../helpers/raw-answers.js';

describe("statically provisioned clients' keys are judged as registration judges them (C6)", () => {
  const secret = 'static-rp-secret-that-is-long-enough-0123456789';
  const settingsFor = (properties: Record<string, string> = {}) => loadSettings({ env: {}, properties: { 'svc.base-url': 'http://127.0.0.1:1', ...properties } });
  const start = async (clients: ClientMetadata[], properties: Record<string, string> = {}): Promise<void> => {
    const app = await createApp(settingsFor(properties), { logger: silentLogger, jwks: await testProviderKeys(), clients });
    await app.svc.close();
  };

  it('a static client whose encryption key has a prime modulus (anyone can decrypt to it) stops the start, naming the client and the rule', async () => {
    const prime: JWK = { kty: 'RSA', n: b64uint(generatePrimeSync(2048, { bigint: true })), e: 'AQAB', use: 'enc', kid: 'prime' };
    const client: ClientMetadata = { client_id: 'prime-rp', client_secret: secret, redirect_uris: ['https://prime.example/cb'], id_token_encrypted_response_alg: 'RSA-OAEP', jwks: { keys: [prime] } };
    await expect(start([client])).rejects.toThrow(/^options\.clients: client "prime-rp": jwks: key #1 \("prime"\): RSA modulus is a probable prime/);
  });

  it('so does one from svc.clients.file, and one with a 1024-bit key, naming svc.clients.file', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const dir = mkdtempSync(join(tmpdir(), 'svc-static-keys-'));
    try {
      const file = join(dir, 'clients.json');
      const client = { client_id: 'weak-rp', client_secret: secret, redirect_uris: ['https://weak.example/cb'], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), use: 'enc', kid: 'weak' }] } };
      writeFileSync(file, JSON.stringify([client]));
      const refusal = start([], { 'svc.clients.file': file });
      await expect(refusal).rejects.toThrow(/^svc\.clients\.file: client "weak-rp": jwks: key #1 \("weak"\): .*1024/);
      await expect(refusal).rejects.toMatchObject({ name: 'SettingsError', properties: ['svc.clients.file'] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a static client asking for encryption without any key stops the start instead of failing after she consented', async () => {
    const client: ClientMetadata = { client_id: 'keyless-rp', client_secret: secret, redirect_uris: ['https://keyless.example/cb'], id_token_encrypted_response_alg: 'RSA-OAEP-256' };
    await expect(start([client])).rejects.toThrow(/^options\.clients: client "keyless-rp": jwks: id_token_encrypted_response_alg needs the client's public keys/);
  });

  it("honest: a static client with a seed-labelled EC key (key_ops [\"encrypt\"]) is served, its ID token encrypted to that key carrying her e-mail", async () => {
    const { publicKey, privateKey } = await generateKeyPair('ECDH-ES+A256KW', { crv: 'P-256', extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), key_ops: ['encrypt'], kid: 'seed-ec' };
    const client = confidentialClient({ client_id: 'seed-rp', redirect_uris: ['https://seed.example/cb'], id_token_encrypted_response_alg: 'ECDH-ES+A256KW', jwks: { keys: [jwk] } });
    // oidc-provider clones static clients with structuredClone, which in a Jest context returns objects of the outer
    // realm that its plain-object check of a JWK Set refuses (a real process has one realm): a JSON round trip clones
    // in this realm while the provider takes its static clients in.
    const cloning = jest.spyOn(globalThis, 'structuredClone').mockImplementation((value) => JSON.parse(JSON.stringify(value)) as unknown);
    const running = await startApp({ claimModules: createDemoClaimModules(), clients: [client] }).finally(() => cloning.mockRestore());
    try {
      const seen: RawAnswers = {};
      const flow = await runCodeFlow(running.issuer, client, { scope: 'openid email', skipUserinfo: true, configure: recordingAnswers(seen, { privateKey, jwk }) });
      expect(rawIdToken(seen).split('.')).toHaveLength(5);
      expect(flow.claims.email).toBe('erika.mustermann@example.com');
    } finally {
      await running.close();
    }
  });
});


import { generateKeyPairSync, generatePrimeSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { createApp, loadSettings, silentLogger } from '../../lib/index.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { confidentialClient, pairwiseSubOf, startApp } from '../helpers/app.js';
import { registerClient, updateRegistration } from '../helpers/clients.js';
import { startDocServer, trustForOutboundFetch, type HttpsDocServer } from '../helpers/registration.js';
import { runCodeFlow } from '../helpers/flow.js';
import { testProviderKeys } from '../helpers/provider-keys.js';
import { rawIdToken, recordingAnswers, type RawAnswers } from '../helpers/raw-answers.js';
import { appPerSuite } from '../helpers/suite-app.js';

describe('pairwise subjects of native apps that redirect to the loopback interface (C12.12)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });
  const nativeApp = (redirect: string) => registerClient(running, 'plain', { redirect_uris: [redirect], application_type: 'native' });
  const subOf = async (client: ClientMetadata): Promise<string> => (await runCodeFlow(running.issuer, client, { skipUserinfo: true })).claims.sub;

  it('two unrelated native apps that both redirect to 127.0.0.1, localhost or [::1] get unrelated subs for one person', async () => {
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '127.0.0.1:8400']) {
      const one = await nativeApp(`http://${host}/callback`);
      const other = await nativeApp(`http://${host}/oauth2/redirect`);
      expect([one.metadata.subject_type, other.metadata.subject_type]).toEqual(['pairwise', 'pairwise']);
      const subs = [await subOf(one.metadata), await subOf(other.metadata)];
      expect(subs[0]).not.toBe(subs[1]);
      expect(subs).not.toContain('demo-0001');
      expect(subs).not.toContain(pairwiseSubOf(`http://${host}/`));
    }
  });

  it('honest: one native app keeps its sub across sign-ins and an update of its registration', async () => {
    const app = await nativeApp('http://127.0.0.1/callback');
    const first = await subOf(app.metadata);
    expect(await subOf(app.metadata)).toBe(first);
    const updated = await updateRegistration(app, { client_name: 'renamed', redirect_uris: ['http://127.0.0.1/callback', 'http://127.0.0.1/other'] });
    expect(updated.metadata.subject_type).toBe('pairwise');
    expect(await subOf(updated.metadata)).toBe(first);
  });

  it('honest: a web client keeps the host of its redirect URI as its sector, and a native app on https too', async () => {
    const web = await registerClient(running, 'plain', { redirect_uris: ['https://rp.example/cb'] });
    const claimed = await registerClient(running, 'plain', { redirect_uris: ['https://app.rp.example/cb'], application_type: 'native' });
    expect(await subOf(web.metadata)).toBe(pairwiseSubOf('https://rp.example/cb'));
    expect(await subOf(claimed.metadata)).toBe(pairwiseSubOf('https://app.rp.example/cb'));
  });
});

describe('sector_identifier_uri documents that merely share a host (OpenID Connect Core 8.1 takes the host as the sector)', () => {
  const running = appPerSuite({ properties: { 'svc.fetch.allow-private-network': true } });
  let docs: HttpsDocServer;
  let distrust = (): void => undefined;
  const documents = new Map<string, string[]>();
  beforeAll(async () => {
    docs = await startDocServer('https');
    distrust = trustForOutboundFetch(docs.ca);
    docs.handler = (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(documents.get(req.url ?? '') ?? []));
    };
  });
  afterAll(async () => {
    distrust();
    await docs.close();
  });
  const withSector = async (redirect: string, path: string) => {
    documents.set(path, [...(documents.get(path) ?? []), redirect]);
    return registerClient(running, 'plain', { redirect_uris: [redirect], sector_identifier_uri: `${docs.url}${path}` });
  };
  const subOf = async (client: ClientMetadata): Promise<string> => (await runCodeFlow(running.issuer, client, { skipUserinfo: true })).claims.sub;

  // Left failing: a product decision. A relying party that keeps its sector document on a host others can publish on
  // (raw.githubusercontent.com, a storage bucket's host) shares its sector with whoever publishes a document of their
  // own there, listing only their own redirect URIs. Taking the document's URL rather than its host as the sector
  // closes it, departing from OpenID Connect Core 8.1 (the sub derivation is the provider's own business).
  it('a relying party cannot join another\'s sector by publishing its own sector document on the host where the other keeps its one', async () => {
    const honest = await withSector('https://honest.example/cb', '/honest-rp/sector.json');
    const stranger = await withSector('https://stranger.example/cb', '/stranger/sector.json');
    expect(await subOf(stranger.metadata)).not.toBe(await subOf(honest.metadata));
  });

  it('honest: clients naming one sector document share one sector across hosts', async () => {
    const web = await withSector('https://www.group.example/cb', '/group/sector.json');
    const app = await withSector('https://app.group.example/cb', '/group/sector.json');
    expect(await subOf(app.metadata)).toBe(await subOf(web.metadata));
  });
});

const modPow = (base: bigint, exponent: bigint, modulus: bigint): bigint => {
  let [result, b, e] = [1n, base % modulus, exponent];
  for (; e > 0n; e >>= 1n, b = (b * b) % modulus) if (e & 1n) result = (result * b) % modulus;
  return result;
};

/** An RSA public key whose modulus is a 2048-bit prime p: whoever holds it decrypts with d = e⁻¹ mod (p − 1). */
function primeModulusKey(): { jwk: JWK; readsWhatIsSentToIt: () => boolean } {
  const p = generatePrimeSync(2048, { bigint: true });
  const e = 65537n;
  const d = inverse(e, p - 1n);
  const hex = p.toString(16);
  const n = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex').toString('base64url');
  const readsWhatIsSentToIt = (): boolean => {
    const m = BigInt(`0x${randomBytes(200).toString('hex')}`);
    return modPow(modPow(m, e, p), d, p) === m;
  };
  return { jwk: { kty: 'RSA', n, e: 'AQAB', use: 'enc', kid: 'prime' }, readsWhatIsSentToIt };
}

function inverse(a: bigint, m: bigint): bigint {
  let [r0, r1, s0, s1] = [a % m, m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1, s0, s1] = [r1, r0 - q * r1, s1, s0 - q * s1];
  }
  return ((s0 % m) + m) % m;
}

describe("statically provisioned clients' keys are judged as registration judges them (C6)", () => {
  const secret = 'static-rp-secret-that-is-long-enough-0123456789';
  const settingsFor = (properties: Record<string, string> = {}) => loadSettings({ env: {}, properties: { 'svc.base-url': 'http://127.0.0.1:1', ...properties } });
  const start = async (clients: ClientMetadata[], properties: Record<string, string> = {}): Promise<void> => {
    const app = await createApp(settingsFor(properties), { logger: silentLogger, jwks: await testProviderKeys(), clients });
    await app.svc.close();
  };

  it('a static client whose encryption key has a prime modulus (anyone can decrypt to it) stops the start, naming the client and the rule', async () => {
    const prime = primeModulusKey();
    expect(prime.readsWhatIsSentToIt()).toBe(true);
    const client: ClientMetadata = { client_id: 'prime-rp', client_secret: secret, redirect_uris: ['https://prime.example/cb'], id_token_encrypted_response_alg: 'RSA-OAEP', jwks: { keys: [prime.jwk] } };
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


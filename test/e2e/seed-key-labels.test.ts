import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { compactDecrypt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';
import { rawIdToken, recordingAnswers, type RawAnswers } from '../helpers/raw-answers.js';
import { register, startDocServer, type DocServer } from '../helpers/registration.js';

const REDIRECT = 'https://rp.example/cb';
const REFRESH_FAILED = 'client JSON Web Key Set failed to be refreshed';

/** A relying party's encryption key pair, its public JWK labelled only `key_ops: ["encrypt"]` (spec 2.4 rule 2, no `use`). */
async function seedLabelledKey(alg: 'RSA-OAEP-256' | 'ECDH-ES', kid: string): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, ...(alg === 'ECDH-ES' ? { crv: 'P-256' } : {}) });
  return { privateKey, jwk: { ...(await exportJWK(publicKey)), key_ops: ['encrypt'], kid } };
}

describe('keys labelled as the seed spec labels them (C6.2, issue 23 item 3)', () => {
  let running: RunningApp;
  let docs: DocServer;
  const logs = capturingLogger();
  const sets = new Map<string, JWK[]>();

  beforeAll(async () => {
    docs = await startDocServer();
    docs.handler = (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ keys: sets.get(req.url ?? '') ?? [] }));
    };
    running = await startApp({ properties: { 'svc.fetch.allow-private-network': true }, logger: logs.logger, claimModules: createDemoClaimModules() });
  });
  afterAll(async () => {
    await running.close();
    await docs.close();
  });

  /** A code flow whose ID token and UserInfo come encrypted; both decrypt with `key` alone. */
  async function encryptedFlow(client: ClientMetadata, key: { privateKey: CryptoKey; jwk: JWK }, alg: string) {
    const seen: RawAnswers = {};
    const result = await runCodeFlow(running.issuer, client, {
      scope: 'openid email',
      // Each claim travels once (C5): email in UserInfo as asked, email_verified in the ID token by scope.
      params: { claims: JSON.stringify({ userinfo: { email: null } }) },
      configure: recordingAnswers(seen, key),
    });
    for (const jwe of [rawIdToken(seen), seen.userinfo?.body]) {
      expect(decodeProtectedHeader(String(jwe))).toMatchObject({ alg, kid: key.jwk.kid });
      await expect(compactDecrypt(String(jwe), key.privateKey)).resolves.toBeDefined();
    }
    expect(result.claims.sub).toEqual(expect.any(String));
    expect(result.userinfo.email).toBe('erika.mustermann@example.com');
    expect(result.claims.email_verified).toBe(true);
  }

  const cases: ['RSA-OAEP-256' | 'ECDH-ES', Partial<JWK>][] = [
    ['RSA-OAEP-256', { key_ops: ['encrypt', 'wrapKey'] }],
    ['ECDH-ES', { use: 'enc' }],
  ];

  it.each(cases)('inline jwks, %s: 201 with the key stored normalised, and a full flow decrypts with that key', async (alg, stored) => {
    const key = await seedLabelledKey(alg, `inline-${alg}`);
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: [REDIRECT], id_token_encrypted_response_alg: alg, userinfo_encrypted_response_alg: alg, jwks: { keys: [key.jwk] } }, token);
    expect([res.status, res.body.error_description]).toEqual([201, undefined]);
    const { key_ops: _ops, ...bare } = key.jwk;
    // RFC 7591 3.2.1: the response shows what was stored.
    expect((res.body.jwks as { keys: JWK[] }).keys).toEqual([{ ...bare, ...stored }]);
    await encryptedFlow(res.body as unknown as ClientMetadata, key, alg);
  });

  it.each(cases)('jwks_uri, %s: 201, and every fetch normalises the key without the client seeing it', async (alg) => {
    // Only this test's lines: the swapped set of another test may have been refused before it.
    const from = logs.lines.length;
    const key = await seedLabelledKey(alg, `uri-${alg}`);
    const where = `/seed-${alg}`;
    sets.set(where, [key.jwk]);
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: [REDIRECT], id_token_encrypted_response_alg: alg, userinfo_encrypted_response_alg: alg, jwks_uri: `${docs.url}${where}` }, token);
    expect([res.status, res.body.error_description, res.body.jwks]).toEqual([201, undefined, undefined]);
    await encryptedFlow(res.body as unknown as ClientMetadata, key, alg);
    expect(logs.lines.slice(from).filter((l) => l.includes('client_keys_refused'))).toEqual([]);
  });

  it('a registered jwks_uri set swapped to its key without use or key_ops: nothing is encrypted to it (the one judgement drops it at refetch too)', async () => {
    const key = await seedLabelledKey('RSA-OAEP-256', 'swapped');
    const where = '/swapped';
    sets.set(where, [key.jwk]);
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: [REDIRECT], id_token_encrypted_response_alg: 'RSA-OAEP-256', userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: `${docs.url}${where}` }, token);
    expect(res.status).toBe(201);
    const { key_ops: _ops, ...unlabelled } = key.jwk;
    sets.set(where, [unlabelled]);
    const seen: RawAnswers = {};
    const failed = await runCodeFlow(running.issuer, res.body as unknown as ClientMetadata, { configure: recordingAnswers(seen) }).catch((e: unknown) => e as Error);
    expect(failed).toBeInstanceOf(Error);
    expect(seen.token?.status).toBe(400);
    expect(JSON.parse(String(seen.token?.body))).toEqual({
      error: 'invalid_client_metadata',
      error_description: `${REFRESH_FAILED}: jwks_uri ${docs.url}${where}: no key passed the key rules (key #1 ("swapped"): has neither use nor key_ops, and the client asks for encryption)`,
    });
    expect(seen.token?.body).not.toContain('id_token');
  });
});

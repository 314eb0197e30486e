import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { compactDecrypt, decodeProtectedHeader, type JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, pkcePair, redeemCode, signIn } from '../helpers/flow.js';
import { b64uint } from '../helpers/hostile-keys.js';
import { encryptionKey, manage, register } from '../helpers/registration.js';

const ALG = 'RSA-OAEP-256';

/**
 * A client's record as a version with fewer key rules stored it (one that took e = 1, or kept RSA keys labelled
 * key_ops ["encrypt"] as sent): the provider holds it to today's rules when it reads it, as it does a jwks_uri set.
 */
describe('inline keys of a stored client are judged when the provider reads it (C6: never encrypted to a key that has not passed the rules)', () => {
  let running: RunningApp;
  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
  });
  afterAll(async () => running.close());

  /** Registers a client asking for encrypted ID tokens, then rewrites its stored `jwks` to `keys`. */
  async function storedWith(keys: JWK[], good: JWK): Promise<ClientMetadata> {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: ['https://rp.example/cb'], id_token_encrypted_response_alg: ALG, jwks: { keys: [good] } }, token);
    expect(res.status).toBe(201);
    const client = res.body as unknown as ClientMetadata;
    const records = running.app.svc.store.adapter('Client');
    const record = await records.find(String(client.client_id));
    await records.upsert(String(client.client_id), { ...record, jwks: { keys } }, Infinity);
    return client;
  }

  async function tokenAnswer(client: ClientMetadata) {
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, client, { scope: 'openid email', code_challenge: challenge }));
    return redeemCode(running.issuer, client, callbackUrl.searchParams.get('code') as string, verifier);
  }

  it('attack: a stored e = 1 key (the ID token readable without any private key) is never encrypted to: 400, no ID token', async () => {
    const good = await encryptionKey(ALG, { kid: 'rp' });
    const client = await storedWith([{ ...good.jwk, e: b64uint(1n) }], good.jwk);
    const answer = await tokenAnswer(client);
    expect({ status: answer.status, body: answer.body }).toStrictEqual({
      status: 400,
      body: {
        error: 'invalid_client_metadata',
        error_description: `no suitable encryption key found (${ALG}): jwks holds no key for id_token_encrypted_response_alg ${ALG}: it needs an RSA public key with use "enc" or key_ops containing "encrypt", and no alg other than ${ALG}`,
      },
    });
  });

  it.each<[string, (good: JWK) => JWK]>([
    ['an e = 1 key', (good) => ({ ...good, kid: 'weak', e: b64uint(1n) })],
    ['a key with a member named "constructor" (oidc-provider refused the whole set: every request of the client failed)', (good) => ({ ...good, kid: 'weak', ...(JSON.parse('{"constructor":"x"}') as object) })],
    ['a key with a member named "__proto__" holding a private d (registered before such keys were refused)', (good) => ({ ...good, kid: 'weak', ...(JSON.parse('{"__proto__":{"d":"AAAA"}}') as object) })],
  ])('honest: %s stored beside a good one is left out; the ID token is encrypted to the good key', async (_name, refused) => {
    const good = await encryptionKey(ALG, { kid: 'good' });
    const client = await storedWith([refused(good.jwk), good.jwk], good.jwk);
    const answer = await tokenAnswer(client);
    expect([answer.status, answer.body.error_description]).toEqual([200, undefined]);
    const idToken = String(answer.body.id_token);
    expect(decodeProtectedHeader(idToken)).toMatchObject({ alg: ALG, kid: 'good' });
    const inner = new TextDecoder().decode((await compactDecrypt(idToken, good.privateKey)).plaintext);
    expect(JSON.parse(Buffer.from(String(inner.split('.')[1]), 'base64url').toString())).toMatchObject({ email: 'erika.mustermann@example.com' });
  });

  it('honest: a client registered today (RSA labelled key_ops ["encrypt"], P-256 with key_ops ["deriveKey"], an unusual kid) reads back on its registration_client_uri the keys registration answered', async () => {
    const rsa = await encryptionKey(ALG, { kid: 'enc 2024/06 #1 (ключ)', use: undefined, key_ops: ['encrypt'] });
    const ec = await encryptionKey('ECDH-ES', { kid: 'ec', use: undefined, key_ops: ['deriveKey'] });
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: ['https://rp.example/cb'], id_token_encrypted_response_alg: ALG, jwks: { keys: [rsa.jwk, ec.jwk] } }, token);
    expect(res.status).toBe(201);
    const read = await manage(String(res.body.registration_client_uri), 'GET', String(res.body.registration_access_token));
    expect(read.status).toBe(200);
    expect((read.body.jwks as { keys: JWK[] }).keys.map((k) => k.kid)).toEqual(['enc 2024/06 #1 (ключ)', 'ec']);
    expect(read.body.jwks).toStrictEqual(res.body.jwks);
  });

  it('honest: an RSA key stored labelled key_ops ["encrypt"] (the seed spec\'s label, kept as sent before keys were normalised) is used as registration stores it now', async () => {
    const good = await encryptionKey(ALG, { kid: 'seed', use: undefined, key_ops: ['encrypt'] });
    const client = await storedWith([good.jwk], { ...good.jwk, key_ops: ['encrypt', 'wrapKey'] });
    const answer = await tokenAnswer(client);
    expect([answer.status, answer.body.error_description]).toEqual([200, undefined]);
    expect(decodeProtectedHeader(String(answer.body.id_token))).toMatchObject({ alg: ALG, kid: 'seed' });
    await expect(compactDecrypt(String(answer.body.id_token), good.privateKey)).resolves.toBeDefined();
  });
});

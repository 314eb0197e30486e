import { describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import { compactDecrypt, decodeProtectedHeader } from 'jose';
import * as oidc from 'openid-client';

import { issueInitialAccessToken } from '../../lib/index.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { rawIdToken, recordingAnswers, type RawAnswers } from '../helpers/raw-answers.js';
import { encryptionKey, manage, register } from '../helpers/registration.js';

const REDIRECT = 'https://rp.example/cb';

describe('a registered client updating its encryption key (C6)', () => {
  const running = appPerSuite();

  it('encrypts the next ID token to the new key only, and earlier access tokens keep working', async () => {
    const keyA = await encryptionKey('RSA-OAEP-256', { kid: 'key-a' });
    const keyB = await encryptionKey('RSA-OAEP-256', { kid: 'key-b' });
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const registered = await register(
      running,
      // public: the test follows the account's own sub across the key change
      { redirect_uris: [REDIRECT], subject_type: 'public', id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [keyA.jwk] } },
      token,
    );
    expect(registered.status).toBe(201);
    const client = registered.body as unknown as ClientMetadata;
    const seen: RawAnswers = {};

    const first = await runCodeFlow(running.issuer, client, { configure: recordingAnswers(seen, keyA) });
    expect(rawIdToken(seen).split('.')).toHaveLength(5);
    expect(decodeProtectedHeader(rawIdToken(seen))).toMatchObject({ alg: 'RSA-OAEP-256', enc: 'A128CBC-HS256', kid: 'key-a' });
    expect(first.claims.sub).toBe('demo-0001');

    const updated = await manage(registered.body.registration_client_uri as string, 'POST', registered.body.registration_access_token as string, {
      redirect_uris: [REDIRECT],
      id_token_encrypted_response_alg: 'RSA-OAEP-256',
      jwks: { keys: [keyB.jwk] },
    });
    expect(updated.status).toBe(200);

    const second = await runCodeFlow(running.issuer, client, { configure: recordingAnswers(seen, keyB) });
    expect(second.claims.sub).toBe('demo-0001');
    await expect(compactDecrypt(rawIdToken(seen), keyA.privateKey)).rejects.toThrow();
    await expect(compactDecrypt(rawIdToken(seen), keyB.privateKey)).resolves.toBeDefined();

    const config = await oidc.discovery(new URL(running.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });
    const userinfo = await oidc.fetchUserInfo(config, first.tokens.access_token, first.claims.sub);
    expect(userinfo.sub).toBe('demo-0001');
  });
});

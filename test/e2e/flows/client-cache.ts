import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { compactDecrypt, decodeProtectedHeader } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { refOf } from '../../../adapters/inventory.js';
import { issueInitialAccessToken } from '../../../lib/registration/initial-access-tokens.js';
import { ruleDerivedEnv } from '../../../lib/settings/definitions.js';
import { pairwiseSubOf, startApp, TEST_PAIRWISE_KEY, type RunningApp } from '../../helpers/app.js';
import { runCodeFlow } from '../../helpers/flow.js';
import { rawIdToken, recordingAnswers, type RawAnswers } from '../../helpers/raw-answers.js';
import { SHARED_REDIS_URL } from '../../helpers/redis.js';
import { freePort, PROCESS_MS, type ServerProcess, startServerProcess, waitFor } from '../../helpers/processes.js';
import { encryptionKey, manage, register } from '../../helpers/registration.js';
import type { StoreKind } from '../../helpers/stores.js';

jest.setTimeout(PROCESS_MS);

const REDIRECT = 'https://rp.example/cb';

/** Clients cached in two processes on one Redis store (this one and an example-server process), invalidated in both at once. */
export function clientCacheFlows(kind: StoreKind, properties: () => Record<string, string>): void {
  describe('clients cached in every process are invalidated everywhere at once', () => {
    let shared: Record<string, string> = {};
    let a: RunningApp;
    let b: ServerProcess;
    let issuerB = '';

    beforeAll(async () => {
      // Process A: this one. Process B: the example server on the same Redis and key prefix, and the same base URL.
      shared = properties();
      const port = await freePort();
      issuerB = `http://127.0.0.1:${port}/oidc/v1`;
      a = await startApp({ properties: { ...shared, 'svc.base-url': `http://127.0.0.1:${port}` } });
      const store = Object.fromEntries(Object.entries(shared).map(([name, value]) => [ruleDerivedEnv(name), value]));
      b = startServerProcess({ ...store, PORT: String(port), SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_COOKIES_KEYS: randomBytes(32).toString('hex'), SVC_SUBJECT_PAIRWISE_KEY: TEST_PAIRWISE_KEY });
      await waitFor(`http://127.0.0.1:${port}/readyz`);
    });

    afterAll(async () => {
      await b?.stop();
      await a?.close();
    });

    it('a key update made through process A is used by the next flow on process B, which served the client from its cache until then; a deletion likewise', async () => {
      const keyA = await encryptionKey('RSA-OAEP-256', { kid: 'key-a' });
      const keyB = await encryptionKey('RSA-OAEP-256', { kid: 'key-b' });
      const { token } = await issueInitialAccessToken(a.app.svc.provider);
      const registered = await register(a, { redirect_uris: [REDIRECT], id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [keyA.jwk] } }, token);
      expect(registered.status).toBe(201);
      const client = registered.body as unknown as ClientMetadata;
      const seen: RawAnswers = {};
      const headerKid = (): unknown => decodeProtectedHeader(rawIdToken(seen)).kid;

      // B loads the client (authorization, token, UserInfo) once; the second flow is served from B's
      // cache: not one read of the client's key reaches Redis (watched with MONITOR on standalone).
      const clientKey = `${shared['svc.redis.key-prefix']}Client:${refOf(client.client_id)}`;
      for (let i = 0; i < 2; i += 1) {
        // redis-cli's MONITOR, not ioredis's: its stream also carries other test files' commands, and
        // ioredis took one arriving while its monitor connection closed for a reply to nothing.
        const watcher = kind === 'redis standalone' ? spawn('redis-cli', ['-u', SHARED_REDIS_URL, 'monitor']) : undefined;
        let watched = '';
        watcher?.stdout.on('data', (chunk: Buffer) => (watched += chunk.toString()));
        while (watcher && !watched.startsWith('OK')) await new Promise((resolve) => watcher.stdout.once('data', resolve));
        expect((await runCodeFlow(issuerB, client, { configure: recordingAnswers(seen, keyA) })).claims.sub).toBe(pairwiseSubOf(REDIRECT));
        expect(headerKid()).toBe('key-a');
        watcher?.kill();
        const reads = watched.split('\n').filter((line) => line.includes(`"${clientKey}"`));
        // The watch sees B load the client in the first flow, and not in the second.
        if (watcher) expect(reads.length > 0).toBe(i === 0);
      }

      // Its configuration URL names the shared base URL, B's port: sent to A.
      const throughA = (registered.body.registration_client_uri as string).replace(issuerB, a.issuer);
      const updated = await manage(throughA, 'PUT', registered.body.registration_access_token as string, {
        client_id: client.client_id,
        redirect_uris: [REDIRECT],
        id_token_encrypted_response_alg: 'RSA-OAEP-256',
        jwks: { keys: [keyB.jwk] },
      });
      expect(updated.status).toBe(200);
      expect((await runCodeFlow(issuerB, client, { configure: recordingAnswers(seen, keyB) })).claims.sub).toBe(pairwiseSubOf(REDIRECT));
      expect(headerKid()).toBe('key-b');
      await expect(compactDecrypt(rawIdToken(seen), keyA.privateKey)).rejects.toThrow();

      const deleted = await manage(throughA, 'DELETE', updated.body.registration_access_token as string);
      expect(deleted.status).toBe(204);
      const authorize = new URL(`${issuerB}/authorize`);
      for (const [k, v] of Object.entries({ client_id: client.client_id, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })) {
        authorize.searchParams.set(k, v);
      }
      const refused = await fetch(authorize, { redirect: 'manual', headers: { accept: 'application/json' } });
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('invalid_client');
    });
  });
}

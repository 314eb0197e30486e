import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeProtectedHeader, type JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { b64uint } from '../helpers/hostile-keys.js';
import { rawIdToken, recordingAnswers, type RawAnswers } from '../helpers/raw-answers.js';
import { encryptionKey, manage, register, startDocServer, type DocServer } from '../helpers/registration.js';

const REDIRECT = 'https://rp.example/cb';
const ALG = 'RSA-OAEP-256';

type Key = Awaited<ReturnType<typeof encryptionKey>>;

/**
 * Probe (theme: data that changes after it was vetted). C6: "POST and PUT take the full client metadata
 * (RFC 7592 replacement semantics) and apply at once: the next ID token uses the new keys". A client that
 * publishes its keys at `jwks_uri` changes them there and tells the provider with an RFC 7592 PUT; the PUT
 * fetches and vets the new set. Does the next ID token use it?
 */
describe('an RFC 7592 update of a jwks_uri client applies its new keys at once (C6)', () => {
  let running: RunningApp;
  let docs: DocServer;
  /** The JWK Set each path serves now, and how often each path was fetched. */
  const sets = new Map<string, JWK[]>();
  const hits = new Map<string, number>();
  let path = 0;

  beforeAll(async () => {
    docs = await startDocServer();
    docs.handler = (req, res) => {
      const url = req.url ?? '';
      hits.set(url, (hits.get(url) ?? 0) + 1);
      res.setHeader('content-type', 'application/json');
      // The strictest caching a key server can ask for.
      res.setHeader('cache-control', 'no-cache, no-store');
      res.end(JSON.stringify({ keys: sets.get(url) ?? [] }));
    };
    running = await startApp({ properties: { 'svc.fetch.allow-private-network': true }, claimModules: createDemoClaimModules() });
  });
  afterAll(async () => {
    await running.close();
    await docs.close();
  });

  async function registerAt(keys: JWK[]): Promise<{ client: ClientMetadata; where: string }> {
    path += 1;
    const where = `/rp-${path}/jwks`;
    sets.set(where, keys);
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: [REDIRECT], jwks_uri: `${docs.url}${where}`, id_token_encrypted_response_alg: ALG, userinfo_encrypted_response_alg: ALG }, token);
    expect([res.status, res.body.error_description]).toEqual([201, undefined]);
    return { client: res.body as unknown as ClientMetadata, where };
  }

  /** RFC 7592 PUT of `client`'s metadata as it is (plus `changes`); the new view (200 expected). */
  async function put(client: ClientMetadata, changes: Record<string, unknown> = {}): Promise<ClientMetadata> {
    const { registration_access_token: token, registration_client_uri: uri, client_secret_expires_at: _e, client_id_issued_at: _i, ...metadata } = client as Record<string, unknown>;
    const res = await manage(uri as string, 'PUT', token as string, { ...metadata, ...changes });
    expect([res.status, res.body.error_description]).toEqual([200, undefined]);
    return { ...client, ...res.body };
  }

  async function flow(client: ClientMetadata, keys: Key[]) {
    const seen: RawAnswers = {};
    const result = await runCodeFlow(running.issuer, client, { scope: 'openid email', configure: recordingAnswers(seen, ...keys), skipUserinfo: true }).catch((e: unknown) => e as Error);
    return { seen, result };
  }

  it('keys replaced at jwks_uri and confirmed by a PUT of the same metadata: the next ID token is encrypted to the new key', async () => {
    const old = await encryptionKey(ALG, { kid: 'rp-enc-old' });
    const fresh = await encryptionKey(ALG, { kid: 'rp-enc-new' });
    const { client, where } = await registerAt([old.jwk]);
    const first = await flow(client, [old]);
    expect(first.result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(first.seen)).kid).toBe('rp-enc-old');

    // The old private key is compromised: the RP withdraws its public key, publishes the new one, and
    // tells the provider with RFC 7592 (the PUT fetches and vets the new set: it holds only the new key).
    sets.set(where, [fresh.jwk]);
    const fetchedBefore = hits.get(where) ?? 0;
    const updated = await put(client);
    expect(hits.get(where)).toBe(fetchedBefore + 1);

    // "apply at once: the next ID token uses the new keys" (C6).
    const next = await flow(updated, [old, fresh]);
    expect(next.result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(next.seen)).kid).toBe('rp-enc-new');
  });

  it('the same rotation with a PUT that also changes another member (client_name) uses the new key at once', async () => {
    const old = await encryptionKey(ALG, { kid: 'rp-enc-old' });
    const fresh = await encryptionKey(ALG, { kid: 'rp-enc-new' });
    const { client, where } = await registerAt([old.jwk]);
    expect((await flow(client, [old])).result).not.toBeInstanceOf(Error);
    sets.set(where, [fresh.jwk]);
    const updated = await put(client, { client_name: 'renamed after the rotation' });
    const next = await flow(updated, [old, fresh]);
    expect(next.result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(next.seen)).kid).toBe('rp-enc-new');
  });

  it('honest: a refused set, fixed at jwks_uri and vetted by a successful PUT, serves the next sign-in at once (the refusal is not remembered past it)', async () => {
    const good = await encryptionKey(ALG, { kid: 'rp-enc' });
    const { client, where } = await registerAt([good.jwk]);
    // A mistake at the RP: e = 1 published. The provider refuses it (as it must).
    sets.set(where, [{ ...good.jwk, e: b64uint(1n) }]);
    const broken = await flow(client, [good]);
    expect(broken.result).toBeInstanceOf(Error);
    expect(broken.seen.token?.status).toBe(400);

    // The RP fixes the set and updates its registration; the update fetches and vets the fixed set: 200.
    sets.set(where, [good.jwk]);
    const updated = await put(client, { client_name: 'fixed keys' });
    // The registration now in force was vetted a moment ago: the next sign-in works (C6 "apply at once").
    const fixed = await flow(updated, [good]);
    expect(fixed.seen.token?.status).toBe(200);
    expect(fixed.result).not.toBeInstanceOf(Error);
  });
});

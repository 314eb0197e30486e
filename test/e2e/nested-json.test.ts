import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CompactEncrypt, CompactSign } from 'jose';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createStore, issueInitialAccessToken, loadSettings } from '../../lib/index.js';
import { MODEL_NAMES } from '../../lib/seams.js';
import { MAX_JSON_DEPTH } from '../../lib/web/json-depth.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { pkcePair } from '../helpers/flow.js';
import { isUnspent, register } from '../helpers/registration.js';
import { encryptRequestObject, outcomeOf, providerEncryptionKey, registerSigningClient, type SigningClient } from '../helpers/request-objects.js';

/**
 * JSON nested a few thousand levels deep overflows the stack in the recursive JSON.stringify and structuredClone
 * oidc-provider runs on a request object and a client assertion before verifying them, and on registration
 * metadata: a 500 that anyone could cause with a link. Such JSON is refused before oidc-provider reads it.
 */
const REDIRECT = 'https://rp.example/cb';
const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('JSON nested too deep to clone (C2: an OAuth error, never a 500; nothing stored)', () => {
  let running: RunningApp;
  let store: CountingStore;
  let client: SigningClient;
  let jwtClient: SigningClient;

  beforeAll(async () => {
    store = countingStore(createStore(loadSettings({ env: {}, properties: {} }).redis));
    running = await startApp({ store, claimModules: createDemoClaimModules() });
    client = await registerSigningClient(running, {});
    jwtClient = await registerSigningClient(running, { token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'PS256' });
  });
  afterAll(async () => running.close());

  const fields = (c: SigningClient): Record<string, string> => ({
    client_id: c.metadata.client_id,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'st-deep',
  });
  /** A request object signed by `c` whose `claims.userinfo.email.value` (or, with `member`, a member of its own) nests `depth` arrays. */
  const deepObject = async (c: SigningClient, depth: number, member?: string): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    const head = JSON.stringify({ ...fields(c), iss: c.metadata.client_id, aud: running.issuer, iat: now, exp: now + 60 }).slice(0, -1);
    const text = member ? `${head},"${member}":${nested(depth)}}` : `${head},"claims":{"userinfo":{"email":{"value":${nested(depth)}}}}}`;
    return new CompactSign(new TextEncoder().encode(text)).setProtectedHeader({ alg: c.alg, kid: c.kid }).sign(c.signingKey);
  };
  const forge = (jws: string): string => `${jws.split('.').slice(0, 2).join('.')}.AAAA`;
  const authorizeWith = (request: string): URL => {
    const url = new URL(`${running.issuer}/authorize`);
    url.searchParams.set('client_id', client.metadata.client_id);
    url.searchParams.set('request', request);
    return url;
  };
  const par = async (body: Record<string, string>, authorization?: string): Promise<{ status: number; error?: string }> => {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) };
    const res = await fetch(`${running.issuer}/par`, { method: 'POST', headers, body: new URLSearchParams(body).toString() });
    return { status: res.status, error: ((await res.json()) as { error?: string }).error };
  };
  const flowWrites = (): number[] => [MODEL_NAMES.pushedAuthorizationRequest, 'Interaction', 'Session'].map((m) => store.writes(m));

  it('honest: a value nested past the claims limit (16) but well within this one gets the claims check, redirected with its state', async () => {
    const jws = await deepObject(client, 20);
    expect(await outcomeOf(authorizeWith(jws))).toMatchObject({ error: 'invalid_request', description: 'claims.userinfo.email: value is nested more than 16 levels deep', state: 'st-deep' });
    expect(await par({ request: jws }, basic(client.metadata.client_id, String(client.metadata.client_secret)))).toEqual({ status: 400, error: 'invalid_request' });
  });

  it(`honest: a request object nesting ${MAX_JSON_DEPTH} levels in a member nobody reads is served, signed or encrypted`, async () => {
    const jws = await deepObject(client, MAX_JSON_DEPTH - 1, 'x_member');
    expect((await outcomeOf(authorizeWith(jws))).interaction).toBeDefined();
    const jwe = await encryptRequestObject(running.issuer, await deepObject(client, MAX_JSON_DEPTH - 1, 'x_member'), 'RSA-OAEP-256');
    expect((await outcomeOf(authorizeWith(jwe))).interaction).toBeDefined();
  });

  it('attack: a link anyone can make, GET /authorize with a forged request object nesting 4000 deep, is refused with invalid_request_object', async () => {
    const before = flowWrites();
    for (const member of [undefined, 'x_member']) {
      const res = await fetch(authorizeWith(forge(await deepObject(client, 4000, member))), { redirect: 'manual' });
      expect([res.status, ((await res.json()) as { error?: string }).error]).toEqual([400, 'invalid_request_object']);
    }
    expect(flowWrites()).toEqual(before);
  });

  it('attack: the same object encrypted to the provider (under its own kid, a kid of no key, no kid) is judged by what it holds', async () => {
    const { key, kid } = await providerEncryptionKey(running.issuer, 'RSA-OAEP-256');
    const inner = new TextEncoder().encode(forge(await deepObject(client, 4000, 'x_member')));
    const before = flowWrites();
    for (const header of [{ kid }, { kid: 'no-such-key' }, {}]) {
      const jwe = await new CompactEncrypt(inner).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', cty: 'JWT', ...header }).encrypt(key);
      const res = await fetch(authorizeWith(jwe), { redirect: 'manual' });
      expect([res.status, ((await res.json()) as { error?: string }).error]).toEqual([400, 'invalid_request_object']);
    }
    expect(flowWrites()).toEqual(before);
  });

  it('attack: the deep object given twice or four times (as many as the body limit holds) is refused as a duplicate before any copy is read', async () => {
    const deep = forge(await deepObject(client, 4000, 'x_member'));
    for (const copies of [2, 4]) {
      const body = new URLSearchParams({ client_id: client.metadata.client_id, redirect_uri: String(client.metadata.redirect_uris?.[0]) });
      for (let i = 0; i < copies; i += 1) body.append('request', deep);
      const outcome = await outcomeOf(`${running.issuer}/authorize`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
      expect(outcome).toMatchObject({ status: 303, error: 'invalid_request', description: "'request' parameter must not be provided twice" });
    }
  });

  it('attack: POST /par with a signed request object nesting 6000 deep answers 400 invalid_request_object and stores nothing', async () => {
    const before = flowWrites();
    expect(await par({ request: await deepObject(client, 6000) }, basic(client.metadata.client_id, String(client.metadata.client_secret)))).toEqual({ status: 400, error: 'invalid_request_object' });
    expect(flowWrites()).toEqual(before);
  });

  it('attack: a private_key_jwt client assertion nesting 6000 deep answers 401 invalid_client at /par and /token, nothing stored', async () => {
    const now = Math.floor(Date.now() / 1000);
    const head = JSON.stringify({ iss: jwtClient.metadata.client_id, sub: jwtClient.metadata.client_id, aud: running.issuer, iat: now, exp: now + 60, jti: `deep-${now}` }).slice(0, -1);
    const assertion = await new CompactSign(new TextEncoder().encode(`${head},"extra":${nested(6000)}}`)).setProtectedHeader({ alg: 'PS256', kid: jwtClient.kid }).sign(jwtClient.signingKey);
    const auth = { client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion };
    const before = flowWrites();
    expect(await par({ ...fields(jwtClient), ...auth })).toEqual({ status: 401, error: 'invalid_client' });
    const token = await fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, code_verifier: 'v'.repeat(43), ...auth }).toString(),
    });
    expect([token.status, ((await token.json()) as { error?: string }).error]).toEqual([401, 'invalid_client']);
    expect(flowWrites()).toEqual(before);
  });

  it('attack: a registration body nesting 20000 deep answers 400 invalid_request, its token unspent, no client stored; honest metadata a few levels deep registers', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const clients = store.writes(MODEL_NAMES.client);
    for (const member of ['x_unknown', 'contacts', 'jwks']) {
      const res = await register(running, `{"redirect_uris":["${REDIRECT}"],"client_secret":"a-secret-of-its-own","${member}":${nested(20_000)}}`, token);
      expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
    }
    expect(await isUnspent(running, token)).toBe(true);
    expect(store.writes(MODEL_NAMES.client)).toBe(clients);
    expect((await register(running, { redirect_uris: [REDIRECT], x_unknown: JSON.parse(nested(MAX_JSON_DEPTH - 1)) as unknown }, token)).status).toBe(201);
  });
});

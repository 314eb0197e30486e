import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createMemoryStore, issueInitialAccessToken } from '../../lib/index.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { authorizationUrl, codeFlowUrl, runCodeFlow } from '../helpers/flow.js';

const RUNS = 500;
const client = confidentialClient({ subject_type: 'public' });
const REDIRECT = (client.redirect_uris as string[])[0] as string;
const OAUTH_ERRORS = /^[a-z_]+$/;

/** A JSON body with an OAuth error, as every API error must be. */
async function oauthJson(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON (HTTP ${response.status}): ${text.slice(0, 120)}`);
  }
  if (typeof body.error !== 'string' || !OAUTH_ERRORS.test(body.error)) throw new Error(`no OAuth error in ${text.slice(0, 120)}`);
  return body;
}

/** One field made invalid, so that no generated registration can succeed. */
const invalidity = fc.oneof(
  fc.constantFrom<Record<string, unknown>>(
    { redirect_uris: 'https://rp.example/cb' },
    { redirect_uris: [] },
    { redirect_uris: ['https://rp.example/cb#f'] },
    { redirect_uris: ['/relative'] },
    { redirect_uris: [42] },
    { redirect_uris: ['https://rp.example/cb'], userinfo_encrypted_response_alg: 'RSA-OAEP-256' },
    { redirect_uris: ['https://rp.example/cb'], id_token_encrypted_response_alg: 'dir' },
    { redirect_uris: ['https://rp.example/cb'], token_endpoint_auth_method: 'magic' },
    { redirect_uris: ['https://rp.example/cb'], grant_types: ['implicit'] },
    { redirect_uris: ['https://rp.example/cb'], allow_unencrypted_userinfo: 'yes' },
  ),
  fc.record({
    redirect_uris: fc.constant(['https://rp.example/cb']),
    userinfo_encrypted_response_alg: fc.string({ maxLength: 20 }),
    jwks: fc.oneof(fc.jsonValue(), fc.record({ keys: fc.array(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })), { maxLength: 3 }) })),
  }),
);

describe('hostile input: 500 generated cases per surface', () => {
  let running: RunningApp;
  let store: CountingStore;

  beforeAll(async () => {
    store = countingStore(createMemoryStore());
    running = await startApp({
      store,
      clients: [client],
      claimModules: createDemoClaimModules(),
      properties: { 'svc.management.password': 'hostile-test-password', 'svc.management.lockout-threshold': 1000 },
    });
  });
  afterAll(async () => running.close());

  it('registration bodies: always 400 with an OAuth error, nothing stored, the token still usable', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const before = store.writes('Client');
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }),
        invalidity,
        fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded'),
        fc.boolean(),
        async (noise, invalid, contentType, raw) => {
          const body = raw ? JSON.stringify(noise).slice(0, -1) : JSON.stringify({ ...noise, ...invalid });
          const response = await fetch(`${running.issuer}/register`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body });
          expect(response.status).toBeGreaterThanOrEqual(400);
          expect(response.status).toBeLessThan(500);
          await oauthJson(response);
        },
      ),
      { numRuns: RUNS },
    );
    expect(store.writes('Client')).toBe(before);
    const ok = await fetch(`${running.issuer}/register`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['https://rp.example/cb'] }) });
    expect(ok.status).toBe(201);
  }, 120_000);

  it('claims parameters and svc.* names: an error redirect, an interaction, or the error page; never 5xx', async () => {
    const svcName = fc.stringMatching(/^svc\.(ver|auth)\.[a-z0-9_.,[\]-]{0,40}$/);
    const claimsValue = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc
        .record({
          userinfo: fc.dictionary(fc.oneof(svcName, fc.string({ maxLength: 20 })), fc.oneof(fc.constant(null), fc.record({ essential: fc.jsonValue({ maxDepth: 1 }) }), fc.jsonValue({ maxDepth: 2 })), { maxKeys: 4 }),
          id_token: fc.dictionary(svcName, fc.constant(null), { maxKeys: 3 }),
        })
        .map((v) => JSON.stringify(v)),
    );
    await fc.assert(
      fc.asyncProperty(claimsValue, async (claims) => {
        const response = await fetch(codeFlowUrl(running.issuer, client, { state: 's', claims }), { redirect: 'manual' });
        expect(response.status).toBeLessThan(500);
        const location = response.headers.get('location');
        if (location?.startsWith(REDIRECT)) expect(new URL(location).searchParams.get('error')).toMatch(OAUTH_ERRORS);
        else if (location) expect(location).toMatch(/^\/oidc\/v1\/interaction\//);
        else expect(response.status).toBe(400);
        await response.arrayBuffer();
      }),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('authorization parameters: never 5xx, never a redirect to an unregistered address', async () => {
    const value = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('code', 'token', 'none', 'login consent', 'S256', 'plain', '-1', '0', 'openid', REDIRECT));
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          { response_type: value, scope: value, prompt: value, max_age: value, code_challenge: value, code_challenge_method: value, redirect_uri: value, client_id: fc.oneof(fc.constant(client.client_id), fc.string({ maxLength: 20 })), display: value, ui_locales: value, state: value, nonce: value },
          { requiredKeys: [] },
        ),
        async (params) => {
          const response = await fetch(authorizationUrl(running.issuer, params), { redirect: 'manual' });
          expect(response.status).toBeLessThan(500);
          const location = response.headers.get('location');
          if (location && !location.startsWith('/oidc/v1/interaction/')) expect(location.startsWith(REDIRECT)).toBe(true);
          await response.arrayBuffer();
        },
      ),
      { numRuns: RUNS },
    );
  }, 120_000);

  it('token requests: always 4xx with an OAuth error, no token stored', async () => {
    const before = store.writes('AccessToken');
    const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom('grant_type', 'code', 'code_verifier', 'redirect_uri', 'client_id', 'client_secret', 'refresh_token', 'scope', 'x'), fc.string({ maxLength: 50 }), { maxKeys: 7 }),
        fc.oneof(fc.constant(undefined), fc.string({ maxLength: 60 }), fc.tuple(fc.constantFrom(client.client_id, 'nobody'), fc.string({ maxLength: 40 })).map(([id, s]) => basic(id, s))),
        fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain'),
        async (form, authorization, contentType) => {
          const headers: Record<string, string> = { 'content-type': contentType };
          if (authorization !== undefined) headers.authorization = authorization;
          const response = await fetch(`${running.issuer}/token`, { method: 'POST', headers, body: new URLSearchParams(form).toString() });
          expect(response.status).toBeGreaterThanOrEqual(400);
          expect(response.status).toBeLessThan(500);
          await oauthJson(response);
        },
      ),
      { numRuns: RUNS },
    );
    expect(store.writes('AccessToken')).toBe(before);
  }, 120_000);

  it('management requests and headers: always 4xx with an OAuth error, nothing issued', async () => {
    const before = store.writes('InitialAccessToken');
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constant(undefined), fc.string({ maxLength: 80 }), fc.string({ maxLength: 40 }).map((s) => `Basic ${Buffer.from(s).toString('base64')}`)),
        fc.oneof(fc.constant(undefined), fc.string({ maxLength: 300 })),
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
        fc.constantFrom('invite_client', 'initial-access-tokens'),
        async (authorization, email, method, route) => {
          const url = new URL(`${running.issuer}/management/${route}`);
          if (email !== undefined) url.searchParams.set('email', email);
          const headers: Record<string, string> = {};
          if (authorization !== undefined) headers.authorization = authorization;
          let response: Response;
          try {
            response = await fetch(url, { method, headers });
          } catch (err) {
            // A header value the HTTP client itself refuses to send is not a server reaction.
            if ((err as Error).name === 'TypeError') return;
            throw err;
          }
          expect(response.status).toBeGreaterThanOrEqual(400);
          expect(response.status).toBeLessThan(500);
          await oauthJson(response);
        },
      ),
      { numRuns: RUNS },
    );
    expect(store.writes('InitialAccessToken')).toBe(before);
  }, 120_000);

  it('refuses oversized bodies (413) and headers (431) early', async () => {
    const big = await fetch(`${running.issuer}/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"x":"${'a'.repeat(1024 * 1024)}"}` });
    expect(big.status).toBe(413);
    expect((await oauthJson(big)).error).toBe('invalid_request');
    const tokenBig = await fetch(`${running.issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `code=${'a'.repeat(200 * 1024)}` });
    expect(tokenBig.status).toBe(413);
    const header = await fetch(`${running.baseUrl}/healthz`, { headers: { 'x-junk': 'a'.repeat(64 * 1024) } });
    expect(header.status).toBe(431);
  });

  it('is healthy afterwards: /healthz and a full flow work', async () => {
    expect((await fetch(`${running.baseUrl}/healthz`)).status).toBe(200);
    const flow = await runCodeFlow(running.issuer, client);
    expect(flow.claims.sub).toBe('demo-0001');
  });
});

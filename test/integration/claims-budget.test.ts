import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createStore, loadSettings } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, redirectParams } from '../helpers/flow.js';
import { bracketFlood, bytesOf, namesAcrossChannels, paddedTo, type ClaimsObject } from '../helpers/claims-requests.js';
import { registerClient, type RegisteredClient, registeredClientParams } from '../helpers/clients.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';

const REDIRECT = 'https://rp.example/cb';

describe('the claims budget (C5, issue 14): refused early, redirected with state, nothing stored', () => {
  let running: RunningApp;
  let store: CountingStore;
  let rsa: RegisteredClient;

  beforeAll(async () => {
    store = countingStore(createStore(loadSettings({ env: {}, properties: {} }).redis));
    running = await startApp({ store, claimModules: createDemoClaimModules() });
    rsa = await registerClient(running, 'rsa');
  });
  afterAll(async () => running.close());

  const params = (claims: ClaimsObject): Record<string, string> => registeredClientParams(rsa, { state: 'st-budget', claims: JSON.stringify(claims) });

  /** Sends an authorization request; returns the redirect's parameters (or the interaction path). */
  const authorize = async (claims: ClaimsObject, method: 'GET' | 'POST' = 'GET'): Promise<{ status: number; location: string }> => {
    const response =
      method === 'GET'
        ? await fetch(authorizationUrl(running.issuer, params(claims)), { redirect: 'manual' })
        : await fetch(`${running.issuer}/authorize`, {
            method: 'POST',
            redirect: 'manual',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(params(claims)).toString(),
          });
    return { status: response.status, location: response.headers.get('location') ?? '' };
  };

  /** Expects `claims` refused with `description`, redirected to the client with state, nothing stored. */
  const expectRefused = async (claims: ClaimsObject, description: string, method: 'GET' | 'POST' = 'GET'): Promise<void> => {
    const interactions = store.writes('Interaction');
    const { status, location } = await authorize(claims, method);
    expect(status).toBe(303);
    expect(location.startsWith(REDIRECT)).toBe(true);
    const redirect = redirectParams(location);
    expect({ error: redirect.get('error'), description: redirect.get('error_description'), state: redirect.get('state') }).toEqual({
      error: 'invalid_request',
      description,
      state: 'st-budget',
    });
    expect(store.writes('Interaction')).toBe(interactions);
  };

  it('refuses the 14.8 KB attack request of issue 14 on its size (a form POST: too long for a URL)', async () => {
    const attack = { userinfo: bracketFlood(96, 'verification-procedure-variant-with-a-long-descriptive-segment-name-and-more-') };
    expect(bytesOf(attack)).toBeGreaterThan(14_000);
    await expectRefused(attack, `the claims parameter is ${bytesOf(attack)} bytes; at most 8192 are allowed`, 'POST');
  });

  it.each(['GET', 'POST'] as const)('refuses 96 bracketed names × 129 expansions under 8 KiB by counting them (%s)', async (method) => {
    const attack = { userinfo: bracketFlood(96) };
    expect(bytesOf(attack)).toBeLessThan(8192);
    await expectRefused(attack, 'the claims parameter expands to 12384 claim names; at most 256 are allowed', method);
  });

  it('refuses 20 concurrent attack requests alike, storing nothing', async () => {
    const interactions = store.writes('Interaction');
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => authorize({ userinfo: bracketFlood(96, `c${i}-`) }, i % 2 ? 'GET' : 'POST')));
    for (const { location } of results) expect(redirectParams(location).get('error_description')).toBe('the claims parameter expands to 12384 claim names; at most 256 are allowed');
    expect(store.writes('Interaction')).toBe(interactions);
  });

  it('refuses a requested value nested deeper than 16 levels (2500 levels would overflow the stack), in either channel, by GET and POST; accepts 16', async () => {
    const nested = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`);
    for (const channel of ['userinfo', 'id_token']) {
      for (const method of ['GET', 'POST'] as const) {
        if (method === 'GET') await expectRefused({ [channel]: { email: { value: nested(17) } } }, `claims.${channel}.email: value is nested more than 16 levels deep`, method);
        await expectRefused({ [channel]: { email: { value: nested(2500) } } }, `claims.${channel}.email: value is nested more than 16 levels deep`, 'POST');
        await expectRefused({ [channel]: { sub: { value: { a: nested(2500) } } } }, `claims.${channel}.sub: value is nested more than 16 levels deep`, 'POST');
      }
    }
    expect((await authorize({ userinfo: { email: { value: nested(16) } } })).location).toMatch(/^\/oidc\/v1\/interaction\//);
  });

  it('refuses 257 names split over id_token and userinfo, and accepts exactly 256', async () => {
    await expectRefused(namesAcrossChannels(257), 'the claims parameter expands to 257 claim names; at most 256 are allowed');
    const accepted = await authorize(namesAcrossChannels(256));
    expect(accepted.location).toMatch(/^\/oidc\/v1\/interaction\/[\w-]+$/);
  });

  it('refuses 8193 bytes (also when 4096 of its characters are two-byte) and accepts 8192', async () => {
    const base = { id_token: { email: null } };
    await expectRefused(paddedTo(base, 8193), 'the claims parameter is 8193 bytes; at most 8192 are allowed');
    await expectRefused(paddedTo(base, 8193, 'ä'), 'the claims parameter is 8193 bytes; at most 8192 are allowed', 'POST');
    expect((await authorize(paddedTo(base, 8192))).location).toMatch(/^\/oidc\/v1\/interaction\//);
  });
});

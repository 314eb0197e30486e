import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { countingModules } from '../helpers/claims-requests.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { registerClient } from '../helpers/clients.js';
import { authorizationUrl, FormBrowser, pkcePair, redirectParams, runCodeFlow, signIn, userData } from '../helpers/flow.js';
import { deletePrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';
import { manage } from '../helpers/registration.js';

/**
 * Issue 22's attacks as whole flows on Redis (the feature suites run on the memory store:
 * test/integration/consent-first.test.ts, consent-delivery.test.ts; the stored hints:
 * test/e2e/privacy-sentinels.test.ts).
 */
describe('consent first, consent covers delivery, each claim once: whole flows on Redis (issue 22)', () => {
  const prefix = testPrefix('privacy');
  let running: RunningApp;
  let calls = { count: 0 };

  beforeAll(async () => {
    const counted = countingModules(createDemoClaimModules());
    calls = counted.calls;
    running = await startApp({ claimModules: counted.modules, properties: { 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix } });
  });
  afterAll(async () => {
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  it('tells an unapproved client nothing, asks again after its delivery weakened, and sends each claim once', async () => {
    const [friend, attacker] = await Promise.all([registerClient(running, 'rsa'), registerClient(running, 'rsa')]);
    const urlFor = (client_id: unknown, params: Record<string, string>): string =>
      authorizationUrl(running.issuer, { client_id: String(client_id), response_type: 'code', redirect_uri: 'https://rp.example/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', scope: 'openid', ...params });
    const guess = (value: string): string => JSON.stringify({ id_token: { email: { essential: true, value } } });
    const browser = new FormBrowser();
    await signIn(urlFor(friend.metadata.client_id, { scope: 'openid email' }), { browser });

    // 1. Before consent: the same page for a wrong and a right guess, and no module asked.
    const before = calls.count;
    for (const value of ['someone.else@example.com', 'erika.mustermann@example.com']) {
      await browser.follow(urlFor(attacker.metadata.client_id, { claims: guess(value) }), running.baseUrl);
      expect(browser.lastPage).toContain('id="consent-allow"');
      const silent = await browser.follow(urlFor(attacker.metadata.client_id, { claims: guess(value), prompt: 'none' }), running.baseUrl);
      expect(redirectParams(silent.leftTo as string).get('error')).toBe('consent_required');
    }
    expect(calls.count).toBe(before);
    expect((await signIn(urlFor(attacker.metadata.client_id, { claims: guess('someone.else@example.com') }), { browser })).callbackUrl.searchParams.get('error')).toBe('access_denied');

    // 4. Each claim once: the scope's claims in the ID token, UserInfo holds sub only.
    const flow = await runCodeFlow(running.issuer, friend.metadata, { scope: 'openid email', configure: friend.configure, browser });
    expect(userData(flow.claims)).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
    expect(userData(flow.userinfo)).toEqual({});

    // 2. The client drops encryption and opts out: asked again; the earlier token delivers nothing in plaintext.
    const { registration_access_token: token, registration_client_uri: uri } = friend.metadata as Record<string, unknown>;
    const weakened = await manage(uri as string, 'PUT', token as string, { client_id: friend.metadata.client_id, redirect_uris: ['https://rp.example/cb'], allow_unencrypted_userinfo: true });
    expect(weakened.status).toBe(200);
    const silent = await browser.follow(urlFor(friend.metadata.client_id, { scope: 'openid email', prompt: 'none' }), running.baseUrl);
    expect(redirectParams(silent.leftTo as string).get('error')).toBe('consent_required');
    const earlier = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${flow.tokens.access_token}` } });
    expect(earlier.headers.get('content-type')).toContain('application/json');
    expect(userData((await earlier.json()) as Record<string, unknown>)).toEqual({});
  });

  it('verified_claims on Redis: nothing asked before consent, the decrypted answer after, the consent page again for one more verified claim', async () => {
    const client = await registerClient(running, 'rsa');
    const verified = (claims: Record<string, null>): string =>
      JSON.stringify({ userinfo: { verified_claims: { verification: { trust_framework: null, evidence: [{ type: { value: 'document' }, document_details: null }] }, claims } } });
    const urlFor = (params: Record<string, string>): string =>
      authorizationUrl(running.issuer, { client_id: String(client.metadata.client_id), response_type: 'code', redirect_uri: 'https://rp.example/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', scope: 'openid', ...params });
    const browser = new FormBrowser();
    await signIn(urlFor({}), { browser });

    const before = calls.count;
    const silent = await browser.follow(urlFor({ claims: verified({ given_name: null, family_name: null }), prompt: 'none' }), running.baseUrl);
    expect(redirectParams(silent.leftTo as string).get('error')).toBe('consent_required');
    expect(calls.count).toBe(before);

    const flow = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params: { claims: verified({ given_name: null, family_name: null }) } });
    expect(userData(flow.userinfo)).toEqual({
      verified_claims: {
        verification: { trust_framework: 'https://svc-connect.example/trust-frameworks/demo', evidence: [{ type: 'document', document_details: { type: 'idcard' } }] },
        claims: { given_name: 'Erika', family_name: 'Mustermann' },
      },
    });

    const more = await browser.follow(urlFor({ claims: verified({ given_name: null, birthdate: null }) }), running.baseUrl);
    expect(more.leftTo).toBeUndefined();
    expect(browser.lastPage).toContain('id="consent-allow"');
  });
});

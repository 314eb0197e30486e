import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';

import { pairwiseSubOf, startApp, type RunningApp } from '../helpers/app.js';
import { FormBrowser, signIn } from '../helpers/flow.js';
import { registerClient, type RegisteredClient } from '../helpers/clients.js';

/**
 * C3: `id_token_hint` is ignored on authorization requests whatever its form (an ID token encrypted
 * to the client is not readable by the provider), and the authorization endpoint accepts a form
 * POST on an http base URL as well as on https (docs/spec-decisions.md).
 */
describe('authorization requests: encrypted id_token_hint and form POST on http', () => {
  let running: RunningApp;
  let rp: RegisteredClient;
  let config: oidc.Configuration;
  const redirectUri = 'https://rp.example/cb';

  beforeAll(async () => {
    running = await startApp();
    expect(running.baseUrl.startsWith('http:')).toBe(true);
    rp = await registerClient(running, 'rsa');
    config = await oidc.discovery(
      new URL(running.issuer),
      rp.metadata.client_id,
      undefined,
      oidc.ClientSecretBasic(rp.metadata.client_secret),
      { execute: [oidc.allowInsecureRequests] },
    );
    rp.configure(config);
  });
  afterAll(async () => running.close());

  const authorizationParams = async (extra: Record<string, string> = {}): Promise<{ params: Record<string, string>; verifier: string; nonce: string }> => {
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    return {
      verifier,
      nonce,
      params: {
        client_id: rp.metadata.client_id,
        response_type: 'code',
        redirect_uri: redirectUri,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        nonce,
        ...extra,
      },
    };
  };

  /** A full first flow: the browser is signed in and has consented; returns the raw (encrypted) ID token. */
  const firstFlow = async (browser: FormBrowser): Promise<string> => {
    const { params, verifier, nonce } = await authorizationParams();
    const url = new URL(`${running.issuer}/authorize`);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const { callbackUrl } = await signIn(url.href, { browser });
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
    expect(tokens.claims()?.sub).toBe(pairwiseSubOf(redirectUri));
    const raw = tokens.id_token as string;
    expect(raw.split('.')).toHaveLength(5); // a JWE: the provider cannot read it back
    return raw;
  };

  it.each<[string, 'GET' | 'POST']>([
    ['in the query', 'GET'],
    ['in a form POST', 'POST'],
  ])('an encrypted id_token_hint %s with prompt=none is ignored: the signed-in session gets a code', async (_name, method) => {
    const browser = new FormBrowser();
    const hint = await firstFlow(browser);
    const { params, verifier, nonce } = await authorizationParams({ id_token_hint: hint, prompt: 'none' });
    const step =
      method === 'GET'
        ? await browser.follow(`${running.issuer}/authorize?${new URLSearchParams(params).toString()}`, running.baseUrl)
        : await browser.follow(`${running.issuer}/authorize`, running.baseUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(params).toString(),
          });
    expect(step.leftTo).toBeDefined();
    const callbackUrl = new URL(step.leftTo as string);
    expect(callbackUrl.searchParams.get('error')).toBeNull();
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
    expect(tokens.claims()?.sub).toBe(pairwiseSubOf(redirectUri));
  });

  it.each<[string, Record<string, string>]>([
    ['display', { display: 'hologram' }],
    ['ui_locales', { ui_locales: 'xx-YY zz !!' }],
    ['claims_locales', { claims_locales: 'not a locale' }],
    ['login_hint', { login_hint: 'someone-else@example.com' }],
    ['acr_values', { acr_values: 'urn:example:loa:99 urn:unknown' }],
    ['all of them at once', { display: 'page', ui_locales: 'de', claims_locales: 'fr', login_hint: 'x', acr_values: 'y', id_token_hint: 'a.b.c.d.e' }],
  ])('%s is accepted and ignored (never an error)', async (_name, extra) => {
    const browser = new FormBrowser();
    await firstFlow(browser);
    const { params } = await authorizationParams({ ...extra, prompt: 'none' });
    const step = await browser.follow(`${running.issuer}/authorize?${new URLSearchParams(params).toString()}`, running.baseUrl);
    const callback = new URL(step.leftTo as string);
    expect([callback.searchParams.get('error'), typeof callback.searchParams.get('code')]).toEqual([null, 'string']);
  });

  it('a garbage id_token_hint is ignored as well (not an error)', async () => {
    const browser = new FormBrowser();
    await firstFlow(browser);
    const { params } = await authorizationParams({ id_token_hint: 'not.a.token', prompt: 'none' });
    const step = await browser.follow(`${running.issuer}/authorize?${new URLSearchParams(params).toString()}`, running.baseUrl);
    expect(new URL(step.leftTo as string).searchParams.get('code')).toEqual(expect.any(String));
  });

  it('a form POST to /authorize on an http base URL signs in and returns a code; session cookies are SameSite=Lax on http', async () => {
    const browser = new FormBrowser();
    const { params, verifier, nonce } = await authorizationParams({ state: 'posted' });
    const posted = await browser.request(`${running.issuer}/authorize`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(params).toString(),
    });
    expect(posted.status).toBe(303);
    const first = await browser.follow(new URL(posted.headers.get('location') as string, running.baseUrl).href, running.baseUrl);
    expect(browser.lastPage).toContain('id="login-form"');
    expect(first.response?.status).toBe(200);
    const signedIn = await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(signedIn.leftTo).toBeUndefined();
    const consent = await browser.submit('consent-allow', {}, running.baseUrl);
    const callbackUrl = new URL(consent.leftTo as string);
    expect(callbackUrl.searchParams.get('state')).toBe('posted');
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: 'posted', idTokenExpected: true });
    expect(tokens.claims()?.sub).toBe(pairwiseSubOf(redirectUri));
    const setCookies = browser.seenSetCookies.join('\n');
    expect(setCookies).toMatch(/_session=/);
    expect(setCookies).not.toMatch(/samesite=none/i);
    expect(setCookies).toMatch(/_session=[^;]*;.*samesite=lax/i);
  });
});

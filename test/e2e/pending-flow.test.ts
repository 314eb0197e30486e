import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { basicAuthorization } from '../../lib/web/basic-auth.js';
import { registerClient, updateRegistration, type RegisteredClient } from '../helpers/clients.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, FormBrowser, pkcePair, redirectParams, redeemCode } from '../helpers/flow.js';
import { managementCalls } from '../helpers/management-calls.js';
import { manage } from '../helpers/registration.js';
import { outcomeOf } from '../helpers/request-objects.js';
import { appPerSuite } from '../helpers/suite-app.js';

const KEPT = 'https://rp.example/cb';
const RETRACTED = 'https://rp.example/retired-cb';
const USER = 'flow-admin';
const PASSWORD = 'flow-admin-password-0123456789';
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

/**
 * An authorization request is vetted at /authorize
 * (its `redirect_uri` must be registered, C3), then the person signs in and consents; meanwhile the client
 * changes its registration (RFC 7592), is disabled by the operator, or deletes itself.
 */
describe('a sign-in under way while the client changes', () => {
  const running = appPerSuite({
    claimModules: createDemoClaimModules(),
    properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true },
  });
  const call = managementCalls(running, AUTH);

  /** A client with two redirect URIs on one host (one sector), first KEPT. */
  const twoRedirects = (): Promise<RegisteredClient> => registerClient(running, 'rsa', { redirect_uris: [KEPT, RETRACTED] });

  /** Starts a sign-in of `client` at `redirectUri` in a fresh browser, up to the login page. */
  async function startSignIn(client: RegisteredClient, redirectUri: string): Promise<{ browser: FormBrowser; verifier: string }> {
    const browser = new FormBrowser();
    const { verifier, challenge } = pkcePair();
    const url = authorizationUrl(running.issuer, {
      client_id: String(client.metadata.client_id),
      response_type: 'code',
      scope: 'openid email',
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st-probe',
    });
    const first = await browser.follow(url, running.baseUrl);
    expect(first.leftTo).toBeUndefined();
    expect(browser.lastPage).toContain('id="login-form"');
    return { browser, verifier };
  }

  /** Signs in as demo and approves whatever pages come; where the browser is finally sent (or undefined). */
  async function finishSignIn(browser: FormBrowser, consent: 'allow' | 'deny' = 'allow'): Promise<string | undefined> {
    let step = await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    for (let pages = 0; pages < 3 && !step.leftTo && browser.lastPage.includes('id="consent-allow"'); pages += 1) {
      step = await browser.submit(consent === 'deny' ? 'consent-deny' : 'consent-allow', {}, running.baseUrl);
    }
    return step.leftTo;
  }

  const notTo = (leftTo: string | undefined, uri: string): boolean => leftTo === undefined || !leftTo.startsWith(uri);

  describe('a redirect URI the client removed from its registration while she signs in', () => {
    it('after the client retracted the redirect URI (RFC 7592 PUT) while she signs in, no code is sent to it', async () => {
      const client = await twoRedirects();
      const { browser } = await startSignIn(client, RETRACTED);
      // The RP retracts that URI (say its host was lost to a takeover) while her login page is open.
      const updated = await updateRegistration(client, { redirect_uris: [KEPT] });
      expect(updated.metadata.redirect_uris).toEqual([KEPT]);
      // A fresh request to it is refused, with an error page rather than a redirect (C3: must match a registered one).
      const fresh = await outcomeOf(authorizationUrl(running.issuer, { client_id: String(client.metadata.client_id), response_type: 'code', scope: 'openid', redirect_uri: RETRACTED, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }));
      expect(fresh.error).toBe('invalid_redirect_uri');

      const leftTo = await finishSignIn(browser);
      // The pending one must not deliver a code (or anything) to the URI the client no longer registers.
      expect(leftTo === undefined ? undefined : redirectParams(leftTo).get('code')).toBeFalsy();
      expect(notTo(leftTo, RETRACTED)).toBe(true);
    });

    it('honest: a sign-in at a URI the client keeps completes while the client changes its other redirect URIs', async () => {
      const client = await twoRedirects();
      const { browser, verifier } = await startSignIn(client, KEPT);
      await updateRegistration(client, { redirect_uris: [KEPT, 'https://rp.example/new-cb'] });
      const leftTo = await finishSignIn(browser);
      expect(leftTo?.startsWith(`${KEPT}?`)).toBe(true);
      const tokens = await redeemCode(running.issuer, client.metadata, redirectParams(leftTo as string).get('code') as string, verifier);
      expect(tokens.status).toBe(200);
    });

    it('the same when she denies: neither the error nor the state goes to the retracted URI', async () => {
      const client = await twoRedirects();
      const { browser } = await startSignIn(client, RETRACTED);
      await updateRegistration(client, { redirect_uris: [KEPT] });
      const leftTo = await finishSignIn(browser, 'deny');
      expect(notTo(leftTo, RETRACTED)).toBe(true);
    });

    it('resuming the pending authorization (its /authorize/{uid} URL) after the client retracted its redirect URI sends no code there', async () => {
      const client = await registerClient(running, 'rsa', { redirect_uris: [KEPT, RETRACTED] });
      const id = String(client.metadata.client_id);
      const url = (redirectUri: string, scope: string): string =>
        authorizationUrl(running.issuer, { client_id: id, response_type: 'code', scope, redirect_uri: redirectUri, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'st-resume' });
      const browser = new FormBrowser();

      // Signed in, with consent to `openid`.
      await browser.follow(url(KEPT, 'openid'), running.baseUrl);
      await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
      if (browser.lastPage.includes('id="consent-allow"')) await browser.submit('consent-allow', {}, running.baseUrl);

      // A request at RETRACTED asks for `email`: a consent page, pending.
      await browser.follow(url(RETRACTED, 'openid email'), running.baseUrl);
      expect(browser.lastPage).toContain('id="consent-allow"');
      const pending = { value: browser.cookie('_interaction_resume') as string, sig: browser.cookie('_interaction_resume.sig') };
      expect(pending.value).toEqual(expect.any(String));

      // She approves `email` through another request of the same client, at KEPT.
      await browser.follow(url(KEPT, 'openid email'), running.baseUrl);
      const approved = await browser.submit('consent-allow', {}, running.baseUrl);
      expect(approved.leftTo?.startsWith(`${KEPT}?`)).toBe(true);

      // The client retracts RETRACTED (RFC 7592).
      await updateRegistration(client, { redirect_uris: [KEPT] });

      // The pending authorization is resumed.
      browser.setCookie('_interaction_resume', pending.value);
      if (pending.sig) browser.setCookie('_interaction_resume.sig', pending.sig);
      const resumed = await browser.follow(`${running.issuer}/authorize/${pending.value}`, running.baseUrl);
      const sentTo = resumed.leftTo === undefined ? undefined : { at: resumed.leftTo.split('?')[0], code: redirectParams(resumed.leftTo).has('code') };
      expect(sentTo?.at === RETRACTED || sentTo?.code === true ? sentTo : 'nothing to the retracted URI').toBe('nothing to the retracted URI');
    });

    it('sends neither the error nor the state to a redirect URI retracted between her "deny" and the resume', async () => {
      const client = await registerClient(running, 'rsa', { redirect_uris: [KEPT, RETRACTED] });
      const browser = new FormBrowser();
      const url = authorizationUrl(running.issuer, {
        client_id: String(client.metadata.client_id),
        response_type: 'code',
        scope: 'openid email',
        redirect_uri: RETRACTED,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        state: 'st-deny',
      });
      await browser.follow(url, running.baseUrl);
      await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
      expect(browser.lastPage).toContain('id="consent-deny"');

      // She denies; the answer sends her browser on to the resume URL (not followed yet: a slow network, a closed lid).
      const denied = await browser.post(browser.formAction('consent-deny', running.baseUrl), browser.hiddenFields('consent-deny'), running.baseUrl);
      expect(denied.status).toBe(303);
      const resume = new URL(denied.headers.get('location') as string, running.baseUrl).href;

      // Meanwhile the client retracts that URI (RFC 7592), say because its host was lost.
      await updateRegistration(client, { redirect_uris: [KEPT] });

      const resumed = await browser.follow(resume, running.baseUrl);
      const sentTo = resumed.leftTo?.split('?')[0];
      expect(sentTo === RETRACTED ? `error and state sent to ${resumed.leftTo}` : 'nothing sent to the retracted URI').toBe('nothing sent to the retracted URI');
    });

    it('a pushed request naming a URI retracted before /authorize loads it is refused there, with a page, not a redirect', async () => {
      const client = await twoRedirects();
      const { challenge } = pkcePair();
      const pushed = await fetch(`${running.issuer}/par`, {
        method: 'POST',
        headers: { authorization: basicAuthorization(client.metadata.client_id, String(client.metadata.client_secret), { formEncoded: true }), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: String(client.metadata.client_id), response_type: 'code', scope: 'openid', redirect_uri: RETRACTED, code_challenge: challenge, code_challenge_method: 'S256', state: 'st-par' }).toString(),
      });
      expect(pushed.status).toBe(201);
      const { request_uri: requestUri } = (await pushed.json()) as { request_uri: string };
      await updateRegistration(client, { redirect_uris: [KEPT] });
      const outcome = await outcomeOf(authorizationUrl(running.issuer, { client_id: String(client.metadata.client_id), request_uri: requestUri }));
      expect(outcome.interaction).toBeUndefined();
      expect(outcome.state).toBeUndefined();
      expect(outcome.error).toBe('invalid_redirect_uri');
    });
  });

  describe('a client disabled by the operator, or deleted, while she signs in', () => {
    it('disabled at her consent page, no code; enabled again, her approval then completes the sign-in (honest)', async () => {
      const client = await twoRedirects();
      const id = String(client.metadata.client_id);
      const { browser, verifier } = await startSignIn(client, KEPT);
      const step = await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
      expect(step.leftTo).toBeUndefined();
      expect(browser.lastPage).toContain('id="consent-allow"');
      const consentPage = browser.lastPage;

      expect((await call('POST', `/oidc/v1/management/clients/${id}/disable`)).status).toBe(200);
      const refused = await browser.submit('consent-allow', {}, running.baseUrl);
      expect(refused.leftTo).toBeUndefined();

      expect((await call('POST', `/oidc/v1/management/clients/${id}/enable`)).status).toBe(200);
      browser.lastPage = consentPage;
      const allowed = await browser.submit('consent-allow', {}, running.baseUrl);
      expect(allowed.leftTo?.startsWith(KEPT)).toBe(true);
      const code = redirectParams(allowed.leftTo as string).get('code') as string;
      const tokens = await redeemCode(running.issuer, client.metadata, code, verifier);
      expect(tokens.status).toBe(200);
    });

    it('a code issued before the client is disabled is refused while disabled (not spent) and redeemed once it is enabled (C2)', async () => {
      const client = await twoRedirects();
      const id = String(client.metadata.client_id);
      const { browser, verifier } = await startSignIn(client, KEPT);
      const leftTo = await finishSignIn(browser);
      const code = redirectParams(leftTo as string).get('code') as string;
      expect((await call('POST', `/oidc/v1/management/clients/${id}/disable`)).status).toBe(200);
      const during = await redeemCode(running.issuer, client.metadata, code, verifier);
      expect([during.status, during.body.error]).toEqual([401, 'invalid_client']);
      expect((await call('POST', `/oidc/v1/management/clients/${id}/enable`)).status).toBe(200);
      const after = await redeemCode(running.issuer, client.metadata, code, verifier);
      expect(after.status).toBe(200);
    });

    it('a client that deletes itself (RFC 7592 DELETE) at her login page gets no code, and its earlier code and access token stop working', async () => {
      const client = await twoRedirects();
      const earlier = await startSignIn(client, KEPT);
      const earlierCode = redirectParams((await finishSignIn(earlier.browser)) as string).get('code') as string;
      const pending = await startSignIn(client, KEPT);
      const deleted = await manage(String(client.metadata.registration_client_uri), 'DELETE', String(client.metadata.registration_access_token));
      expect(deleted.status).toBe(204);
      const leftTo = await finishSignIn(pending.browser);
      expect(leftTo).toBeUndefined();
      const token = await redeemCode(running.issuer, client.metadata, earlierCode, earlier.verifier);
      expect(token.status).toBe(401);
    });
  });
});

describe('honest resumes pass the redirect URI checks', () => {
  let running: RunningApp;
  let client: RegisteredClient;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
    client = await registerClient(running, 'rsa', { redirect_uris: [KEPT] });
  });
  afterAll(async () => running.close());

  /** Signs in and presses `button` for a request of the one-URI client; the last answer. */
  async function signInAndPress(button: 'consent-allow' | 'consent-deny', extra: Record<string, string | undefined>) {
    const browser = new FormBrowser();
    const url = authorizationUrl(running.issuer, {
      client_id: String(client.metadata.client_id),
      response_type: 'code',
      scope: 'openid email',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      state: 'st-honest',
      ...extra,
    });
    const first = await browser.follow(url, running.baseUrl);
    expect(first.leftTo).toBeUndefined();
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain('id="consent-allow"');
    return browser.submit(button, {}, running.baseUrl);
  }

  it('answers a denial with response_mode=form_post as a form to the registered redirect URI', async () => {
    const step = await signInAndPress('consent-deny', { redirect_uri: KEPT, response_mode: 'form_post' });
    const body = (await step.response?.text()) ?? '';
    // oidc-provider answers an error form_post with the error's status (400); a browser still submits it.
    expect(body).toContain(`action="${KEPT}"`);
    expect(body).toContain('access_denied');
  });
});

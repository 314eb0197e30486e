import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, BrowserContext, Page } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { allow, launchChromium } from '../helpers/chromium.js';
import { codeFlowUrl, pkcePair } from '../helpers/flow.js';

/**
 * A browser application (a single-page app, as oidc-client-ts runs one) is a public client: it redeems its code and
 * calls UserInfo from its own origin (CORS), and renews its tokens without refresh tokens (C3) by an
 * authorization request with `prompt=none` in a hidden iframe, whose callback page hands the answer to the page.
 * Our pages refuse to be framed (`frame-ancestors 'none'`), so only `prompt=none`, which shows no page, answers there.
 */
describe('a browser application: its own fetches, and silent renew in a hidden iframe (prompt=none)', () => {
  let running: RunningApp;
  let browser: Browser;
  let rp: Server;
  /** Redirects to `rp.localhost`: another site than the provider's 127.0.0.1. */
  let crossSite: ClientMetadata;
  /** Redirects to 127.0.0.1 on another port: the provider's own site, so her SameSite=Lax session reaches the iframe. */
  let sameSite: ClientMetadata;

  beforeAll(async () => {
    rp = createServer((req, res) => {
      res.setHeader('content-type', 'text/html');
      // The callback page in the iframe hands what it received to the page that framed it.
      if (req.url?.startsWith('/cb')) return void res.end('<script>parent.postMessage(location.search, "*")</script>');
      res.end('<p id="result"></p><script>addEventListener("message", (e) => { document.getElementById("result").textContent = e.data; });</script>');
    });
    await new Promise<void>((resolve) => rp.listen(0, '127.0.0.1', resolve));
    const { port } = rp.address() as AddressInfo;
    crossSite = { client_id: 'spa-cross', token_endpoint_auth_method: 'none', redirect_uris: [`http://rp.localhost:${port}/cb`] };
    sameSite = { client_id: 'spa-same', token_endpoint_auth_method: 'none', redirect_uris: [`http://127.0.0.1:${port}/cb`] };
    running = await startApp({ claimModules: createDemoClaimModules(), clients: [crossSite, sameSite] });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
    await new Promise<void>((resolve) => rp.close(() => resolve()));
  });

  const origin = (client: ClientMetadata): string => new URL((client.redirect_uris as string[])[0] as string).origin;

  /** A browser where she signed in and allowed `client` (email), back on the client's page. */
  async function signedIn(client: ClientMetadata): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(codeFlowUrl(running.issuer, client, { state: 'top', scope: 'openid email' }));
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await allow(page);
    await page.waitForURL(/\/cb\?/);
    await page.goto(`${origin(client)}/`);
    return { context, page };
  }

  /** Adds an iframe on `url` to the page; resolves once the frame has loaded (a refused frame loads an error page). */
  const frame = (page: Page, url: string): Promise<void> =>
    page.evaluate((src) => new Promise<void>((resolve) => {
      const f = document.createElement('iframe');
      f.onload = () => resolve();
      f.src = src;
      document.body.appendChild(f);
    }), url);

  /** What the callback page in the iframe handed to the page. */
  const answer = async (page: Page): Promise<URLSearchParams> => new URLSearchParams((await page.locator('#result').filter({ hasText: 'state=' }).textContent()) ?? '');

  it('honest: the application\'s page on another site redeems its code and reads UserInfo by fetch (CORS), without a secret', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      const { verifier, challenge } = pkcePair();
      await page.goto(codeFlowUrl(running.issuer, crossSite, { state: 'top', scope: 'openid email', code_challenge: challenge }));
      await page.fill('input[name="login"]', 'demo');
      await page.fill('input[name="password"]', 'demo');
      await page.click('#login-form button[type="submit"]');
      await allow(page);
      await page.waitForURL(/\/cb\?/);
      const code = new URL(page.url()).searchParams.get('code') as string;
      await page.goto(`${origin(crossSite)}/`);
      const seen = await page.evaluate(async ({ issuer, code, verifier, redirectUri }) => {
        const discovered = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as { token_endpoint: string; userinfo_endpoint: string };
        const tokens = (await (await fetch(discovered.token_endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, client_id: 'spa-cross' }),
        })).json()) as { access_token?: string; id_token?: string };
        const userinfo = (await (await fetch(discovered.userinfo_endpoint, { headers: { authorization: `Bearer ${tokens.access_token}` } })).json()) as { sub?: string };
        return { accessToken: typeof tokens.access_token, idToken: tokens.id_token?.split('.').length, sub: typeof userinfo.sub };
      }, { issuer: running.issuer, code, verifier, redirectUri: (crossSite.redirect_uris as string[])[0] as string });
      expect(seen).toEqual({ accessToken: 'string', idToken: 3, sub: 'string' });
    } finally {
      await context.close();
    }
  });

  it('honest: a client on the provider\'s own site gets a fresh code and its state in the iframe', async () => {
    const { context, page } = await signedIn(sameSite);
    try {
      await frame(page, codeFlowUrl(running.issuer, sameSite, { state: 'renew', scope: 'openid email', prompt: 'none' }));
      const params = await answer(page);
      expect({ code: params.has('code'), state: params.get('state'), error: params.get('error') }).toEqual({ code: true, state: 'renew', error: null });
    } finally {
      await context.close();
    }
  });

  it('honest: a client on another site of an http provider (SameSite=Lax session, not sent to the iframe) gets login_required with its state, never a silence', async () => {
    const { context, page } = await signedIn(crossSite);
    try {
      await frame(page, codeFlowUrl(running.issuer, crossSite, { state: 'renew', scope: 'openid email', prompt: 'none' }));
      const params = await answer(page);
      expect({ error: params.get('error'), state: params.get('state'), code: params.has('code') }).toEqual({ error: 'login_required', state: 'renew', code: false });
    } finally {
      await context.close();
    }
  });

  it('attack: a page of her own site framing a request that needs her consent (prompt=consent) never shows the consent page in the frame, and no code comes out', async () => {
    const { context, page } = await signedIn(sameSite);
    try {
      const served = page.waitForResponse((r) => r.url().includes('/interaction/') && r.request().resourceType() === 'document');
      // The frame's one committed navigation (redirects commit none), as Playwright records it: its onload can come first.
      const navigated = page.waitForEvent('framenavigated', (f) => f !== page.mainFrame() && !['', 'about:blank'].includes(f.url()));
      await frame(page, codeFlowUrl(running.issuer, sameSite, { state: 'framed', scope: 'openid email profile', prompt: 'consent' }));
      // The consent page was served to the frame, and refused there.
      expect((await served).status()).toBe(200);
      const framed = await navigated;
      expect({ url: framed?.url(), allow: await framed?.locator('#consent-allow').count(), result: await page.locator('#result').textContent() }).toEqual({ url: 'chrome-error://chromewebdata/', allow: 0, result: '' });
    } finally {
      await context.close();
    }
  });

  it('attack: a page of another site framing the login page (no prompt=none) never shows the form in the frame', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${origin(crossSite)}/`);
      const served = page.waitForResponse((r) => r.url().includes('/interaction/') && r.request().resourceType() === 'document');
      const navigated = page.waitForEvent('framenavigated', (f) => f !== page.mainFrame() && !['', 'about:blank'].includes(f.url()));
      await frame(page, codeFlowUrl(running.issuer, crossSite, { state: 'framed', scope: 'openid email' }));
      // The frame reached the interaction (on http without its Lax cookie, whose page says the sign-in cannot continue).
      expect((await served).url()).toContain(`${running.issuer}/interaction/`);
      const framed = await navigated;
      expect({ url: framed?.url(), login: await framed?.locator('#login-form').count() }).toEqual({ url: 'chrome-error://chromewebdata/', login: 0 });
    } finally {
      await context.close();
    }
  });
});

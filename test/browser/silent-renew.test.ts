import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, BrowserContext, Page } from 'playwright-core';

import { createApp, loadSettings, silentLogger, type SvcApp } from '../../lib/index.js';
import { TEST_PAIRWISE_KEY } from '../helpers/app.js';
import { allow } from '../helpers/chromium.js';
import { codeFlowUrl } from '../helpers/flow.js';
import { launchChromiumAllowingThirdPartyCookiesFor, launchChromiumFor, makeCertificate, startSite, type Site } from '../helpers/https-sites.js';
import { testProviderKeys } from '../helpers/provider-keys.js';
import { TEST_STORE_TIMEOUT_MS } from '../helpers/redis.js';

/**
 * Silent renew as a relying party on another site runs it against an https provider: an authorization request with
 * `prompt=none` in a hidden iframe, whose callback page hands what it received (by query, or posted by the
 * `form_post` answer page) to the page that framed it. Her session cookies (`SameSite=None; Secure`, the
 * `__Host-svc.browser` binding among them) reach the iframe only in a browser that lets third-party cookies through;
 * elsewhere the answer must still come, as `login_required`, never a silence. The `form_post` answer page must post
 * itself whether or not the browser runs its script.
 */
describe('silent renew in a hidden iframe of a relying party on another site, over https (Chromium)', () => {
  let browser: Browser;
  let allowing: { context: BrowserContext; close(): Promise<void> };
  let idp: Site;
  let rp: Site;
  let other: Site;
  let app: SvcApp;
  let issuer = '';
  let spa: ClientMetadata;
  let unapproved: ClientMetadata;

  beforeAll(async () => {
    const certificate = makeCertificate();
    [idp, rp, other] = await Promise.all([startSite('id.svc.test', certificate), startSite('app.rp.test', certificate), startSite('other.rp.test', certificate)]);
    spa = { client_id: 'spa', token_endpoint_auth_method: 'none', redirect_uris: [`${rp.origin}/cb`], post_logout_redirect_uris: [`${rp.origin}/bye`] };
    unapproved = { ...spa, client_id: 'spa-unapproved' };
    const settings = loadSettings({ env: {}, properties: { 'svc.base-url': idp.origin, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS, 'svc.subject.pairwise-key': TEST_PAIRWISE_KEY } });
    app = await createApp(settings, { logger: silentLogger, jwks: await testProviderKeys(), clients: [spa, unapproved] });
    issuer = app.svc.paths.issuer;
    const callback = app.callback();
    idp.serve((req, res) => void callback(req, res));
    // The framing page shows what its frame handed it; the callback hands the frame what it received, by query or posted.
    const relyingParty = (site: Site): void =>
      site.serve((req, res) => {
        res.setHeader('content-type', 'text/html');
        if (!req.url?.startsWith('/cb')) return void res.end('<p id="result"></p><script>addEventListener("message", (e) => { document.getElementById("result").textContent = e.data; });</script>');
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        req.on('end', () => res.end(`<script>parent.postMessage(${req.method === 'POST' ? JSON.stringify(body) : '(location.search || location.hash).slice(1)'}, "*")</script>`));
      });
    relyingParty(rp);
    relyingParty(other);
    [browser, allowing] = await Promise.all([launchChromiumFor(certificate), launchChromiumAllowingThirdPartyCookiesFor(certificate)]);
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await allowing?.close();
    await app?.svc.close();
    await Promise.all([idp, rp, other].map((site) => site?.close()));
  });

  /** Signs her in at the relying party by a top-level redirect in `context` and allows it; leaves the page on the relying party's site. */
  const signIn = async (context: BrowserContext): Promise<Page> => {
    const page = await context.newPage();
    await page.goto(codeFlowUrl(issuer, spa, { state: 'top' }));
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await allow(page);
    await page.waitForURL((url) => url.origin === rp.origin);
    await page.goto(`${rp.origin}/`);
    return page;
  };

  /** Frames a `prompt=none` request of `client` on `page` (state `renew`), and returns what its callback handed the page. */
  const renew = async (page: Page, client: ClientMetadata, params: Record<string, string> = {}): Promise<Record<string, string | boolean>> => {
    await page.evaluate(() => (document.getElementById('result') as HTMLElement).textContent = '');
    await page.evaluate((src) => {
      const frame = document.createElement('iframe');
      frame.src = src;
      document.body.appendChild(frame);
    }, codeFlowUrl(issuer, client, { state: 'renew', prompt: 'none', ...params }));
    const answer = new URLSearchParams((await page.locator('#result').filter({ hasText: 'state=' }).textContent()) ?? '');
    const { code, ...rest } = Object.fromEntries(answer);
    return { ...rest, code: code !== undefined };
  };

  const login = { error: 'login_required', error_description: 'End-User authentication is required', state: 'renew', code: false };

  it('honest: in a browser that lets third-party cookies through, a code and its state by query, fragment and form_post; a client she never approved gets consent_required, which says nothing of her; signed out, login_required', async () => {
    await allowing.context.clearCookies();
    const page = await signIn(allowing.context);
    const code = { state: 'renew', iss: issuer, code: true };
    expect([await renew(page, spa), await renew(page, spa, { response_mode: 'fragment' }), await renew(page, spa, { response_mode: 'form_post' })]).toEqual([code, code, code]);
    expect(await renew(page, unapproved, { scope: 'openid email profile' })).toEqual({ error: 'consent_required', error_description: 'the client is not approved', state: 'renew', iss: issuer, code: false });

    await page.goto(`${issuer}/logout?client_id=spa`);
    await page.click('button[name="logout"]');
    await page.waitForSelector('h1:has-text("Signed out")');
    await page.goto(`${rp.origin}/`);
    expect([await renew(page, spa), await renew(page, spa, { response_mode: 'form_post' })]).toEqual([{ ...login, iss: issuer }, { ...login, iss: issuer }]);
    await page.close();
  });

  it('honest: in a browser blocking third-party cookies, login_required with its state by query and by form_post, never a silence; a top-level prompt=none then brings a code', async () => {
    const context = await browser.newContext();
    const page = await signIn(context);
    expect([await renew(page, spa), await renew(page, spa, { response_mode: 'form_post' })]).toEqual([{ ...login, iss: issuer }, { ...login, iss: issuer }]);
    await page.goto(codeFlowUrl(issuer, spa, { state: 'top', prompt: 'none' }));
    await page.waitForURL((url) => url.origin === rp.origin);
    expect(new URL(page.url()).searchParams.has('code')).toBe(true);
    await context.close();
  });

  it('honest: the form_post answer page posts itself to the callback under its Content-Security-Policy, and with JavaScript off by its Continue button', async () => {
    const posted: Record<string, string | boolean>[] = [];
    for (const javaScriptEnabled of [true, false]) {
      const context = await browser.newContext({ javaScriptEnabled });
      const page = await context.newPage();
      await page.goto(codeFlowUrl(issuer, spa, { state: 'posted', response_mode: 'form_post' }));
      await page.fill('input[name="login"]', 'demo');
      await page.fill('input[name="password"]', 'demo');
      await page.click('#login-form button[type="submit"]');
      const callback = page.waitForRequest((request) => request.url() === `${rp.origin}/cb` && request.method() === 'POST');
      await allow(page);
      if (!javaScriptEnabled) await page.click('form[method="post"] button[type="submit"]');
      const { code, ...rest } = Object.fromEntries(new URLSearchParams((await callback).postData() ?? ''));
      posted.push({ ...rest, code: code !== undefined });
      await context.close();
    }
    expect(posted).toEqual([{ state: 'posted', iss: issuer, code: true }, { state: 'posted', iss: issuer, code: true }]);
  });

  it("attack: a page of another origin than the client's redirect URI frames the form_post answer: it is refused there, and the frame hands nothing on", async () => {
    await allowing.context.clearCookies();
    const page = await signIn(allowing.context);
    await page.goto(`${other.origin}/`);
    const served = page.waitForResponse((r) => r.url().startsWith(`${issuer}/authorize`));
    // The frame's one committed navigation: Chromium's error page where the answer page is refused.
    const navigated = page.waitForEvent('framenavigated', (f) => f !== page.mainFrame() && !['', 'about:blank'].includes(f.url()));
    await page.evaluate((src) => {
      const frame = document.createElement('iframe');
      frame.src = src;
      document.body.appendChild(frame);
    }, codeFlowUrl(issuer, spa, { state: 'renew', prompt: 'none', response_mode: 'form_post' }));
    expect((await served).status()).toBe(200);
    expect({ frame: (await navigated).url(), result: await page.locator('#result').textContent() }).toEqual({ frame: 'chrome-error://chromewebdata/', result: '' });
    await page.close();
  });
});

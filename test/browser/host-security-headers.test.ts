import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Koa, { type Middleware } from 'koa';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createSvcConnect, loadSettings, silentLogger, type SvcConnect } from '../../lib/index.js';
import { TEST_PAIRWISE_KEY } from '../helpers/app.js';
import { allow, launchChromium } from '../helpers/chromium.js';
import { codeFlowUrl } from '../helpers/flow.js';
import { startPopupRelyingParty, type PopupRelyingParty } from '../helpers/popup-rp.js';
import { startHostServer, type HostServer } from '../helpers/host-server.js';
import { testProviderKeys } from '../helpers/provider-keys.js';

/** The headers helmet (koa-helmet) sets by default, before the rest of the app runs: a host app's hardening. */
const helmetDefaults: Middleware = async (ctx, next) => {
  ctx.set({
    'Content-Security-Policy': "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';frame-ancestors 'self';img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self' 'unsafe-inline';upgrade-insecure-requests",
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Origin-Agent-Cluster': '?1',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-DNS-Prefetch-Control': 'off',
    'X-Download-Options': 'noopen',
    'X-Frame-Options': 'SAMEORIGIN',
    'X-Permitted-Cross-Domain-Policies': 'none',
    'X-XSS-Protection': '0',
  });
  await next();
};

/**
 * A host app hardened with helmet's defaults before `svc.middleware`, and a relying party that signs her in within a
 * popup (oidc-client-ts `signinPopup`, MSAL `loginPopup`): it hears of the result through `window.opener`.
 */
describe("a host app with helmet's default headers before svc.middleware (Chromium)", () => {
  let host: HostServer;
  let svc: SvcConnect;
  let browser: Browser;
  let rp: PopupRelyingParty;
  let client: ClientMetadata;

  beforeAll(async () => {
    rp = await startPopupRelyingParty();
    client = rp.client;
    host = await startHostServer();
    svc = await createSvcConnect(loadSettings({ env: {}, properties: { 'svc.base-url': host.base, 'svc.subject.pairwise-key': TEST_PAIRWISE_KEY } }), {
      logger: silentLogger,
      jwks: await testProviderKeys(),
      claimModules: createDemoClaimModules(),
      clients: [client],
    });
    host.serve(new Koa({ keys: svc.cookieKeys }).use(helmetDefaults).use(svc.middleware));
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await host?.close();
    await svc?.close();
    await rp?.close();
  });

  const signInAndAllow = async (page: Page): Promise<void> => {
    await page.waitForSelector('input[name="login"]');
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await allow(page);
  };

  it('a sign-in in a popup the relying party opened still hands it the code and state: no page of ours severs its opener', async () => {
    const opener = await (await browser.newContext()).newPage();
    try {
      await opener.goto(rp.page);
      const [popup] = await Promise.all([
        opener.waitForEvent('popup'),
        opener.evaluate((url) => void window.open(url, 'signin', 'popup,width=500,height=600'), codeFlowUrl(`${host.base}/oidc/v1`, client, { state: 'st', scope: 'openid email' })),
      ]);
      await signInAndAllow(popup);
      const answer = new URLSearchParams((await opener.locator('#result').filter({ hasText: 'code=' }).textContent()) ?? '');
      expect([answer.get('code'), answer.get('state')]).toEqual([expect.any(String), 'st']);
    } finally {
      await opener.context().close();
    }
  });

  it('honest: a sign-in in the same window reaches the relying party with the code', async () => {
    const page = await (await browser.newContext()).newPage();
    try {
      await page.goto(codeFlowUrl(`${host.base}/oidc/v1`, client, { state: 'st' }));
      await signInAndAllow(page);
      await page.waitForURL((url) => url.hostname === 'rp.localhost');
      expect(new URL(page.url()).searchParams.get('code')).toEqual(expect.any(String));
    } finally {
      await page.context().close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { allow, launchChromium, launchChromiumBlockingCookies } from '../helpers/chromium.js';
import { codeFlowUrl } from '../helpers/flow.js';

const app: ClientMetadata = { client_id: 'cookie-app', client_name: 'Cookie App', client_secret: 'cookie-app-secret-that-is-long-enough-0123456789', redirect_uris: ['http://app.localhost/cb'] };

const NEEDS_COOKIES = 'signing in needs them';
const ENDED = 'Your sign-in expired, was finished already';

describe('the error page of a sign-in the browser kept no cookie of (C8)', () => {
  let running: RunningApp;
  let browser: Browser;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules(), clients: [app] });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
  });

  it('a browser blocking cookies for the site is told that signing in needs them, not only that her sign-in expired', async () => {
    const blocking = await launchChromiumBlockingCookies();
    try {
      const page = await blocking.context.newPage();
      const answer = await page.goto(codeFlowUrl(running.issuer, app, { scope: 'openid email' }));
      expect(answer?.status()).toBe(400);
      expect(await page.textContent('main')).toContain(NEEDS_COOKIES);
    } finally {
      await blocking.close();
    }
  });

  it('honest: the back button after her Allow, cookies kept, says her sign-in ended, without blaming cookies', async () => {
    const context = await browser.newContext();
    await context.route(/^http:\/\/app\.localhost\//, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'received' }));
    const page = await context.newPage();
    await page.goto(codeFlowUrl(running.issuer, app, { scope: 'openid email' }));
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await page.waitForSelector('#consent-allow');
    await Promise.all([page.waitForRequest(/^http:\/\/app\.localhost\/cb\?code=/), allow(page)]);
    await page.waitForURL(/^http:\/\/app\.localhost\//);
    await page.goBack();
    const text = await page.textContent('main');
    expect(text).toContain(ENDED);
    expect(text).not.toContain(NEEDS_COOKIES);
    await context.close();
  });
});

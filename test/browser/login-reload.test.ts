import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';

import { createApp, loadSettings, silentLogger, type SvcApp } from '../../lib/index.js';
import { TEST_PAIRWISE_KEY } from '../helpers/app.js';
import { allow } from '../helpers/chromium.js';
import { countingAuthenticator } from '../helpers/counting-authenticator.js';
import { codeFlowUrl } from '../helpers/flow.js';
import { launchChromiumFor, makeCertificate, startSite, type Site, type TestCertificate } from '../helpers/https-sites.js';
import { testProviderKeys } from '../helpers/provider-keys.js';
import { TEST_STORE_TIMEOUT_MS } from '../helpers/redis.js';

/**
 * She reloads the login page after a failed sign-in (F5): her browser asks the page again (Post/Redirect/Get, C8), and
 * sends her password nowhere, so no second failure is counted against her name or her neighbours' address. Over https
 * (the `__Host-` cookie that carries the failure to the page), at `id.svc.test` in Chromium.
 */
describe.each([
  ['http', 'http'],
  ['https', 'https'],
] as const)('reloading the login page after a failed sign-in, %s (Chromium)', (_label, scheme) => {
  const counting = countingAuthenticator();
  let certificate: TestCertificate | undefined;
  let browser: Browser;
  let idp: Site;
  let app: SvcApp;
  let client: ClientMetadata;

  beforeAll(async () => {
    certificate = scheme === 'https' ? makeCertificate() : undefined;
    idp = await startSite('id.svc.test', certificate);
    client = { client_id: 'rp', client_secret: 'rp-secret-that-is-long-enough-0123456789abc', redirect_uris: ['https://app.rp.test/cb'] };
    const properties = { 'svc.base-url': idp.origin, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS, 'svc.subject.pairwise-key': TEST_PAIRWISE_KEY, 'svc.login.lockout-threshold': 3 };
    app = await createApp(loadSettings({ env: {}, properties }), { logger: silentLogger, jwks: await testProviderKeys(), clients: [client], authenticator: counting.authenticator });
    const callback = app.callback();
    idp.serve((req, res) => void callback(req, res));
    browser = await launchChromiumFor(certificate ?? makeCertificate());
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await app?.svc.close();
    await idp?.close();
  });

  /** A fresh browser at the login page, counting the sign-in posts it sends. */
  const atLoginPage = async (): Promise<{ page: Page; posts: () => number }> => {
    const context = await browser.newContext();
    await context.route(/^https:\/\/app\.rp\.test\//, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'received' }));
    const page = await context.newPage();
    let posts = 0;
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname.endsWith('/login')) posts += 1;
    });
    await page.goto(codeFlowUrl(app.svc.paths.issuer, client, { state: 'st' }));
    await page.waitForSelector('#login-form');
    return { page, posts: () => posts };
  };
  /** Sends the form with a wrong `password`, until the page the answer sends her to has loaded. */
  const failSignIn = async (page: Page, login: string, password: string): Promise<void> => {
    await page.fill('#login', login);
    await page.fill('#password', password);
    const landed = page.waitForResponse((response) => response.request().isNavigationRequest() && (response.status() < 300 || response.status() >= 400));
    await page.click('#login-form button[type="submit"]');
    await landed;
    await page.waitForLoadState();
  };
  /** The page as she sees it: the error line, what the fields hold and which one has the cursor. */
  const shown = (page: Page) =>
    page.evaluate(() => ({
      error: document.getElementById('login-error')?.textContent ?? null,
      login: (document.getElementById('login') as HTMLInputElement | null)?.value,
      password: (document.getElementById('password') as HTMLInputElement | null)?.value,
      focused: document.activeElement?.id,
    }));
  /** Until autofocus has put the cursor in a field. */
  const settled = (page: Page) => page.waitForFunction(() => document.activeElement instanceof HTMLInputElement);

  it('a wrong password, then F5 three times: no post is sent again, no failure counted, and the page still says why, with her login and the cursor in the password field; a second wrong password is counted; the right one then signs her in', async () => {
    const { page, posts } = await atLoginPage();
    const judged = counting.judged();
    await failSignIn(page, 'demo', 'wrong-password');
    await page.waitForSelector('#login-error');
    await settled(page);
    const afterFailure = await shown(page);
    expect(afterFailure).toEqual({ error: 'The login or password is not correct.', login: 'demo', password: '', focused: 'password' });
    expect({ posts: posts(), judged: counting.judged() - judged }).toEqual({ posts: 1, judged: 1 });
    for (let i = 0; i < 3; i += 1) {
      const reloaded = await page.reload();
      expect(reloaded?.request().method()).toBe('GET');
      expect(reloaded?.status()).toBe(403);
      await settled(page);
      expect(await shown(page)).toEqual(afterFailure);
    }
    expect({ posts: posts(), judged: counting.judged() - judged }).toEqual({ posts: 1, judged: 1 });
    // A second wrong password she sends is a real attempt: judged and counted.
    await failSignIn(page, 'demo', 'wrong-again');
    await page.reload();
    await settled(page);
    expect(await shown(page)).toEqual(afterFailure);
    expect({ posts: posts(), judged: counting.judged() - judged }).toEqual({ posts: 2, judged: 2 });
    const failedCookie = scheme === 'https' ? '__Host-svc.login-failed' : 'svc.login-failed';
    expect((await page.context().cookies()).map((c) => c.name)).toContain(failedCookie);
    // She types on where the cursor is: her password, and signs in (the sign-in cookie binds her browser as before).
    await page.keyboard.type('demo');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#consent-allow');
    expect((await page.context().cookies()).map((c) => c.name)).not.toContain(failedCookie);
    await allow(page);
    await page.waitForURL((url) => url.origin === 'https://app.rp.test');
    expect(new URL(page.url()).searchParams.get('code')).toEqual(expect.any(String));
    expect({ posts: posts(), judged: counting.judged() - judged }).toEqual({ posts: 3, judged: 3 });
    await page.context().close();
  });

  it('locked out (429), F5 shows the same refusal and judges nothing; a real post after it is sent, and refused again', async () => {
    const { page, posts } = await atLoginPage();
    const login = `locked-${scheme}`;
    const judged = counting.judged();
    for (let i = 0; i < 4; i += 1) await failSignIn(page, login, `wrong-${i}`);
    await page.waitForSelector('#login-error[data-retry-after]');
    expect({ posts: posts(), judged: counting.judged() - judged }).toEqual({ posts: 4, judged: 3 });
    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(429);
    await settled(page);
    expect(await shown(page)).toEqual({ error: expect.stringMatching(/^Too many failed sign-ins\. Try again in \d+ seconds/), login, password: '', focused: 'password' });
    expect({ posts: posts(), judged: counting.judged() - judged }).toEqual({ posts: 4, judged: 3 });
    await failSignIn(page, login, 'wrong-again');
    await page.waitForSelector('#login-error[data-retry-after]');
    expect({ posts: posts(), judged: counting.judged() - judged }).toEqual({ posts: 5, judged: 3 });
    await page.context().close();
  });
});

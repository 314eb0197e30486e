import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { pairwiseSub, sectorOf } from '../../policies/subjects.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { allow, launchChromium, screenshot } from '../helpers/chromium.js';
import { codeFlowUrl } from '../helpers/flow.js';

const PAIRWISE_KEY = 'browser-pairwise-key-0123456789abcdefgh';

/** Two relying parties whose callbacks nobody serves. */
const appA: ClientMetadata = { client_id: 'tab-a', client_name: 'App A', client_secret: 'tab-a-secret-that-is-long-enough-0123456789', redirect_uris: ['http://a.localhost/cb'] };
const appB: ClientMetadata = { client_id: 'tab-b', client_name: 'App B', client_secret: 'tab-b-secret-that-is-long-enough-0123456789', redirect_uris: ['http://b.localhost/cb'] };

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string;
  nodes: { target: string[] }[];
}

/** Runs axe-core in the page for WCAG 2.x A and AA rules; returns the violations. */
async function axe(page: Page): Promise<AxeViolation[]> {
  await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    const w = window as unknown as { axe: { run(ctx: Document, opts: unknown): Promise<{ violations: AxeViolation[] }> } };
    const result = await w.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
}

describe('login and consent pages in Chromium (C3, C8)', () => {
  let running: RunningApp;
  let browser: Browser;
  /** A fresh browser profile (no cookies) for each test. bypassCSP only lets the test inject axe-core. */
  const freshPage = async (): Promise<Page> => {
    const context = await browser.newContext({ bypassCSP: true });
    return context.newPage();
  };

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules(), clients: [appA, appB], properties: { 'svc.subject.pairwise-key': PAIRWISE_KEY } });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
  });

  const demo = async (page: Page, prompt = '', scopes: string[] = ['email']): Promise<void> => {
    await page.goto(`${running.baseUrl}/oidcdemo/login`);
    for (const scope of scopes) await page.check(`input[name="scope"][value="${scope}"]`);
    if (prompt) await page.selectOption('#prompt', prompt);
    await page.click('#demo-form button[type="submit"]');
  };
  const signIn = async (page: Page, login: string, password: string): Promise<void> => {
    await page.fill('input[name="login"]', login);
    await page.fill('input[name="password"]', password);
    await page.click('#login-form button[type="submit"]');
  };

  it('has no detectable WCAG A/AA violations on the login and consent pages', async () => {
    const page = await freshPage();
    await demo(page);
    await page.waitForSelector('#login-form');
    expect(await page.getAttribute('html', 'lang')).toBe('en');
    expect(await axe(page)).toEqual([]);
    await signIn(page, 'demo', 'demo');
    await page.waitForSelector('#consent-allow');
    expect(await axe(page)).toEqual([]);
    // Allow is held off until a pointer moves on the page (lib/pages/seen-gate.ts): both states are checked.
    await page.mouse.move(0, 0);
    await page.mouse.move(200, 200, { steps: 4 });
    expect(await page.locator('#consent-allow button').isEnabled()).toBe(true);
    expect(await axe(page)).toEqual([]);
    await page.close();
  });

  it("posts the login and consent forms with the provider's own Origin, by which a browser without Fetch Metadata (Safari before 16.4) is judged", async () => {
    const page = await freshPage();
    const origins: (string | null)[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().startsWith(running.baseUrl)) origins.push(request.headers().origin ?? null);
    });
    await demo(page);
    await page.waitForSelector('#login-form');
    await signIn(page, 'demo', 'demo');
    await page.waitForSelector('#consent-allow');
    await allow(page);
    await page.waitForURL((url) => url.pathname.endsWith('/callback'));
    // The demo form, the login form and the consent form; `Origin: null` would be refused without Sec-Fetch-Site.
    expect(origins).toEqual([running.baseUrl, running.baseUrl, running.baseUrl]);
    await page.close();
  });

  it("tells a relying party's callback neither the page it came from nor the provider's origin (no Referer)", async () => {
    const page = await freshPage();
    await page.context().route(/^http:\/\/a\.localhost\//, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'received' }));
    const callback = page.waitForRequest((request) => request.url().startsWith('http://a.localhost/cb'));
    await page.goto(codeFlowUrl(running.issuer, appA, { state: 'referer', scope: 'openid email' }));
    await signIn(page, 'demo', 'demo');
    await allow(page);
    expect((await callback).headers().referer).toBeUndefined();
    await page.close();
  });

  it('shows the same error for a wrong password and an unknown account, on the login page', async () => {
    const page = await freshPage();
    await demo(page);
    await page.waitForSelector('#login-form');
    await signIn(page, 'demo', 'not-the-password');
    await page.waitForSelector('#login-error');
    await screenshot(page, 'login-error');
    const wrongPassword = await page.textContent('#login-error');
    await signIn(page, 'nobody-here', 'whatever');
    await page.waitForSelector('#login-error');
    const unknownAccount = await page.textContent('#login-error');
    expect(wrongPassword).toBe('The login or password is not correct.');
    expect(unknownAccount).toBe(wrongPassword);
    await page.close();
  });

  /** Until the page has put the cursor in a field (autofocus applies after load): what she types lands there. */
  const typingLands = (page: Page) => page.waitForFunction(() => document.activeElement instanceof HTMLInputElement);

  it('after a wrong password her login stays and the cursor waits in the password field: what she types next is not shown in the login field', async () => {
    const page = await freshPage();
    await page.goto(codeFlowUrl(running.issuer, appA, { scope: 'openid email' }));
    await typingLands(page);
    await page.keyboard.type('demo');
    await page.keyboard.press('Tab');
    await page.keyboard.type('not-the-password');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#login-error');
    await typingLands(page);
    // A screen reader names the field she lands in with the error: the error line is its description.
    const description = await page.evaluate(() => document.getElementById(document.activeElement?.getAttribute('aria-describedby') ?? '')?.textContent);
    expect(description).toBe('The login or password is not correct.');
    await page.keyboard.type('demo');
    expect({ login: await page.inputValue('#login'), password: await page.inputValue('#password') }).toEqual({ login: 'demo', password: 'demo' });
    await page.keyboard.press('Enter');
    await page.waitForSelector('#consent-allow');
    await page.close();
  });

  it('honest: a fresh login page puts the cursor in the login field', async () => {
    const page = await freshPage();
    await page.goto(codeFlowUrl(running.issuer, appA, { scope: 'openid email' }));
    await typingLands(page);
    await page.keyboard.type('demo');
    expect({ login: await page.inputValue('#login'), password: await page.inputValue('#password') }).toEqual({ login: 'demo', password: '' });
    await page.close();
  });

  it('signs in once, then: no prompt → no pages; prompt=login → the login page; prompt=consent → consent again', async () => {
    const page = await freshPage();
    // Which of our pages the browser was shown, in order (login or consent), per step.
    let shown: string[] = [];
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) shown.push(new URL(frame.url()).pathname);
    });
    const pagesShown = (): string[] => {
      const kinds: string[] = [];
      for (const path of shown) if (/\/interaction\//.test(path)) kinds.push(path);
      shown = [];
      return kinds;
    };
    const subject = async (): Promise<unknown> => (JSON.parse((await page.textContent('#id-token-claims')) ?? '{}') as { sub?: unknown }).sub;
    // The demo client is pairwise (the default) and redirects to the loopback interface here: a sector of its own.
    const herSub = async (): Promise<string> => {
      const { aud } = JSON.parse((await page.textContent('#id-token-claims')) ?? '{}') as { aud?: unknown };
      return pairwiseSub(PAIRWISE_KEY, sectorOf({ redirect_uris: [`${running.baseUrl}/oidcdemo/callback`], client_id: aud }) as string, 'demo-0001');
    };

    await demo(page);
    await page.waitForSelector('#login-form');
    await signIn(page, 'demo', 'demo');
    await allow(page);
    await page.waitForSelector('#userinfo-claims');
    expect(await subject()).toBe(await herSub());
    expect(pagesShown().length).toBeGreaterThanOrEqual(2); // login, then consent

    await demo(page);
    await page.waitForSelector('#userinfo-claims');
    expect(pagesShown()).toEqual([]); // signed in and consented: straight back, no page
    expect(await subject()).toBe(await herSub());

    await demo(page, 'login');
    await page.waitForSelector('#login-form');
    expect(await page.isVisible('#consent-allow')).toBe(false);
    await screenshot(page, 'prompt-login');
    await signIn(page, 'demo', 'demo');
    await page.waitForSelector('#userinfo-claims');
    expect(await subject()).toBe(await herSub());
    expect(pagesShown().length).toBeGreaterThanOrEqual(1); // the login page, no consent needed
    expect(await page.isVisible('#consent-allow')).toBe(false);

    await demo(page, 'consent');
    await page.waitForSelector('#consent-allow');
    expect(await page.isVisible('#login-form')).toBe(false); // still signed in: consent only
    await screenshot(page, 'prompt-consent');
    await allow(page);
    await page.waitForSelector('#userinfo-claims');
    expect(await subject()).toBe(await herSub());
    await page.close();
  });

  describe('two tabs of one browser signing in at once', () => {
    /** Two tabs of one fresh profile, each at the login page of its own client; every callback requested is recorded. */
    const twoTabs = async (): Promise<{ a: Page; b: Page; callbacks: URL[] }> => {
      const a = await freshPage();
      const b = await a.context().newPage();
      const callbacks: URL[] = [];
      // The request the browser makes is the application receiving her answer. Answered here: a refused connection
      // would leave an error page, which Chromium may load again (the same callback twice) when the tab is shown.
      await a.context().route(/^http:\/\/[ab]\.localhost\//, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'received' }));
      // Chromium may fetch one callback URL again (seen under load, the same code and state): that is no second answer
      // of the provider, whose every code is a new URL, so a URL is recorded once.
      a.context().on('request', (request) => {
        const url = new URL(request.url());
        if (/^http:\/\/[ab]\.localhost\//.test(url.href) && !callbacks.some((seen) => seen.href === url.href)) callbacks.push(url);
      });
      await a.goto(codeFlowUrl(running.issuer, appA, { state: 'tab-a', scope: 'openid email' }));
      await b.goto(codeFlowUrl(running.issuer, appB, { state: 'tab-b', scope: 'openid profile' }));
      return { a, b, callbacks };
    };
    const summary = (callbacks: URL[]): string[] => callbacks.map((u) => `${u.host} ${u.searchParams.has('code') ? 'code' : u.searchParams.get('error')} ${u.searchParams.get('state')}`);

    it('honest: she signs in in tab A, then in tab B (its login page opened before), and allows in B then A: each application gets its own code and state', async () => {
      const { a, b, callbacks } = await twoTabs();
      await signIn(a, 'demo', 'demo');
      await a.waitForSelector('#consent-allow');
      await signIn(b, 'demo', 'demo');
      await Promise.all([b.waitForRequest(/^http:\/\/b\.localhost\//), allow(b)]);
      await Promise.all([a.waitForRequest(/^http:\/\/a\.localhost\//), allow(a)]);
      expect(summary(callbacks)).toEqual(['b.localhost code tab-b', 'a.localhost code tab-a']);
    });

    it('attack: another person signs in in tab B while tab A waits at her consent: her Allow in A sends no code to anyone, and the page says her sign-in ended', async () => {
      const { a, b, callbacks } = await twoTabs();
      await signIn(a, 'demo', 'demo');
      await a.waitForSelector('#consent-allow');
      await signIn(b, 'demo-basic', 'demo-basic');
      await b.waitForSelector('#consent-allow');
      await allow(a);
      await a.waitForSelector('h1:has-text("Sign-in could not continue")');
      expect({ callbacks: summary(callbacks), page: await a.textContent('main') }).toEqual({ callbacks: [], page: expect.stringContaining('Your sign-in expired, was finished already') });
    });
  });

});

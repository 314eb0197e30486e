import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { launchChromium } from '../helpers/chromium.js';
import { codeFlowUrl } from '../helpers/flow.js';

/** A phone's layout viewport: a page wider than this is shown zoomed out, every word of it smaller. */
const PHONE = { width: 375, height: 740 };

/** A host of four 60-letter labels: valid, registrable, and without a place to break a line. */
const LONG_HOST = Array.from({ length: 4 }, (_v, i) => `${String.fromCharCode(97 + i)}`.repeat(60)).join('.');

const client = (id: string, name: string, host = 'rp.example'): ClientMetadata => ({
  client_id: id,
  client_name: name,
  client_secret: `${id}-secret-that-is-long-enough-0123456789`,
  redirect_uris: [`https://${host}/cb`],
});

/** What a registering client controls on the pages, at most 80 characters of name: none may widen them. */
const CLIENTS = [
  client('letters', 'W'.repeat(80)),
  // U+FDFD, one character several letters wide.
  client('wide', '\ufdfd'.repeat(80)),
  client('host', 'Example RP', LONG_HOST),
];

describe('the login and consent pages on a phone keep their width whatever a client registered (docs/security-model.md "Pages")', () => {
  let running: RunningApp;
  let browser: Browser;
  const phonePage = async (): Promise<Page> => {
    const context = await browser.newContext({ viewport: PHONE, isMobile: true });
    return context.newPage();
  };
  /** The page's width and the layout viewport's: a browser widens the viewport (zooms out) to fit what overflows. */
  const widths = (page: Page) => page.evaluate(() => ({ content: document.documentElement.scrollWidth, viewport: window.innerWidth }));

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules(), clients: [...CLIENTS, client('honest', 'Example RP')] });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
  });

  it.each(CLIENTS.map((c) => c.client_id))('attack (%s): the pages fit the phone, so the destination and the buttons keep their size', async (id) => {
    const page = await phonePage();
    await page.goto(codeFlowUrl(running.issuer, CLIENTS.find((c) => c.client_id === id) as ClientMetadata, { scope: 'openid email' }));
    expect(await widths(page)).toEqual({ content: PHONE.width, viewport: PHONE.width });
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await page.waitForSelector('#consent-allow');
    expect(await widths(page)).toEqual({ content: PHONE.width, viewport: PHONE.width });
  });

  it('honest: a short name stays on one line, whole', async () => {
    const page = await phonePage();
    await page.goto(codeFlowUrl(running.issuer, client('honest', 'Example RP'), { scope: 'openid email' }));
    const name = page.locator('bdi');
    expect(await name.textContent()).toBe('Example RP');
    expect((await name.boundingBox())?.height).toBeLessThan(30);
    expect(await widths(page)).toEqual({ content: PHONE.width, viewport: PHONE.width });
  });
});

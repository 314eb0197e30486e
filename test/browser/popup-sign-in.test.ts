import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { allow, launchChromium } from '../helpers/chromium.js';
import { codeFlowUrl } from '../helpers/flow.js';
import { startPopupRelyingParty, type PopupRelyingParty } from '../helpers/popup-rp.js';

/**
 * A relying party that signs her in within a popup (oidc-client-ts `signinPopup`, MSAL `loginPopup`) hears of the
 * result through `window.opener`: no page on the way may sever it (`Cross-Origin-Opener-Policy: same-origin` would).
 */
describe('sign-in in a popup window opened by the relying party', () => {
  let running: RunningApp;
  let browser: Browser;
  let rp: PopupRelyingParty;
  let client: ClientMetadata;

  beforeAll(async () => {
    rp = await startPopupRelyingParty();
    client = rp.client;
    running = await startApp({ claimModules: createDemoClaimModules(), clients: [client] });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
    await rp?.close();
  });

  /** The relying party's page, and the popup it opened on the authorization request. */
  const openPopup = async (): Promise<{ opener: Page; popup: Page }> => {
    const opener = await (await browser.newContext()).newPage();
    await opener.goto(rp.page);
    const [popup] = await Promise.all([
      opener.waitForEvent('popup'),
      opener.evaluate((url) => void Object.assign(window, { signin: window.open(url, 'signin', 'popup,width=500,height=600') }), codeFlowUrl(running.issuer, client, { state: 'st', scope: 'openid email' })),
    ]);
    await popup.waitForSelector('input[name="login"]');
    return { opener, popup };
  };

  it('honest: after sign-in and Allow in the popup, the page that opened it receives the code and state', async () => {
    const { opener, popup } = await openPopup();
    try {
      await popup.fill('input[name="login"]', 'demo');
      await popup.fill('input[name="password"]', 'demo');
      await popup.click('#login-form button[type="submit"]');
      await allow(popup);
      const answer = new URLSearchParams((await opener.locator('#result').filter({ hasText: 'code=' }).textContent()) ?? '');
      expect([answer.get('code'), answer.get('state')]).toEqual([expect.any(String), 'st']);
    } finally {
      await opener.context().close();
    }
  });

  it('attack: the opener\'s handle on the popup tells the login page from the consent page by nothing it can read', async () => {
    const { opener, popup } = await openPopup();
    const seen = () =>
      opener.evaluate(() => {
        const { signin: popup } = window as unknown as { signin: Window | null };
        let location: string;
        try {
          location = String(popup?.location.href);
        } catch (err) {
          location = (err as Error).name;
        }
        return { frames: popup?.length, closed: popup?.closed, location };
      });
    try {
      const onLogin = await seen();
      await popup.fill('input[name="login"]', 'demo');
      await popup.fill('input[name="password"]', 'demo');
      await popup.click('#login-form button[type="submit"]');
      await popup.waitForSelector('#consent-allow');
      expect(await seen()).toEqual(onLogin);
      expect(onLogin).toEqual({ frames: 0, closed: false, location: 'SecurityError' });
    } finally {
      await opener.context().close();
    }
  });
});

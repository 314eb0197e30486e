import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { allow, launchChromium, screenshot } from '../helpers/chromium.js';
import { pairwiseSub, sectorOf } from '../../policies/subjects.js';
import { startMounted, type Mounting, type MountedApp } from '../helpers/mounted.js';

const PAIRWISE_KEY = 'browser-pairwise-key-0123456789abcdefgh';

describe('the demo page under a base path, in Chromium (docs/embedding.md "Mounting under a path")', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => browser?.close());

  describe.each<Mounting>(['koa-mount /auth', 'createApp /auth'])('%s', (mounting) => {
    let running: MountedApp;
    beforeAll(async () => {
      running = await startMounted(mounting, { claimModules: createDemoClaimModules(), properties: { 'svc.subject.pairwise-key': PAIRWISE_KEY } });
    });
    afterAll(async () => running?.close());

    it('runs a whole flow: every page and cookie on /auth, the decrypted claims shown at the end', async () => {
      const page = await browser.newPage();
      const visited: string[] = [];
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame()) visited.push(frame.url());
      });
      await page.goto(`${running.baseUrl}/oidcdemo/login`);
      for (const scope of ['profile', 'email']) await page.check(`input[name="scope"][value="${scope}"]`);
      await page.click('#demo-form button[type="submit"]');
      await page.waitForSelector('#login-form');
      await page.fill('input[name="login"]', 'demo');
      await page.fill('input[name="password"]', 'demo');
      await page.click('#login-form button[type="submit"]');
      await page.waitForSelector('#consent-allow');
      await allow(page);
      await page.waitForSelector('#userinfo-claims');
      await screenshot(page, `demo-result-${mounting.replace(/[^a-z]+/gi, '-')}`);
      const idToken = JSON.parse((await page.textContent('#id-token-claims')) ?? '{}') as Record<string, unknown>;
      // The demo client is pairwise (the default) and redirects to the loopback interface here: a sector of its own.
      expect(idToken).toMatchObject({ iss: running.issuer, sub: pairwiseSub(PAIRWISE_KEY, sectorOf({ redirect_uris: [`${running.baseUrl}/oidcdemo/callback`], client_id: idToken.aud }) as string, 'demo-0001'), name: 'Erika Mustermann', email: 'erika.mustermann@example.com', scope: 'openid profile email' });
      const userinfo = JSON.parse((await page.textContent('#userinfo-claims')) ?? '{}') as Record<string, unknown>;
      expect(userinfo.sub).toBe(idToken.sub);
      for (const url of visited) expect(new URL(url).pathname).toMatch(/^\/auth\//);
      expect(visited.some((url) => new URL(url).pathname.startsWith('/auth/oidc/v1/interaction/'))).toBe(true);
      expect(visited.at(-1)).toMatch(new RegExp(`^${running.baseUrl}/oidcdemo/callback\\?`));
      await page.close();
    });
  });
});

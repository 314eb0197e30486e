import { existsSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';

import { createDemoClaimModules } from '../../examples/claim-modules/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { launchChromium, screenshot } from '../helpers/chromium.js';

describe('the demo page in Chromium (C8)', () => {
  let running: RunningApp;
  let browser: Browser;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
  });

  const startFlow = async (page: Page): Promise<void> => {
    await page.goto(`${running.baseUrl}/oidcdemo/login`);
    await screenshot(page, 'demo-form');
    for (const scope of ['profile', 'email', 'svc.insurance.verified']) await page.check(`input[name="scope"][value="${scope}"]`);
    await page.fill('#claims', JSON.stringify({ userinfo: { 'svc.ver.[driverslicense,idcard].l3.nfc': { essential: true } } }));
    await page.click('#demo-form button[type="submit"]');
    await page.waitForSelector('#login-form');
    await screenshot(page, 'login');
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await page.waitForSelector('#consent-allow');
  };

  it('runs profile email svc.insurance.verified with an svc.* alternative and shows the decrypted claims', async () => {
    const page = await browser.newPage();
    await startFlow(page);
    const consent = await page.textContent('main');
    expect(consent).toContain('one of: your verified driving licence (level 3, NFC); your verified ID card (level 3, NFC)');
    expect(consent).toContain('your health insurance member number');
    expect(consent).toContain('Sign-in token: encrypted');
    const consentShot = await screenshot(page, 'consent');
    expect(existsSync(consentShot)).toBe(true);
    await page.click('#consent-allow button');
    await page.waitForSelector('#userinfo-claims');
    await screenshot(page, 'demo-result');
    const userinfo = JSON.parse((await page.textContent('#userinfo-claims')) ?? '{}') as Record<string, unknown>;
    expect(userinfo['svc.ver.idcard.l3.nfc']).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann' });
    expect(userinfo.email).toBe('erika.mustermann@example.com');
    const idToken = JSON.parse((await page.textContent('#id-token-claims')) ?? '{}') as Record<string, unknown>;
    expect(idToken).toMatchObject({ sub: 'demo-0001', name: 'Erika Mustermann', scope: 'openid profile email svc.insurance.verified' });
    expect(JSON.parse((await page.textContent('#id-token-jwe-header')) ?? '{}')).toMatchObject({ alg: 'RSA-OAEP-256', enc: 'A256GCM' });
    await page.close();
  });

  it('shows access_denied when consent is denied', async () => {
    const page = await browser.newPage();
    await startFlow(page);
    await page.click('#consent-deny button');
    await page.waitForSelector('#demo-error');
    await screenshot(page, 'demo-denied');
    expect(await page.textContent('#demo-error')).toContain('access_denied');
    await page.close();
  });
});

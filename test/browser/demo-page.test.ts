import { existsSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { pairwiseSub, sectorOf } from '../../policies/subjects.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { allow, launchChromium, screenshot } from '../helpers/chromium.js';

const PAIRWISE_KEY = 'browser-pairwise-key-0123456789abcdefgh';

describe('the demo page in Chromium (C8)', () => {
  let running: RunningApp;
  let browser: Browser;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules(), properties: { 'svc.subject.pairwise-key': PAIRWISE_KEY } });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
  });

  const CLAIMS = JSON.stringify({ userinfo: { 'svc.ver.[idcard.l3.nfc,email.l2]': { essential: true } } });

  const startFlow = async (page: Page, options: { par?: boolean } = {}): Promise<void> => {
    await page.goto(`${running.baseUrl}/oidcdemo/login`);
    await screenshot(page, 'demo-form');
    for (const scope of ['profile', 'email', 'svc.insurance.verified']) await page.check(`input[name="scope"][value="${scope}"]`);
    await page.fill('#claims', CLAIMS);
    if (options.par) await page.check('#par');
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
    expect(consent).toContain('one of: your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read; your verified e-mail address (level 2): the address and when it was confirmed');
    expect(consent).toContain('your health insurance member number');
    expect(consent).toContain('Sign-in token: encrypted');
    const consentShot = await screenshot(page, 'consent');
    expect(existsSync(consentShot)).toBe(true);
    await allow(page);
    await page.waitForSelector('#userinfo-claims');
    await screenshot(page, 'demo-result');
    const userinfo = JSON.parse((await page.textContent('#userinfo-claims')) ?? '{}') as Record<string, unknown>;
    expect(userinfo['svc.ver.idcard.l3.nfc']).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann' });
    // Each claim travels once (C5): the scope claims in the ID token, the claims request's in UserInfo.
    expect(userinfo.email).toBeUndefined();
    const idToken = JSON.parse((await page.textContent('#id-token-claims')) ?? '{}') as Record<string, unknown>;
    // The demo client is pairwise (the default) and redirects to the loopback interface here: a sector of its own.
    expect(idToken).toMatchObject({ sub: pairwiseSub(PAIRWISE_KEY, sectorOf({ redirect_uris: [`${running.baseUrl}/oidcdemo/callback`], client_id: idToken.aud }) as string, 'demo-0001'), name: 'Erika Mustermann', email: 'erika.mustermann@example.com', scope: 'openid profile email svc.insurance.verified' });
    expect(JSON.parse((await page.textContent('#id-token-jwe-header')) ?? '{}')).toMatchObject({ alg: 'RSA-OAEP-256', enc: 'A256GCM' });
    await page.close();
  });

  it('with the PAR switch: the browser URL holds only client_id and request_uri, the claims arrive all the same', async () => {
    const page = await browser.newPage();
    const visited: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest()) visited.push(request.url());
    });
    await startFlow(page, { par: true });
    await allow(page);
    await page.waitForSelector('#userinfo-claims');
    await screenshot(page, 'demo-result-par');
    const authorize = visited.filter((u) => new URL(u).pathname === '/oidc/v1/authorize');
    expect(authorize).toHaveLength(1);
    const sent = new URL(authorize[0] as string);
    expect([...sent.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    expect(sent.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]+$/);
    // No URL the browser opened carried the claims request or any other authorization parameter.
    for (const url of visited) for (const leak of ['claims', 'svc.ver', 'code_challenge', 'nonce', 'scope=']) expect({ url, leak, found: decodeURIComponent(url).includes(leak) }).toEqual({ url, leak, found: false });
    expect(await page.textContent('#authorization-url-parameters')).toBe('client_id request_uri');
    expect(await page.textContent('#authorization-url')).toBe(sent.href);
    expect(await page.textContent('#authorization-mode')).toContain('encrypted (RSA-OAEP-256, A256GCM)');
    const userinfo = JSON.parse((await page.textContent('#userinfo-claims')) ?? '{}') as Record<string, unknown>;
    expect(userinfo['svc.ver.idcard.l3.nfc']).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann' });
    await page.close();
  });

  it('without the switch the result page shows every parameter in the URL, in a signed request object', async () => {
    const page = await browser.newPage();
    await startFlow(page);
    await allow(page);
    await page.waitForSelector('#authorization-url-parameters');
    const names = ((await page.textContent('#authorization-url-parameters')) ?? '').split(' ').sort();
    expect(names).toEqual(['client_id', 'request']);
    const inRequest = ((await page.textContent('#request-object-parameters')) ?? '').split(' ').sort();
    expect(inRequest).toEqual(['claims', 'client_id', 'code_challenge', 'code_challenge_method', 'nonce', 'redirect_uri', 'response_type', 'scope', 'state']);
    await page.close();
  });

  it('a claims request that is not JSON: the page says so at the field and keeps everything she chose, so she mends her typo and runs it', async () => {
    const page = await browser.newPage();
    await page.goto(`${running.baseUrl}/oidcdemo/login`);
    await page.check('input[name="scope"][value="email"]');
    await page.fill('#claims', CLAIMS.slice(0, -1));
    await page.check('#verified');
    await page.selectOption('#prompt', 'login');
    await page.check('#par');
    await page.click('#demo-form button[type="submit"]');
    await page.waitForSelector('#demo-form-error');
    expect({
      claims: await page.inputValue('#claims'),
      scopes: await page.locator('input[name="scope"]:checked').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value)),
      verified: await page.isChecked('#verified'),
      prompt: await page.inputValue('#prompt'),
      par: await page.isChecked('#par'),
      describedBy: await page.getAttribute('#claims', 'aria-describedby'),
      invalid: await page.getAttribute('#claims', 'aria-invalid'),
    }).toEqual({ claims: CLAIMS.slice(0, -1), scopes: ['email'], verified: true, prompt: 'login', par: true, describedBy: 'demo-form-error', invalid: 'true' });
    await page.fill('#claims', CLAIMS);
    await page.click('#demo-form button[type="submit"]');
    await page.waitForSelector('#login-form');
    await page.close();
  });

  it('honest: a fresh demo form has nothing ticked, an empty claims request and no error', async () => {
    const page = await browser.newPage();
    await page.goto(`${running.baseUrl}/oidcdemo/login`);
    expect({
      claims: await page.inputValue('#claims'),
      checked: await page.locator('input:checked').count(),
      prompt: await page.inputValue('#prompt'),
      invalid: await page.getAttribute('#claims', 'aria-invalid'),
      error: await page.locator('#demo-form-error').count(),
    }).toEqual({ claims: '', checked: 0, prompt: '', invalid: null, error: 0 });
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

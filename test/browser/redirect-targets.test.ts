import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { launchChromium } from '../helpers/chromium.js';
import { codeFlowUrl } from '../helpers/flow.js';

const NATIVE: ClientMetadata = { client_id: 'native-app', application_type: 'native', token_endpoint_auth_method: 'none', redirect_uris: ['com.example.app:/cb'] };

describe('a relying party on another origin, in Chromium (form-action after the form posts redirect)', () => {
  let running: RunningApp;
  let browser: Browser;
  let rp: Server;
  let rpPort = 0;

  beforeAll(async () => {
    rp = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<p id="rp-callback">callback</p>');
    });
    await new Promise<void>((resolve) => rp.listen(0, '127.0.0.1', resolve));
    rpPort = (rp.address() as AddressInfo).port;
    const web = { client_id: 'web-rp', client_secret: 'web-rp-secret-that-is-long-enough-0123456789', redirect_uris: [`http://rp.localhost:${rpPort}/cb`] };
    running = await startApp({ claimModules: createDemoClaimModules(), clients: [web, NATIVE] });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
    await new Promise<void>((resolve) => rp.close(() => resolve()));
  });

  /** Signs in as demo and allows, recording the CSP violations and every URL the page asked for. */
  const signInAndAllow = async (page: Page, url: string): Promise<{ violations: string[]; requested: string[] }> => {
    const violations: string[] = [];
    const requested: string[] = [];
    page.on('console', (message) => {
      if (message.text().includes('Content Security Policy')) violations.push(message.text());
    });
    page.on('request', (request) => requested.push(request.url()));
    await page.goto(url);
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await page.waitForSelector('#consent-allow');
    await page.click('#consent-allow button');
    return { violations, requested };
  };

  it('a native app with a private-use scheme: after Allow the browser is sent to com.example.app:/cb with the code, no CSP violation', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Whichever comes first: the browser heading for the app, or a CSP refusal of that redirect.
    const outcome = new Promise<string>((resolve) => {
      page.on('request', (r) => r.url().startsWith('com.example.app:') && resolve(r.url()));
      page.on('console', (m) => m.text().includes('Content Security Policy') && resolve(`refused: ${m.text()}`));
    });
    const seen = await signInAndAllow(page, codeFlowUrl(running.issuer, NATIVE, { state: 'st', scope: 'openid email' }));
    const reached = await outcome;
    expect(reached).toMatch(/^com\.example\.app:\/cb\?/);
    const target = new URL(reached);
    expect(target.searchParams.get('code')).toEqual(expect.any(String));
    expect(target.searchParams.get('state')).toBe('st');
    expect(seen.violations).toEqual([]);
    await context.close();
  });

  it('honest: a web relying party on another origin receives its code', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const seen = await signInAndAllow(page, codeFlowUrl(running.issuer, { client_id: 'web-rp', redirect_uris: [`http://rp.localhost:${rpPort}/cb`] }, { state: 'st' }));
    await page.waitForSelector('#rp-callback');
    expect(new URL(page.url()).searchParams.get('code')).toEqual(expect.any(String));
    expect(seen.violations).toEqual([]);
    await context.close();
  });
});

/** RFC 8252 7.3: a native app's loopback redirect may be the IPv6 literal [::1] (oidc-provider accepts it). */
describe('a native app on the IPv6 loopback, in Chromium (form-action after the form posts redirect)', () => {
  let running: RunningApp;
  let browser: Browser;
  let app: Server;
  let v6: ClientMetadata;
  let v4: ClientMetadata;

  beforeAll(async () => {
    app = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<p id="app-callback">callback</p>');
    });
    await new Promise<void>((resolve) => app.listen(0, '::', resolve));
    const { port } = app.address() as AddressInfo;
    v6 = { client_id: 'native-v6', application_type: 'native', token_endpoint_auth_method: 'none', redirect_uris: [`http://[::1]:${port}/cb`] };
    v4 = { client_id: 'native-v4', application_type: 'native', token_endpoint_auth_method: 'none', redirect_uris: [`http://127.0.0.1:${port}/cb`] };
    running = await startApp({ claimModules: createDemoClaimModules(), clients: [v6, v4] });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
    await new Promise<void>((resolve) => app.close(() => resolve()));
  });

  /** Signs in as demo and allows; what the browser reached first: the app's callback, or a CSP refusal. */
  const signInAndAllow = async (page: Page, client: ClientMetadata): Promise<string> => {
    const outcome = new Promise<string>((resolve) => {
      page.on('request', (r) => r.url().includes('/cb?') && resolve(r.url()));
      page.on('console', (m) => m.text().includes('violates the following Content Security Policy') && resolve(`refused: ${m.text()}`));
    });
    await page.goto(codeFlowUrl(running.issuer, client, { state: 'st', scope: 'openid email' }));
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await page.waitForSelector('#consent-allow');
    await page.click('#consent-allow button');
    return outcome;
  };

  it('after Allow the browser is sent to http://[::1]:port/cb with the code, no CSP violation', async () => {
    const context = await browser.newContext();
    const reached = await signInAndAllow(await context.newPage(), v6);
    await context.close();
    expect(reached).toMatch(/^http:\/\/\[::1\]:\d+\/cb\?/);
    expect(new URL(reached).searchParams.get('code')).toEqual(expect.any(String));
  });

  it('honest: the IPv4 loopback receives its code', async () => {
    const context = await browser.newContext();
    const reached = await signInAndAllow(await context.newPage(), v4);
    await context.close();
    expect(reached).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/cb\?/);
  });
});

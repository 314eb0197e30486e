import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, Page } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { allow, launchChromium } from '../helpers/chromium.js';
import { codeFlowUrl } from '../helpers/flow.js';

/**
 * Chromium checks the login and consent pages' `form-action` on every redirect after their form posts, the last one
 * carrying the code to the client: each kind of redirect URI must be allowed there, and none refused.
 */
describe('redirect URIs of every kind receive their code in Chromium (form-action after the form posts redirect)', () => {
  let running: RunningApp;
  let browser: Browser;
  let rp: Server;
  let clients: Record<'web' | 'scheme' | 'v6' | 'v4' | 'hop', ClientMetadata>;

  beforeAll(async () => {
    rp = createServer((req, res) => {
      // A relying party whose callback or sign-out endpoint sends her on to its app or home page on another host.
      if (req.url?.startsWith('/bye-hop?') || req.url?.startsWith('/cb-hop?')) {
        res.writeHead(302, { location: `http://127.0.0.1:${(rp.address() as AddressInfo).port}/${req.url.startsWith('/cb') ? 'cb' : 'bye'}?${req.url.split('?')[1]}` });
        return void res.end();
      }
      res.setHeader('content-type', 'text/html');
      res.end('<p id="rp-callback">callback</p>');
    });
    await new Promise<void>((resolve) => rp.listen(0, '::', resolve));
    const { port } = rp.address() as AddressInfo;
    const native = (client_id: string, redirect: string): ClientMetadata => ({
      client_id,
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      redirect_uris: [redirect],
      post_logout_redirect_uris: [redirect.replace(/\/cb$/, '/bye')],
    });
    clients = {
      web: {
        client_id: 'web-rp',
        client_secret: 'web-rp-secret-that-is-long-enough-0123456789',
        redirect_uris: [`http://rp.localhost:${port}/cb`],
        post_logout_redirect_uris: [`http://rp.localhost:${port}/bye`],
      },
      // RFC 8252 7.1 and 7.3: a private-use scheme, and the loopback as an IPv6 literal (which no CSP source names) or IPv4.
      scheme: native('native-app', 'com.example.app:/cb'),
      v6: native('native-v6', `http://[::1]:${port}/cb`),
      v4: native('native-v4', `http://127.0.0.1:${port}/cb`),
      hop: {
        client_id: 'web-hop',
        client_secret: 'web-hop-secret-that-is-long-enough-0123456789',
        redirect_uris: [`http://rp.localhost:${port}/cb-hop`],
        post_logout_redirect_uris: [`http://rp.localhost:${port}/bye-hop`],
      },
    };
    running = await startApp({ claimModules: createDemoClaimModules(), clients: Object.values(clients) });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
    await new Promise<void>((resolve) => rp.close(() => resolve()));
  });

  /**
   * Signs in as demo and allows in a fresh browser; what it reached first: the redirect URI, or a CSP refusal. With
   * `logout`, then signs out from the client (RP-initiated, "Yes") and answers what that reached: its
   * `post_logout_redirect_uri`, or a CSP refusal.
   */
  const signInAndAllow = async (client: ClientMetadata, logout = false): Promise<string> => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const reach = (on: Page, path: string) =>
        new Promise<string>((resolve) => {
          on.on('request', (r) => r.url().includes(`${path}?`) && resolve(r.url()));
          on.on('console', (m) => m.text().includes('Content Security Policy') && resolve(`refused: ${m.text()}`));
        });
      const outcome = reach(page, '/cb');
      await page.goto(codeFlowUrl(running.issuer, client, { state: 'st', scope: 'openid email' }));
      await page.fill('input[name="login"]', 'demo');
      await page.fill('input[name="password"]', 'demo');
      await page.click('#login-form button[type="submit"]');
      await page.waitForSelector('#consent-allow');
      await allow(page);
      const reached = await outcome;
      if (!logout) return reached;
      // A tab of its own: the tab above may still be ending its navigation to the app, which would cancel this one's.
      const tab = await context.newPage();
      const bye = reach(tab, '/bye');
      const [postLogout] = client.post_logout_redirect_uris as string[];
      await tab.goto(`${running.issuer}/logout?${new URLSearchParams({ client_id: client.client_id, post_logout_redirect_uri: postLogout ?? '', state: 'so' })}`);
      await tab.click('button[name="logout"]');
      return await bye;
    } finally {
      await context.close();
    }
  };

  it.each([
    ['a native app with a private-use scheme', 'scheme', /^com\.example\.app:\/cb\?/],
    ['a native app on the IPv6 loopback', 'v6', /^http:\/\/\[::1\]:\d+\/cb\?/],
    ['honest: a native app on the IPv4 loopback', 'v4', /^http:\/\/127\.0\.0\.1:\d+\/cb\?/],
    ['honest: a web relying party on another origin', 'web', /^http:\/\/rp\.localhost:\d+\/cb\?/],
  ] as const)('%s: after Allow the browser is sent to its redirect URI with the code and state, no CSP refusal', async (_case, kind, target) => {
    const reached = await signInAndAllow(clients[kind]);
    expect(reached).toMatch(target);
    const params = new URL(reached).searchParams;
    expect([params.get('code'), params.get('state')]).toEqual([expect.any(String), 'st']);
  });

  it.each([
    ['a native app with a private-use scheme', 'scheme', /^com\.example\.app:\/bye\?/],
    ['a native app on the IPv6 loopback', 'v6', /^http:\/\/\[::1\]:\d+\/bye\?/],
    ['honest: a web relying party on another origin', 'web', /^http:\/\/rp\.localhost:\d+\/bye\?/],
    ['honest: a web relying party whose sign-out endpoint redirects to another host', 'hop', /^http:\/\/127\.0\.0\.1:\d+\/bye\?/],
  ] as const)('%s: after "Yes, sign me out" the browser is sent to its post-logout redirect URI with the state, no CSP refusal', async (_case, kind, target) => {
    const reached = await signInAndAllow(clients[kind], true);
    expect(reached).toMatch(target);
    expect(new URL(reached).searchParams.get('state')).toBe('so');
  });

  it('honest: a web relying party whose callback redirects to another host: after Allow the browser reaches that host', async () => {
    expect(await signInAndAllow(clients.hop)).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/cb\?/);
  });
});

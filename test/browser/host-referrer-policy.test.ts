import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Koa from 'koa';
import mount from 'koa-mount';
import type { Browser } from 'playwright-core';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createSvcConnect, loadSettings, silentLogger, type SvcConnect } from '../../lib/index.js';
import { TEST_PAIRWISE_KEY } from '../helpers/app.js';
import { allow, launchChromium } from '../helpers/chromium.js';
import { codeFlowUrl } from '../helpers/flow.js';
import { testProviderKeys } from '../helpers/provider-keys.js';

const rp = { client_id: 'rp', client_name: 'RP', client_secret: 'rp-secret-that-is-long-enough-0123456789', redirect_uris: ['http://a.localhost/cb'] };

/**
 * A host Koa app (docs/embedding.md) that sets `Referrer-Policy: no-referrer` on every answer, svc-connect's included:
 * the pages' own `<meta name="referrer">` decides for them, so their forms still post the provider's `Origin`.
 */
describe('svc-connect mounted in a host app that sets Referrer-Policy: no-referrer', () => {
  let server: Server;
  let svc: SvcConnect;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    let handler = (_req: IncomingMessage, res: ServerResponse): void => void res.end();
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const settings = loadSettings({ env: {}, properties: { 'svc.base-url': `${origin}/auth`, 'svc.subject.pairwise-key': TEST_PAIRWISE_KEY } });
    svc = await createSvcConnect(settings, { logger: silentLogger, jwks: await testProviderKeys(), claimModules: createDemoClaimModules(), clients: [rp] });
    const app = new Koa({ keys: svc.cookieKeys });
    app.use(async (ctx, next) => {
      await next();
      ctx.set('Referrer-Policy', 'no-referrer');
    });
    app.use(mount('/auth', svc.middleware));
    const callback = app.callback();
    handler = (req, res) => void callback(req, res);
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await svc?.close();
  });

  it("posts the login and consent forms with the provider's Origin, and the callback gets no Referer", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await context.route(/^http:\/\/a\.localhost\//, (route) => route.fulfill({ status: 200, contentType: 'text/plain', body: 'received' }));
    const origins: (string | null)[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST') origins.push(request.headers().origin ?? null);
    });
    const callback = page.waitForRequest((request) => request.url().startsWith('http://a.localhost/cb'));
    await page.goto(codeFlowUrl(`${origin}/auth/oidc/v1`, rp, { scope: 'openid email', state: 'st' }));
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await page.waitForSelector('#consent-allow');
    await allow(page);
    const received = await callback;
    expect({ origins, referer: received.headers().referer, code: new URL(received.url()).searchParams.has('code') }).toEqual({ origins: [origin, origin], referer: undefined, code: true });
    await context.close();
  });
});

import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import { createApp, loadSettings, silentLogger, type SvcApp } from '../../lib/index.js';
import { confidentialClient, TEST_PAIRWISE_KEY } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, loginAttempts, signIn } from '../helpers/flow.js';
import { CookieKeyring } from '../../lib/web/cookie-keyring.js';
import { testProviderKeys } from '../helpers/provider-keys.js';

const client = confidentialClient();
const keyA = randomBytes(32).toString('base64url');
const keyB = randomBytes(32).toString('base64url');

describe('svc.cookies.keys rotation, with the app restarted on the same store and address', () => {
  let server: Server;
  let base = '';
  let handler: RequestListener = (_req, res) => res.end();
  const store = createMemoryStore();
  const apps: SvcApp[] = [];

  /** Restarts the provider with `keys` (newest first). */
  async function restart(keys: string[]): Promise<void> {
    const settings = loadSettings({
      env: {},
      properties: { 'svc.base-url': base, 'svc.subject.pairwise-key': TEST_PAIRWISE_KEY, 'svc.cookies.keys': keys.join(','), 'svc.proxy': true },
    });
    const app = await createApp(settings, { logger: silentLogger, store, clients: [client], jwks: await testProviderKeys() });
    apps.push(app);
    const callback = app.callback();
    handler = (req, res) => void callback(req, res);
  }

  beforeAll(async () => {
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    for (const app of apps) await app.svc.close();
  });

  it('a person whose sign-in started under the old key finishes it under the new list', async () => {
    await restart([keyA]);
    const browser = new FormBrowser();
    await browser.follow(codeFlowUrl(`${base}/oidc/v1`, client), base);
    expect(browser.lastPage).toContain('id="login-form"');
    await restart([keyB, keyA]);
    let step = await browser.submit('login-form', { login: 'demo', password: 'demo' }, base);
    if (!step.leftTo) step = await browser.submit('consent-allow', {}, base);
    expect(new URL(step.leftTo as string).searchParams.get('code')).toBeTruthy();
  });

  it('the login page after a failed sign-in under the old key still says why, with her login, under the new list', async () => {
    await restart([keyA]);
    const browser = new FormBrowser();
    await browser.follow(codeFlowUrl(`${base}/oidc/v1`, client), base);
    const failed = await browser.submit('login-form', { login: 'demo', password: 'wrong' }, base);
    expect(failed.response?.status).toBe(403);
    await restart([keyB, keyA]);
    const page = browser.formAction('login-form', base).replace(/\/login$/, '');
    const shown = await browser.request(page);
    expect(shown.status).toBe(403);
    const html = await shown.text();
    expect(html).toContain('id="login-error"');
    expect(html).toContain('value="demo" aria-describedby="login-error"');
  });

  it('a session signed with the second key is accepted and re-signed with the first', async () => {
    await restart([keyA]);
    const { browser } = await signIn(codeFlowUrl(`${base}/oidc/v1`, client));
    const sessionSig = browser.cookie('_session.sig');
    expect(sessionSig).toBe(new CookieKeyring([keyA]).sign(`_session=${browser.cookie('_session')}`));
    await restart([keyB, keyA]);
    const again = await browser.follow(codeFlowUrl(`${base}/oidc/v1`, client), base);
    expect(new URL(again.leftTo as string).searchParams.get('code')).toBeTruthy();
    expect(browser.cookie('_session.sig')).toBe(new CookieKeyring([keyB]).sign(`_session=${browser.cookie('_session')}`));
  });

  it("her device cookie signed with the second key still lets her past a stranger's lock; one whose key was removed does not", async () => {
    await restart([keyA]);
    const { browser: hers } = await signIn(codeFlowUrl(`${base}/oidc/v1`, client));
    const device = hers.cookie('svc.device') as string;
    const lockName = async (): Promise<void> => {
      let status = 0;
      for (let i = 0; i < 10 && status !== 429; i += 1) {
        const stranger = await loginAttempts({ issuer: `${base}/oidc/v1`, baseUrl: base }, client);
        status = (await stranger.attempt('demo', `wrong-${i}`, `198.51.100.${i + 1}`)).status;
      }
      expect(status).toBe(429);
    };
    const herAttempt = async (): Promise<number> => {
      const browser = new FormBrowser();
      browser.setCookie('svc.device', device);
      const form = await loginAttempts({ issuer: `${base}/oidc/v1`, baseUrl: base }, client, browser);
      return (await form.attempt('demo', 'demo', '203.0.113.7')).status;
    };
    await restart([keyB, keyA]);
    await lockName();
    expect(await herAttempt()).toBe(303);
    await restart([keyB]);
    await lockName();
    expect(await herAttempt()).toBe(429);
  });

  it('rotating the first key starts the name counters afresh (documented in docs/security-model.md)', async () => {
    const keyC = randomBytes(32).toString('base64url');
    await restart([keyC]);
    const guess = async (i: number): Promise<number> => {
      const stranger = await loginAttempts({ issuer: `${base}/oidc/v1`, baseUrl: base }, client);
      return (await stranger.attempt('demo2', `wrong-${i}`, `192.0.2.${i + 1}`)).status;
    };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push(await guess(i));
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429]);
    await restart([randomBytes(32).toString('base64url'), keyC]);
    expect(await guess(7)).toBe(403);
  });

  it('a session and an interaction cookie signed only with a removed key are refused', async () => {
    await restart([keyA]);
    const { browser } = await signIn(codeFlowUrl(`${base}/oidc/v1`, client));
    expect(browser.cookie('svc.device')).toBeTruthy();
    await browser.follow(codeFlowUrl(`${base}/oidc/v1`, client, { prompt: 'login' }), base);
    expect(browser.lastPage).toContain('id="login-form"');
    await restart([keyB]);
    // The interaction cookie signed with A: the login post is not taken.
    const step = await browser.submit('login-form', { login: 'demo', password: 'demo' }, base);
    expect(step.leftTo).toBeUndefined();
    expect(step.response?.status).toBeGreaterThanOrEqual(400);
    // The session signed with A: a fresh authorization asks her to sign in.
    const fresh = await browser.follow(codeFlowUrl(`${base}/oidc/v1`, client), base);
    expect(fresh.leftTo).toBeUndefined();
    expect(browser.lastPage).toContain('id="login-form"');
  });
});

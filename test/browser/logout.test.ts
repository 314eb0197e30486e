import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, BrowserContext, Page } from 'playwright-core';

import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { allow, launchChromium } from '../helpers/chromium.js';
import { codeFlowUrl, pkcePair, redeemCode } from '../helpers/flow.js';

/**
 * RP-initiated logout by POST in Chromium on an http base URL, where the session cookie is `SameSite=Lax`: a form
 * posted from another site carries no session, and she must still be asked before anything of hers ends.
 */
describe('a logout form posted from another site on an http base URL (SameSite=Lax session)', () => {
  let running: RunningApp;
  let browser: Browser;
  let site: Server;
  let client: ClientMetadata;
  let origin = '';

  beforeAll(async () => {
    // One server for the relying party and the hostile page: `rp.localhost` is another site than the provider's 127.0.0.1.
    site = createServer((req, res) => {
      const url = new URL(req.url ?? '/', origin);
      res.setHeader('content-type', 'text/html');
      if (url.pathname !== '/post-logout') return void res.end(`<p id="rp">${url.pathname}</p>`);
      const fields = [...url.searchParams].map(([name, value]) => `<input type="hidden" name="${name}" value="${value.replace(/"/g, '&quot;')}">`).join('');
      res.end(`<form id="f" method="post" action="${running.issuer}/logout">${fields}</form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    origin = `http://rp.localhost:${(site.address() as AddressInfo).port}`;
    client = confidentialClient({ redirect_uris: [`${origin}/cb`], post_logout_redirect_uris: [`${origin}/bye`] });
    running = await startApp({ clients: [client] });
    browser = await launchChromium();
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await running?.close();
    await new Promise<void>((resolve) => site.close(() => resolve()));
  });

  const onSite = (url: URL): boolean => url.origin === origin;

  /** A fresh browser signed in through `client`, with the tokens the client received. */
  const signedIn = async (): Promise<{ page: Page; context: BrowserContext; accessToken: string; idToken: string }> => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { verifier, challenge } = pkcePair();
    await page.goto(codeFlowUrl(running.issuer, client, { state: 'st', code_challenge: challenge }));
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await allow(page);
    await page.waitForURL(onSite);
    const { body } = await redeemCode(running.issuer, client, new URL(page.url()).searchParams.get('code') ?? '', verifier);
    return { page, context, accessToken: String(body.access_token), idToken: String(body.id_token) };
  };
  const sessionCookie = async (context: BrowserContext): Promise<string | undefined> => (await context.cookies()).find((c) => c.name === '_session')?.value;
  const silentOutcome = async (page: Page): Promise<string | null> => {
    await page.goto(codeFlowUrl(running.issuer, client, { prompt: 'none', state: 'silent' }));
    await page.waitForURL(onSite);
    const params = new URL(page.url()).searchParams;
    return params.get('error') ?? (params.get('code') ? 'code' : null);
  };
  const userinfoStatus = async (accessToken: string): Promise<number> => (await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } })).status;
  /** Her signed-in sessions in the store. */
  const signedInSessions = async (): Promise<number> => {
    const listed = await running.app.svc.store.inventory?.list('Session', { limit: 500 });
    return (listed?.records ?? []).filter((r) => r.payload.accountId === 'demo-0001').length;
  };
  const postFromSite = async (page: Page, fields: Record<string, string>): Promise<void> => {
    await page.goto(`${origin}/post-logout?${new URLSearchParams(fields)}`);
    await page.waitForURL((url) => url.origin !== origin);
    await page.waitForLoadState();
  };

  it('a page of another site that posts an empty logout form, or one naming the client and its registered post_logout_redirect_uri, only opens the sign-out question: her session, grant and tokens stay', async () => {
    const { page, context, accessToken } = await signedIn();
    const cookie = await sessionCookie(context);
    const sessions = await signedInSessions();
    for (const fields of [{}, { client_id: String(client.client_id), post_logout_redirect_uri: `${origin}/bye`, state: 'forged' }] as Record<string, string>[]) {
      await postFromSite(page, fields);
      expect({ title: await page.textContent('h1'), form: await page.isVisible('button[name="logout"]') }).toEqual({ title: 'Sign out?', form: true });
      // She leaves the question unanswered.
      expect(await sessionCookie(context)).toBe(cookie);
      expect({ silent: await silentOutcome(page), userinfo: await userinfoStatus(accessToken), sessions: await signedInSessions() }).toEqual({ silent: 'code', userinfo: 200, sessions });
    }
  });

  it('honest: the relying party posts her logout (id_token_hint, post_logout_redirect_uri, state): she is asked, says yes, is back at the relying party with its state, and her session and tokens are gone', async () => {
    const { page, accessToken, idToken } = await signedIn();
    const sessions = await signedInSessions();
    await postFromSite(page, { id_token_hint: idToken, post_logout_redirect_uri: `${origin}/bye`, state: 'rp-state' });
    expect(await page.textContent('h1')).toBe('Sign out?');
    await page.click('button[name="logout"]');
    await page.waitForURL(onSite);
    expect(page.url()).toBe(`${origin}/bye?state=rp-state`);
    expect({ userinfo: await userinfoStatus(accessToken), sessions: await signedInSessions(), silent: await silentOutcome(page) }).toEqual({ userinfo: 401, sessions: sessions - 1, silent: 'login_required' });
  });
});

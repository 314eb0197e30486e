import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import type { Browser, Page } from 'playwright-core';

import { issueInitialAccessToken } from '../../lib/index.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { pairwiseSubOf, startApp, type RunningApp } from '../helpers/app.js';
import { allow, launchChromium, screenshot } from '../helpers/chromium.js';
import { signIn } from '../helpers/flow.js';
import { register } from '../helpers/registration.js';
import { llngVersion, reservePortal, startPortal, type LlngPortal, type PortalOptions } from './lemonldap-ng.js';

/** The scopes LemonLDAP::NG asks for; with include-scopes-in-user-info their claims come in UserInfo. */
const SCOPE = 'openid profile email svc.insurance.verified';
/** Session attribute → UserInfo claim. */
const EXPORTED_VARS = { cn: 'name', mail: 'email', idcard: 'svc.ver.idcard.l3.nfc' };

describe('LemonLDAP::NG brokering svc-connect (its OpenID Connect authentication backend)', () => {
  let running: RunningApp;
  let browser: Browser;
  const portals: LlngPortal[] = [];

  /**
   * A portal of its own client: registered the way the spec says (an initial access token and
   * dynamic registration, done by its operator since LemonLDAP::NG cannot register itself), then
   * the provider's discovery document and JWKS copied into its configuration.
   */
  const brokerPortal = async (options: PortalOptions = {}): Promise<{ portal: LlngPortal; clientId: string }> => {
    const reserved = await reservePortal();
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const registration = await register(
      running,
      {
        client_name: 'LemonLDAP::NG portal',
        redirect_uris: [reserved.callbackUri],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'RS256',
        // LemonLDAP::NG 2.16 cannot decrypt what an external provider sends: the spec's one exception.
        allow_unencrypted_userinfo: true,
      },
      token,
    );
    expect(registration.status).toBe(201);
    const discovery = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    const jwks: unknown = await (await fetch(String(discovery.jwks_uri))).json();
    const clientId = String(registration.body.client_id);
    const portal = await startPortal(
      reserved,
      {
        discovery,
        jwks,
        clientId,
        clientSecret: String(registration.body.client_secret),
        tokenEndpointAuthMethod: String(registration.body.token_endpoint_auth_method),
        scope: SCOPE,
        exportedVars: EXPORTED_VARS,
      },
      options,
    );
    portals.push(portal);
    return { portal, clientId };
  };

  /** Opens the portal and follows it to svc-connect's login; returns the navigations seen. */
  const openPortal = async (page: Page, portal: LlngPortal): Promise<string[]> => {
    const visited: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest()) visited.push(request.url());
    });
    await page.goto(portal.url);
    return visited;
  };

  beforeAll(async () => {
    const version = llngVersion();
    console.log(`broker: LemonLDAP::NG ${version.portal} (Debian liblemonldap-ng-portal-perl ${version.debian}) under plackup`);
    running = await startApp({ claimModules: createDemoClaimModules(), properties: { 'svc.stage.include-scopes-in-user-info': true } });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const portal of portals) await portal.close();
    await running?.close();
  });

  it('signs in through svc-connect login and consent with PKCE, and the portal session holds svc-connect claims', async () => {
    const { portal, clientId } = await brokerPortal();
    const page = await browser.newPage();
    const visited = await openPortal(page, portal);
    await page.waitForSelector('#login-form');
    await screenshot(page, 'llng-svc-login');
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await page.waitForSelector('#consent-allow');
    await screenshot(page, 'llng-svc-consent');
    await allow(page);
    // The portal answers the callback with its menu, the signed-in page.
    await page.waitForSelector('#menucontent', { timeout: 20_000 }).catch(async (error: unknown) => {
      await screenshot(page, 'llng-portal-failed');
      throw new Error(`the portal did not sign in (at ${page.url()}): ${String(error)}\n${portal.output()}`);
    });
    await screenshot(page, 'llng-portal-signed-in');
    expect(await page.textContent('#menu')).toContain('Connected as Erika Mustermann');

    // The CheckUser plugin's page lists the session's attributes.
    await page.goto(`${portal.url}checkuser`);
    await page.waitForSelector('table');
    await screenshot(page, 'llng-portal-checkuser');
    const rows = Object.fromEntries(
      await page.$$eval('tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent?.trim() ?? '')).filter((cells) => cells.length === 2)),
    ) as Record<string, string>;
    expect(rows).toMatchObject({ _auth: 'OpenIDConnect', cn: 'Erika Mustermann', mail: 'erika.mustermann@example.com', idcard_family_name: 'Mustermann' });
    expect(rows._oidc_access_token).toBeUndefined();

    const authorize = new URL(visited.find((u) => u.startsWith(`${running.issuer}/authorize`)) ?? 'http://missing/');
    expect(authorize.searchParams.get('client_id')).toBe(clientId);
    expect(authorize.searchParams.get('redirect_uri')).toBe(portal.callbackUri);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // The session API of the portal, read with the signed-in browser's own cookie.
    const response = await page.goto(`${portal.url}session/my/global`);
    const session = (await response?.json()) as Record<string, unknown>;
    expect(session).toMatchObject({
      _user: pairwiseSubOf(portal.callbackUri, 'demo-0001', clientId),
      _oidc_OP: 'svc',
      cn: 'Erika Mustermann',
      mail: 'erika.mustermann@example.com',
    });
    expect(session.idcard).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann' });
    expect(session.idcard_family_name).toBe('Mustermann');
    // Each claim travels once: with include-scopes-in-user-info the ID token carries no user data.
    const idToken = decodeJwt(String(session._oidc_id_token));
    expect(idToken).toMatchObject({ sub: pairwiseSubOf(portal.callbackUri, 'demo-0001', clientId), aud: clientId });
    for (const claim of ['name', 'email', 'svc.ver.idcard.l3.nfc', 'given_name']) expect(idToken[claim]).toBeUndefined();
    await page.close();
  });

  it('refuses a code injected into another sign-in (the verifier follows that sign-in\'s state), and takes it with its own', async () => {
    const { portal } = await brokerPortal();
    /** The authorization request a fresh visit to the portal redirects to. */
    const authorizationOf = async (): Promise<URL> => {
      const response = await fetch(portal.url, { redirect: 'manual' });
      await response.arrayBuffer();
      return new URL(String(response.headers.get('location')));
    };
    const deliver = async (code: string, state: string): Promise<string> => {
      const response = await fetch(`${portal.callbackUri}&code=${encodeURIComponent(code)}&state=${encodeURIComponent(state)}`, { redirect: 'manual' });
      await response.arrayBuffer();
      return response.headers.get('set-cookie') ?? '';
    };
    const ssoCookie = /lemonldap=[0-9a-f]{64}/;
    // The attacker signs in through the portal's own request and keeps the code instead of delivering it.
    const attackers = await authorizationOf();
    const { callbackUrl } = await signIn(attackers.href);
    const code = String(callbackUrl.searchParams.get('code'));
    // Another sign-in of the portal (the victim's) gets the code at its callback.
    const victims = await authorizationOf();
    expect(victims.searchParams.get('state')).not.toBe(attackers.searchParams.get('state'));
    expect(victims.searchParams.get('code_challenge')).not.toBe(attackers.searchParams.get('code_challenge'));
    expect(await deliver(code, String(victims.searchParams.get('state')))).not.toMatch(ssoCookie);
    expect(portal.output()).toContain('Bad token response');
    // The same code with the state it was issued for is accepted: only the verifier differed.
    expect(await deliver(code, String(attackers.searchParams.get('state')))).toMatch(ssoCookie);
  });

  it('without the PKCE plugin the portal gets invalid_request from svc-connect before any sign-in, and opens no session', async () => {
    const { portal } = await brokerPortal({ pkceKey: null });
    const page = await browser.newPage();
    const visited = await openPortal(page, portal);
    await page.waitForSelector('#menucontent, .alert, #errormsg, .message-negative', { timeout: 20_000 });
    const callback = new URL(visited.find((u) => u.startsWith(portal.callbackUri)) ?? 'http://missing/');
    expect(callback.searchParams.get('error')).toBe('invalid_request');
    expect(callback.searchParams.get('error_description')).toBe('Authorization Server policy requires PKCE to be used for this request');
    expect(await page.$('#menucontent')).toBeNull();
    expect(await page.$('#login-form')).toBeNull();
    // Asked for the session without one, the portal starts a new sign-in that ends in the same refusal.
    const session = await page.goto(`${portal.url}session/my/global`);
    expect(session?.headers()['content-type']).toMatch(/^text\/html/);
    expect(new URL(page.url()).searchParams.get('error')).toBe('invalid_request');
    await page.close();
  });

  it('refuses to start the PKCE plugin with a key shorter than 32 characters', async () => {
    await expect(brokerPortal({ pkceKey: 'short-key' })).rejects.toThrow(/answers 500[\s\S]*svcConnectPkceKey must hold at least 32 characters/);
  });
});

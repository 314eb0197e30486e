import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';

import { issueInitialAccessToken } from '../../lib/index.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules/index.js';
import { pairwiseSubOf, startApp, type RunningApp } from '../helpers/app.js';
import { launchChromium, screenshot } from '../helpers/chromium.js';
import { register } from '../helpers/registration.js';
import { llngVersion, reservePortal, startPortal, type LlngPortal } from './lemonldap-ng.js';

/** The scopes LemonLDAP::NG asks for; with include-scopes-in-user-info their claims come in UserInfo. */
const SCOPE = 'openid profile email svc.insurance.verified';

describe('LemonLDAP::NG brokering svc-connect (OpenID Connect authentication backend)', () => {
  let running: RunningApp;
  let portal: LlngPortal;
  let browser: Browser;
  let clientId: string;

  beforeAll(async () => {
    const version = llngVersion();
    console.log(`broker: LemonLDAP::NG ${version.portal} (Debian liblemonldap-ng-portal-perl ${version.debian})`);
    running = await startApp({ claimModules: createDemoClaimModules(), properties: { 'svc.stage.include-scopes-in-user-info': true } });
    const reserved = await reservePortal();
    // LemonLDAP::NG cannot register itself: its operator registers it with an initial access token.
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const registration = await register(
      running,
      {
        client_name: 'LemonLDAP::NG portal',
        redirect_uris: [reserved.callbackUri],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'RS256',
        // LemonLDAP::NG 2.16 cannot decrypt responses from an external provider (the spec's one exception).
        allow_unencrypted_userinfo: true,
      },
      token,
    );
    expect(registration.status).toBe(201);
    clientId = String(registration.body.client_id);
    const discovery = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    const jwks: unknown = await (await fetch(String(discovery.jwks_uri))).json();
    portal = await startPortal(reserved, {
      discovery,
      jwks,
      clientId,
      clientSecret: String(registration.body.client_secret),
      tokenEndpointAuthMethod: String(registration.body.token_endpoint_auth_method),
      scope: SCOPE,
      exportedVars: { cn: 'name', mail: 'email', idcard: 'svc.ver.idcard.l3.nfc' },
    });
    browser = await launchChromium();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await portal?.close();
    await running?.close();
  });

  it('signs in through svc-connect login and consent, with PKCE, and the session holds svc-connect claims', async () => {
    const page = await browser.newPage();
    const visited: string[] = [];
    page.on('request', (request) => {
      if (request.isNavigationRequest()) visited.push(request.url());
    });
    await page.goto(portal.url);
    await page.waitForSelector('#login-form');
    await screenshot(page, 'llng-svc-login');
    await page.fill('input[name="login"]', 'demo');
    await page.fill('input[name="password"]', 'demo');
    await page.click('#login-form button[type="submit"]');
    await page.waitForSelector('#consent-allow');
    await screenshot(page, 'llng-svc-consent');
    await page.click('#consent-allow button');
    // The portal answers the callback with its menu, the signed-in page.
    await page
      .waitForSelector('#menucontent', { timeout: 20_000 })
      .catch(async (error: unknown) => {
        await screenshot(page, 'llng-portal-failed');
        throw new Error(`the portal did not sign in (at ${page.url()}): ${String(error)}\n${portal.output()}`);
      });
    await screenshot(page, 'llng-portal-signed-in');

    const authorize = new URL(visited.find((u) => u.startsWith(`${running.issuer}/authorize`)) ?? 'http://missing/');
    expect(authorize.searchParams.get('client_id')).toBe(clientId);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const response = await page.goto(`${portal.url}session/my/global`);
    const session = (await response?.json()) as Record<string, unknown>;
    expect(session).toMatchObject({
      _user: pairwiseSubOf(portal.callbackUri),
      cn: 'Erika Mustermann',
      mail: 'erika.mustermann@example.com',
      _oidc_OP: 'svc',
    });
    expect(session.idcard).toMatchObject({ given_name: 'Erika', family_name: 'Mustermann' });
    await page.close();
  });
});

import { describe, expect, it } from '@jest/globals';

import { createStaticAuthenticator } from '../../lib/demo/accounts.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { confidentialClient, pairwiseSubOf } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, pkcePair, redeemCode, redirectParams, signIn } from '../helpers/flow.js';
import { appPerSuite } from '../helpers/suite-app.js';

const client = confidentialClient({ redirect_uris: ['https://rp.example/cb'], allow_unencrypted_userinfo: true });
const base = createStaticAuthenticator();
/** The account ids the embedder's user store deleted: `exists` says no for them. */
const deleted = new Set<string>();
const authenticator = { ...base, exists: async (accountId: string): Promise<boolean> => !deleted.has(accountId) && base.exists(accountId) };

/**
 * A person deleted from the embedder's user store while her browser is signed in (the Authenticator contract: "sessions
 * of deleted accounts end"). oidc-provider finds no account for her session and loads no grant, and its consent prompt
 * read the grant that was not there: every authorization in her browser answered 500.
 */
describe('a browser signed in to an account deleted since', () => {
  const running = appPerSuite({ authenticator, claimModules: createDemoClaimModules(), clients: [client] });

  /** A browser where `demo` signed in and approved the client; her tokens and a code of a silent request not yet redeemed. */
  const signedInThenDeleted = async () => {
    const first = pkcePair();
    const { callbackUrl, browser } = await signIn(codeFlowUrl(running.issuer, client, { scope: 'openid email', code_challenge: first.challenge }));
    const tokens = await redeemCode(running.issuer, client, callbackUrl.searchParams.get('code') as string, first.verifier);
    const second = pkcePair();
    const silent = await browser.follow(codeFlowUrl(running.issuer, client, { scope: 'openid email', code_challenge: second.challenge, prompt: 'none' }), running.baseUrl);
    const code = redirectParams(silent.leftTo as string).get('code') as string;
    deleted.add('demo-0001');
    return { browser, accessToken: tokens.body.access_token as string, redeemLater: () => redeemCode(running.issuer, client, code, second.verifier) };
  };
  const userinfo = async (accessToken: string): Promise<[number, unknown]> => {
    const response = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    return [response.status, ((await response.json()) as { error?: string }).error];
  };

  it('attack: her access token and her code get nothing of her (invalid_token, invalid_grant); a silent request answers login_required, a visible one the login page, never a 500', async () => {
    try {
      const { browser, accessToken, redeemLater } = await signedInThenDeleted();
      expect(await userinfo(accessToken)).toEqual([401, 'invalid_token']);
      const redeemed = await redeemLater();
      expect([redeemed.status, redeemed.body.error]).toEqual([400, 'invalid_grant']);

      const silent = await browser.follow(codeFlowUrl(running.issuer, client, { scope: 'openid email', prompt: 'none', state: 'st' }), running.baseUrl);
      expect([redirectParams(silent.leftTo as string).get('error'), redirectParams(silent.leftTo as string).get('state')]).toEqual(['login_required', 'st']);
      const visible = await browser.follow(codeFlowUrl(running.issuer, client, { scope: 'openid email' }), running.baseUrl);
      expect(visible.response?.status).toBe(200);
      expect(browser.lastPage).toContain('id="login-form"');
    } finally {
      deleted.delete('demo-0001');
    }
  });

  it('honest: another person signs in on that browser through the login page: the ended session is signed out, and her application gets her own sub', async () => {
    try {
      const { browser } = await signedInThenDeleted();
      const own = pkcePair();
      await browser.follow(codeFlowUrl(running.issuer, client, { scope: 'openid', code_challenge: own.challenge }), running.baseUrl);
      await browser.submit('login-form', { login: 'demo-basic', password: 'demo-basic' }, running.baseUrl);
      // oidc-provider's page for a sign-in by another person than the session's: a form that posts itself, signing that session out.
      const action = /<form method="post" action="([^"]+)"/.exec(browser.lastPage)?.[1] as string;
      const fields: Record<string, string> = Object.fromEntries([...browser.lastPage.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1] as string, m[2] as string]));
      expect(fields.logout).toBe('yes');
      await browser.follow(action.replace(/&amp;/g, '&'), running.baseUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: running.baseUrl }, body: new URLSearchParams(fields).toString() });
      const allowed = await browser.submit('consent-allow', {}, running.baseUrl);
      const redeemed = await redeemCode(running.issuer, client, redirectParams(allowed.leftTo as string).get('code') as string, own.verifier);
      const response = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${redeemed.body.access_token as string}` } });
      expect(await response.json()).toEqual({ sub: pairwiseSubOf('https://rp.example/cb', 'demo-0002') });
    } finally {
      deleted.delete('demo-0001');
    }
  });

  describe('her consent page open when her account is deleted', () => {
    const grantsOf = async (accountId: string): Promise<number> =>
      ((await running.app.svc.store.inventory?.list('Grant', { limit: 500 }))?.records ?? []).filter((r) => r.payload.accountId === accountId).length;
    /** `demo-basic` signed in, on the consent page of `client` (which she never approved). */
    const onConsentPage = async (): Promise<FormBrowser> => {
      const browser = new FormBrowser();
      await browser.follow(codeFlowUrl(running.issuer, client, { scope: 'openid email' }), running.baseUrl);
      await browser.submit('login-form', { login: 'demo-basic', password: 'demo-basic' }, running.baseUrl);
      expect(browser.lastPage).toContain('id="consent-allow"');
      return browser;
    };

    it('attack: her Allow stores no grant for the account that no longer exists and gives no code; she gets the login page', async () => {
      try {
        const browser = await onConsentPage();
        deleted.add('demo-0002');
        const before = await grantsOf('demo-0002');
        const allowed = await browser.submit('consent-allow', {}, running.baseUrl);
        expect(await grantsOf('demo-0002')).toBe(before);
        expect(allowed.leftTo).toBeUndefined();
        expect(browser.lastPage).toContain('id="login-form"');
      } finally {
        deleted.delete('demo-0002');
      }
    });

    it('honest: an account that still exists gets exactly one grant from her Allow, and a code', async () => {
      const browser = await onConsentPage();
      const before = await grantsOf('demo-0002');
      const allowed = await browser.submit('consent-allow', {}, running.baseUrl);
      expect(await grantsOf('demo-0002')).toBe(before + 1);
      expect(redirectParams(allowed.leftTo as string).get('code')).toEqual(expect.any(String));
    });
  });

  it('honest: her account restored, her browser is still signed in and her application gets a code without asking her', async () => {
    const { browser } = await signedInThenDeleted();
    deleted.delete('demo-0001');
    const silent = await browser.follow(codeFlowUrl(running.issuer, client, { scope: 'openid email', prompt: 'none' }), running.baseUrl);
    expect(redirectParams(silent.leftTo as string).get('code')).toEqual(expect.any(String));
  });
});

import { describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';

import { createMemoryStore } from '../../adapters/memory.js';
import { decorateAdapter, type SvcStore } from '../../adapters/store.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { StoreUnavailableError } from '../../lib/errors.js';
import { CONSENT_UNDO_MODEL } from '../../lib/interactions/consent-undo.js';
import { confidentialClient } from '../helpers/app.js';
import { registerClient } from '../helpers/clients.js';
import { codeFlowUrl, FormBrowser, redirectParams } from '../helpers/flow.js';
import { appPerSuite } from '../helpers/suite-app.js';

const web = confidentialClient({ redirect_uris: ['https://rp.example/cb'] });
// Receives UserInfo in plain JSON, so a test reads what her tokens still get.
const plain = confidentialClient({ client_id: 'plain-rp', redirect_uris: ['https://rp.example/cb'], allow_unencrypted_userinfo: true });
const memory = createMemoryStore();
/**
 * While set, each request's read of the first holder slot of a grant (`{grantId}:0`) waits until `left` requests in
 * all made theirs: answers sent at once meet there, each having done its store steps before it.
 */
let meeting: { left: number; all: Promise<void>; meet: () => void } | undefined;
const meetAt = (requests: number): void => {
  let meet!: () => void;
  const all = new Promise<void>((resolve) => (meet = resolve));
  meeting = { left: requests, all, meet };
};
/** While set, the next write of a grant fails as a store away would (503). */
let failNextGrantWrite = false;
const store: SvcStore = {
  ...memory,
  adapter: (model) => (model === 'Grant' ? decorateAdapter(memory.adapter(model), {
    upsert: async (id, payload, expiresIn) => {
      if (failNextGrantWrite) {
        failNextGrantWrite = false;
        throw new StoreUnavailableError({ cause: Object.assign(new Error('injected: grant write refused'), { code: 'NOPERM' }) });
      }
      return memory.adapter(model).upsert(id, payload, expiresIn);
    },
  }) : model !== CONSENT_UNDO_MODEL ? memory.adapter(model) : decorateAdapter(memory.adapter(model), {
    find: async (id) => {
      const m = meeting;
      if (m && id.endsWith(':0')) {
        m.left -= 1;
        if (m.left === 0) {
          meeting = undefined;
          m.meet();
        }
        await m.all;
      }
      return memory.adapter(model).find(id);
    },
  })),
};
const EMAIL_IN_USERINFO = JSON.stringify({ userinfo: { email: null } });

describe('consent in two tabs of one browser: a Deny takes out what its own Allow added, unless her Allow in another tab approved it too (C8)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules(), clients: [web, plain], store });
  const headers = { 'content-type': 'application/x-www-form-urlencoded', origin: '' };
  // A browser keeps one interaction cookie per interaction path; FormBrowser's jar holds one per name, so each tab's
  // cookies are put back before it posts.
  const INTERACTION_COOKIES = ['_interaction', '_interaction.sig', '_interaction_resume', '_interaction_resume.sig'];
  interface Tab { allow: string; deny: string; cookies: Map<string, string> }
  const post = (browser: FormBrowser, tab: Tab, action: 'allow' | 'deny') => {
    for (const [name, value] of tab.cookies) browser.setCookie(name, value);
    return browser.request(tab[action], { method: 'POST', headers: { ...headers, origin: running.baseUrl }, body: '' });
  };
  const silent = async (browser: FormBrowser, scope: string, params: Record<string, string> = {}): Promise<URLSearchParams> =>
    redirectParams((await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope, prompt: 'none', ...params }), running.baseUrl)).leftTo as string);
  /** Whether her grant serves `scope` (and `params`) without asking her. */
  const allowed = async (browser: FormBrowser, scope: string, params: Record<string, string> = {}): Promise<boolean> => (await silent(browser, scope, params)).has('code');
  /** Answers in a tab and follows the answer to the client: the code or error it got. */
  const answer = async (browser: FormBrowser, tab: Tab, action: 'allow' | 'deny'): Promise<URLSearchParams> => {
    const posted = await post(browser, tab, action);
    expect(posted.status).toBe(303);
    return redirectParams((await browser.follow(posted.headers.get('location') as string, running.baseUrl)).leftTo as string);
  };

  /** One browser where `demo` approved `client` for `openid`; `open` opens a consent page of a request (a scope, or the URL of a whole request). */
  const approvedOpenid = async (client = web) => {
    const browser = new FormBrowser();
    await browser.follow(codeFlowUrl(running.issuer, client, { state: 'st', scope: 'openid' }), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code')).toEqual(expect.any(String));
    const open = async (request: string): Promise<Tab> => {
      await browser.follow(request.startsWith('http') ? request : codeFlowUrl(running.issuer, client, { state: 'st', scope: request }), running.baseUrl);
      expect(browser.lastPage).toContain('id="consent-allow"');
      const cookies = new Map(INTERACTION_COOKIES.flatMap((name) => { const value = browser.cookie(name); return value ? [[name, value] as const] : []; }));
      return { allow: browser.formAction('consent-allow', running.baseUrl), deny: browser.formAction('consent-deny', running.baseUrl), cookies };
    };
    return { browser, open };
  };

  /** {@link approvedOpenid}, with two consent pages open: one per request. */
  const twoTabs = async (a: string, b: string, client = web) => {
    const { browser, open } = await approvedOpenid(client);
    return { browser, a: await open(a), b: await open(b) };
  };

  it('honest: Allow email in tab A, Allow profile in tab B (its code delivered), Deny in tab A: profile stays approved', async () => {
    const { browser, a, b } = await twoTabs('openid email', 'openid profile');
    expect((await post(browser, a, 'allow')).status).toBe(303);
    const allowedB = await post(browser, b, 'allow');
    const done = await browser.follow(allowedB.headers.get('location') as string, running.baseUrl);
    expect(redirectParams(done.leftTo as string).get('code')).toEqual(expect.any(String));
    const denied = await post(browser, a, 'deny');
    expect(redirectParams((await browser.follow(denied.headers.get('location') as string, running.baseUrl)).leftTo as string).get('error')).toBe('access_denied');

    expect((await silent(browser, 'openid profile')).get('code')).toEqual(expect.any(String));
    expect((await silent(browser, 'openid email')).get('error')).toBe('consent_required');
  });

  it('attack: Allow email in tab A, Allow profile in tab B, Deny in tab B: email stays, profile is asked again', async () => {
    const { browser, a, b } = await twoTabs('openid email', 'openid profile');
    await post(browser, a, 'allow');
    await post(browser, b, 'allow');
    const denied = await post(browser, b, 'deny');
    await browser.follow(denied.headers.get('location') as string, running.baseUrl);
    expect((await silent(browser, 'openid profile')).get('error')).toBe('consent_required');
    expect((await silent(browser, 'openid email')).get('code')).toEqual(expect.any(String));
  });

  it('attack: Allow then Deny in one tab leaves nothing of that Allow, whatever the other tab did before', async () => {
    const { browser, a, b } = await twoTabs('openid email', 'openid profile');
    const allowedB = await post(browser, b, 'allow');
    await browser.follow(allowedB.headers.get('location') as string, running.baseUrl);
    await post(browser, a, 'allow');
    const denied = await post(browser, a, 'deny');
    await browser.follow(denied.headers.get('location') as string, running.baseUrl);
    expect((await silent(browser, 'openid email')).get('error')).toBe('consent_required');
    expect((await silent(browser, 'openid profile')).get('code')).toEqual(expect.any(String));
  });

  describe('a name both tabs showed her: it goes only when she denied it in both', () => {
    it('honest: Allow email in tab A, Allow email in tab B (its tokens redeemed), Deny in tab A: B\'s tokens still get email at UserInfo', async () => {
      const config = await oidc.discovery(new URL(running.issuer), plain.client_id, undefined, oidc.ClientSecretBasic(plain.client_secret), { execute: [oidc.allowInsecureRequests] });
      const verifier = oidc.randomPKCECodeVerifier();
      const nonce = oidc.randomNonce();
      const request = { redirect_uri: 'https://rp.example/cb', scope: 'openid email', claims: EMAIL_IN_USERINFO };
      const urlB = oidc.buildAuthorizationUrl(config, { ...request, nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const urlA = codeFlowUrl(running.issuer, plain, { state: 'st', ...request });
      const { browser, a, b } = await twoTabs(urlA, urlB.href, plain);
      expect((await post(browser, a, 'allow')).status).toBe(303);
      const allowedB = await post(browser, b, 'allow');
      const callback = (await browser.follow(allowedB.headers.get('location') as string, running.baseUrl)).leftTo as string;
      const tokens = await oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
      const sub = tokens.claims()?.sub as string;
      expect((await oidc.fetchUserInfo(config, tokens.access_token, sub)).email).toBe('erika.mustermann@example.com');

      expect((await answer(browser, a, 'deny')).get('error')).toBe('access_denied');
      expect((await oidc.fetchUserInfo(config, tokens.access_token, sub)).email).toBe('erika.mustermann@example.com');
      const again = await browser.follow(codeFlowUrl(running.issuer, plain, { state: 'st', ...request, prompt: 'none' }), running.baseUrl);
      expect(redirectParams(again.leftTo as string).get('code')).toEqual(expect.any(String));
    });

    it('honest: Allow twice in tab A (a double click), Allow in tab B, Deny in tab A: email stays approved', async () => {
      const { browser, a, b } = await twoTabs('openid email', 'openid email');
      expect((await post(browser, a, 'allow')).status).toBe(303);
      expect((await post(browser, a, 'allow')).status).toBe(303);
      expect((await answer(browser, b, 'allow')).get('code')).toEqual(expect.any(String));
      expect((await answer(browser, a, 'deny')).get('error')).toBe('access_denied');
      expect(await allowed(browser, 'openid email')).toBe(true);
    });

    it.each([
      ['its scope', 'openid email', {}, 'openid email profile'],
      ['the claims parameter', 'openid', { claims: EMAIL_IN_USERINFO }, 'openid profile'],
    ])('honest: tab B opened after the Allow in tab A asks for email again (by %s) with profile; Allow B, Deny A: email stays', async (_by, scope, params, scopeB) => {
      const { browser, open } = await approvedOpenid();
      const a = await open(codeFlowUrl(running.issuer, web, { state: 'st', scope, ...params }));
      expect((await post(browser, a, 'allow')).status).toBe(303);
      // Only profile is missing now, but her page shows email too, and she approves it.
      const b = await open(codeFlowUrl(running.issuer, web, { state: 'st', scope: scopeB, ...params }));
      expect((await answer(browser, b, 'allow')).get('code')).toEqual(expect.any(String));
      expect((await answer(browser, a, 'deny')).get('error')).toBe('access_denied');
      expect(await allowed(browser, scope, params)).toBe(true);
    });

    it('attack: Allow email and profile in tab A, Allow profile in tab B, Deny in tab A: email goes (only A showed it), profile stays', async () => {
      const { browser, a, b } = await twoTabs('openid email profile', 'openid profile');
      expect((await post(browser, a, 'allow')).status).toBe(303);
      expect((await answer(browser, b, 'allow')).get('code')).toEqual(expect.any(String));
      expect((await answer(browser, a, 'deny')).get('error')).toBe('access_denied');
      expect(await allowed(browser, 'openid email')).toBe(false);
      expect(await allowed(browser, 'openid profile')).toBe(true);
    });

    it('attack: Allow email in both tabs, then Deny in both, in either order: after the first Deny it stays, after the second nothing of it does', async () => {
      for (const [first, second] of [['a', 'b'], ['b', 'a']] as const) {
        const tabs = await twoTabs('openid email', 'openid email');
        await post(tabs.browser, tabs.a, 'allow');
        await post(tabs.browser, tabs.b, 'allow');
        expect((await answer(tabs.browser, tabs[first], 'deny')).get('error')).toBe('access_denied');
        expect([first, await allowed(tabs.browser, 'openid email')]).toEqual([first, true]);
        expect((await answer(tabs.browser, tabs[second], 'deny')).get('error')).toBe('access_denied');
        expect([first, await allowed(tabs.browser, 'openid email')]).toEqual([first, false]);
        // Neither a scope claim by name nor where it travels stays: named in UserInfo, it is asked again too.
        const named = await tabs.browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope: 'openid', claims: EMAIL_IN_USERINFO, prompt: 'none' }), running.baseUrl);
        expect(redirectParams(named.leftTo as string).get('error')).toBe('consent_required');
      }
    });

    it('at the same instant: after Allows in both tabs at once a Deny in either keeps email, a Deny in both does not; Denies at once leave none of it', async () => {
      for (const [first, second] of [['a', 'b'], ['b', 'a']] as const) {
        const tabs = await twoTabs('openid email', 'openid email');
        // Each Allow reads the grant, then who holds names of it, before the other wrote anything.
        meetAt(2);
        await Promise.all([post(tabs.browser, tabs.a, 'allow'), post(tabs.browser, tabs.b, 'allow')]);
        expect((await answer(tabs.browser, tabs[first], 'deny')).get('error')).toBe('access_denied');
        expect([first, await allowed(tabs.browser, 'openid email')]).toEqual([first, true]);
        expect((await answer(tabs.browser, tabs[second], 'deny')).get('error')).toBe('access_denied');
        expect([first, await allowed(tabs.browser, 'openid email')]).toEqual([first, false]);
      }

      const tabs = await twoTabs('openid email', 'openid email');
      await post(tabs.browser, tabs.a, 'allow');
      await post(tabs.browser, tabs.b, 'allow');
      // Neither Deny reads who else holds email before the other one took its own holding back.
      meetAt(2);
      const denied = await Promise.all([post(tabs.browser, tabs.a, 'deny'), post(tabs.browser, tabs.b, 'deny')]);
      expect(denied.map((d) => d.status)).toEqual([303, 303]);
      expect(await allowed(tabs.browser, 'openid email')).toBe(false);
    });
  });
  describe('a first consent in two tabs: the later Allow joins the grant the earlier one gave, so the earlier tab\'s tokens go on working', () => {
    /** The relying party `plain`, run by openid-client: a request of `scope` in UserInfo's `claims`, and its tokens. */
    const relyingParty = async () => {
      const config = await oidc.discovery(new URL(running.issuer), plain.client_id, undefined, oidc.ClientSecretBasic(plain.client_secret), { execute: [oidc.allowInsecureRequests] });
      const request = async (scope: string, userinfo: Record<string, null>) => {
        const verifier = oidc.randomPKCECodeVerifier();
        const nonce = oidc.randomNonce();
        const url = oidc.buildAuthorizationUrl(config, { redirect_uri: 'https://rp.example/cb', scope, claims: JSON.stringify({ userinfo }), nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
        return { url: url.href, redeem: (callback: URLSearchParams) => oidc.authorizationCodeGrant(config, new URL(`https://rp.example/cb?${callback.toString()}`), { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true }) };
      };
      const userinfo = async (tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>) => oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()?.sub as string);
      return { request, userinfo };
    };
    const silentlyFor = async (browser: FormBrowser, scope: string, userinfo: Record<string, null>): Promise<URLSearchParams> =>
      redirectParams((await browser.follow(codeFlowUrl(running.issuer, plain, { state: 'st', scope, claims: JSON.stringify({ userinfo }), prompt: 'none' }), running.baseUrl)).leftTo as string);

    it('honest: both tabs ask her first consent; Allow in tab A (its tokens in use), then Allow in tab B: the tokens of both tabs get her UserInfo', async () => {
      const rp = await relyingParty();
      // Signed in (for another application), no grant of this one yet.
      const { browser, open } = await approvedOpenid();
      const [requestA, requestB] = [await rp.request('openid email', { email: null }), await rp.request('openid email', { email: null })];
      const [a, b] = [await open(requestA.url), await open(requestB.url)];
      const tokensA = await requestA.redeem(await answer(browser, a, 'allow'));
      expect((await rp.userinfo(tokensA)).email).toBe('erika.mustermann@example.com');

      const tokensB = await requestB.redeem(await answer(browser, b, 'allow'));
      expect((await rp.userinfo(tokensB)).email).toBe('erika.mustermann@example.com');
      expect((await rp.userinfo(tokensA)).email).toBe('erika.mustermann@example.com');
    });

    it('attack: Allow in tab A, then in tab B (asking profile too) Allow and Deny: what only B showed goes, what A approved stays, and A\'s tokens go on working', async () => {
      const rp = await relyingParty();
      const { browser, open } = await approvedOpenid();
      const [requestA, requestB] = [await rp.request('openid email', { email: null }), await rp.request('openid email profile', { email: null, name: null })];
      const [a, b] = [await open(requestA.url), await open(requestB.url)];
      const tokensA = await requestA.redeem(await answer(browser, a, 'allow'));
      expect((await post(browser, b, 'allow')).status).toBe(303);
      expect((await answer(browser, b, 'deny')).get('error')).toBe('access_denied');

      expect((await rp.userinfo(tokensA)).email).toBe('erika.mustermann@example.com');
      expect((await silentlyFor(browser, 'openid email', { email: null })).get('code')).toEqual(expect.any(String));
      expect((await silentlyFor(browser, 'openid profile', { name: null })).get('error')).toBe('consent_required');
    });
  });
  describe('verified claims: oidc-provider passes `verified_claims` only while the grant holds that name', () => {
    /** A `claims` parameter asking for `name` verified, in UserInfo. */
    const verifiedInUserinfo = (name: string): string => JSON.stringify({ userinfo: { verified_claims: { verification: { trust_framework: null }, claims: { [name]: null } } } });

    it('honest: Allow verified given_name in tab A, then in tab B (opened after it) verified family_name (its tokens redeemed), Deny in tab A: B\'s tokens still get verified family_name', async () => {
      const rsa = await registerClient(running, 'rsa');
      const redirectUri = (rsa.metadata.redirect_uris as string[])[0] as string;
      const config = await oidc.discovery(new URL(running.issuer), rsa.metadata.client_id, undefined, oidc.ClientSecretBasic(rsa.metadata.client_secret), { execute: [oidc.allowInsecureRequests] });
      rsa.configure(config);
      const { browser, open } = await approvedOpenid(rsa.metadata);
      const a = await open(codeFlowUrl(running.issuer, rsa.metadata, { state: 'st', scope: 'openid', claims: verifiedInUserinfo('given_name') }));
      expect((await post(browser, a, 'allow')).status).toBe(303);
      // `verified_claims` is granted now: her page in tab B asks for the verified family_name, and she approves it.
      const verifier = oidc.randomPKCECodeVerifier();
      const nonce = oidc.randomNonce();
      const urlB = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'openid', claims: verifiedInUserinfo('family_name'), nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const b = await open(urlB.href);
      const allowedB = await post(browser, b, 'allow');
      const callback = (await browser.follow(allowedB.headers.get('location') as string, running.baseUrl)).leftTo as string;
      const tokens = await oidc.authorizationCodeGrant(config, new URL(callback), { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
      const sub = tokens.claims()?.sub as string;
      const verifiedOf = async (): Promise<unknown> => ((await oidc.fetchUserInfo(config, tokens.access_token, sub)).verified_claims as { claims?: unknown } | undefined)?.claims;
      expect(await verifiedOf()).toEqual({ family_name: 'Mustermann' });

      expect((await answer(browser, a, 'deny')).get('error')).toBe('access_denied');
      expect(await verifiedOf()).toEqual({ family_name: 'Mustermann' });
      const again = await browser.follow(codeFlowUrl(running.issuer, rsa.metadata, { state: 'st', scope: 'openid', claims: verifiedInUserinfo('family_name'), prompt: 'none' }), running.baseUrl);
      expect(redirectParams(again.leftTo as string).get('code')).toEqual(expect.any(String));
      // What only tab A showed goes with its Deny.
      const denied = await browser.follow(codeFlowUrl(running.issuer, rsa.metadata, { state: 'st', scope: 'openid', claims: verifiedInUserinfo('given_name'), prompt: 'none' }), running.baseUrl);
      expect(redirectParams(denied.leftTo as string).get('error')).toBe('consent_required');
    });
  });
  describe('what goes wrong or unseen makes a Deny take out more, never less', () => {
    it('a Deny whose grant write failed (503) leaves her grant as it was; sent again, it takes out what the Allow added', async () => {
      const { browser, a, b } = await twoTabs('openid email', 'openid profile');
      expect((await post(browser, a, 'allow')).status).toBe(303);
      expect((await post(browser, b, 'allow')).status).toBe(303);
      failNextGrantWrite = true;
      expect((await post(browser, a, 'deny')).status).toBe(503);
      expect(failNextGrantWrite).toBe(false);
      expect(await allowed(browser, 'openid email')).toBe(true);
      expect((await answer(browser, a, 'deny')).get('error')).toBe('access_denied');
      expect(await allowed(browser, 'openid email')).toBe(false);
      expect(await allowed(browser, 'openid profile')).toBe(true);
    });

    it('17 tabs (one more than the holder slots) allowing email: denied in all of them, email goes; the 17th alone unseen, a Deny in the 16 others takes it (she is asked again)', async () => {
      const { browser, open } = await approvedOpenid();
      const tabs: Tab[] = [];
      for (let i = 0; i < 17; i += 1) tabs.push(await open('openid email'));
      for (const tab of tabs) expect((await post(browser, tab, 'allow')).status).toBe(303);
      const [unseen, ...slotted] = [tabs[16] as Tab, ...tabs.slice(0, 16)];
      // Its Deny sees the 16 others' holdings: email stays for them.
      expect((await answer(browser, unseen, 'deny')).get('error')).toBe('access_denied');
      expect(await allowed(browser, 'openid email')).toBe(true);
      for (const tab of slotted.slice(0, 15)) expect((await answer(browser, tab, 'deny')).get('error')).toBe('access_denied');
      expect(await allowed(browser, 'openid email')).toBe(true);
      expect((await answer(browser, slotted[15] as Tab, 'deny')).get('error')).toBe('access_denied');
      expect(await allowed(browser, 'openid email')).toBe(false);

      // Allowed in all 17, denied in the 16 with a slot: the 17th's approval went unseen, so email goes too.
      const again = await approvedOpenid();
      const more: Tab[] = [];
      for (let i = 0; i < 17; i += 1) more.push(await again.open('openid email'));
      for (const tab of more) expect((await post(again.browser, tab, 'allow')).status).toBe(303);
      for (const tab of more.slice(0, 16)) expect((await answer(again.browser, tab, 'deny')).get('error')).toBe('access_denied');
      expect(await allowed(again.browser, 'openid email')).toBe(false);
    });
  });
});

import { describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import { createMemoryStore } from '../../adapters/memory.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { confidentialClient } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, redirectParams } from '../helpers/flow.js';
import { register } from '../helpers/registration.js';
import { appPerSuite } from '../helpers/suite-app.js';

const web = confidentialClient({ redirect_uris: ['https://rp.example/cb'] });
const store = createMemoryStore();

/** The `form-action` sources of a page's Content-Security-Policy. */
const formAction = (response: Response | undefined): string[] =>
  /(?:^|;)\s*form-action ([^;]*)/.exec(response?.headers.get('content-security-policy') ?? '')?.[1]?.trim().split(/\s+/) ?? [];

describe('the person-facing pages: form targets of native apps, ended interactions, answers sent twice (C8)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules(), clients: [web], store });
  const form = (origin: string) => ({ 'content-type': 'application/x-www-form-urlencoded', origin });

  const registerNative = async (redirectUri: string): Promise<ClientMetadata> => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { application_type: 'native', token_endpoint_auth_method: 'none', redirect_uris: [redirectUri] }, token);
    expect(res.status).toBe(201);
    return res.body as unknown as ClientMetadata;
  };

  /** The login page's and the consent page's responses for a fresh sign-in of `client` as `demo`. */
  const pagesOf = async (client: ClientMetadata): Promise<{ login?: Response; consent?: Response }> => {
    const browser = new FormBrowser();
    const login = await browser.follow(codeFlowUrl(running.issuer, client, { state: 'st', scope: 'openid email' }), running.baseUrl);
    expect(browser.lastPage).toContain('id="login-form"');
    const consent = await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain('id="consent-allow"');
    return { login: login.response, consent: consent.response };
  };

  describe('a native app with a private-use URI scheme (RFC 8252 7.1) can receive its code', () => {
    it('the login and consent pages allow her form to end at com.example.app: (an opaque origin, which `*` does not match)', async () => {
      const pages = await pagesOf(await registerNative('com.example.app:/cb'));
      for (const page of [pages.login, pages.consent]) {
        expect(formAction(page)).toEqual(["'self'", '*', 'com.example.app:']);
      }
    });

    it('honest: web, loopback and IPv6-loopback clients get any web origin, which a callback sending her on to another host needs', async () => {
      const pages = [await pagesOf(web), await pagesOf(await registerNative('http://127.0.0.1:8765/cb')), await pagesOf(await registerNative('http://[::1]:8765/cb'))];
      for (const { login, consent } of pages) for (const page of [login, consent]) expect(formAction(page)).toEqual(["'self'", '*']);
    });
  });

  describe('the error page explains a finished or expired interaction as such', () => {
    it('the back button after consent: the page says her sign-in expired or ended, not that the application erred', async () => {
      const browser = new FormBrowser();
      await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st' }), running.baseUrl);
      await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
      const consentPage = browser.formAction('consent-allow', running.baseUrl).replace(/\/confirm$/, '');
      const done = await browser.submit('consent-allow', {}, running.baseUrl);
      expect(redirectParams(done.leftTo as string).get('code')).toEqual(expect.any(String));

      const back = await browser.request(consentPage, { headers: { accept: 'text/html' } });
      expect(back.status).toBe(400);
      const html = await back.text();
      expect(html).toContain('Your sign-in expired, was finished already (the back button, another tab, another person signing in in this browser) or was opened in another browser.');
      expect(html).not.toContain('The application that sent you here');
      expect(html).toContain('<code>invalid_request</code>');
      const json = await browser.request(consentPage);
      expect([json.status, ((await json.json()) as { error?: string }).error]).toEqual([400, 'invalid_request']);
    });

    it('a request with no cookie at all (opened in another browser, or a browser blocking cookies) at the resume step says so, and that signing in needs cookies', async () => {
      const browser = new FormBrowser();
      await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st' }), running.baseUrl);
      const action = browser.formAction('login-form', running.baseUrl);
      const login = await browser.request(action, { method: 'POST', headers: form(running.baseUrl), body: 'login=demo&password=demo' });
      const resume = login.headers.get('location') as string;
      const elsewhere = await fetch(resume, { headers: { accept: 'text/html' }, redirect: 'manual' });
      expect(elsewhere.status).toBe(400);
      const html = await elsewhere.text();
      expect(html).toContain('Your sign-in expired or was opened in another browser, or this browser blocks cookies for this site: signing in needs them, so allow them if it does.');
      expect(html).not.toContain('The application that sent you here');
    });

    it('honest: a request the application got wrong is still explained as the application\'s', async () => {
      const res = await fetch(`${running.issuer}/authorize?response_type=code&scope=openid`, { headers: { accept: 'text/html' }, redirect: 'manual' });
      expect(res.status).toBe(400);
      const html = await res.text();
      expect(html).toContain('The application that sent you here made a request this provider cannot accept.');
      expect(html).toContain('<code>invalid_request</code>');
    });
  });

  describe('Allow sent more than once (a double click, the back button) or followed by Deny: only her last answer stays', () => {
    const grantsOf = async (): Promise<number> => (await store.inventory.list('Grant', { limit: 500 })).records.length;

    /** Signs in as `demo` in a fresh browser up to the consent page; the Allow and Deny actions. */
    const atConsent = async (): Promise<{ browser: FormBrowser; allow: string; deny: string }> => {
      const browser = new FormBrowser();
      await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope: 'openid email' }), running.baseUrl);
      await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
      return { browser, allow: browser.formAction('consent-allow', running.baseUrl), deny: browser.formAction('consent-deny', running.baseUrl) };
    };

    it('five Allows then Deny: she denied, and no approval of hers stays in the store', async () => {
      const before = await grantsOf();
      const { browser, allow, deny } = await atConsent();
      for (let i = 0; i < 5; i += 1) {
        expect((await browser.request(allow, { method: 'POST', headers: form(running.baseUrl), body: '' })).status).toBe(303);
      }
      expect(await grantsOf()).toBe(before + 1);
      const denied = await browser.request(deny, { method: 'POST', headers: form(running.baseUrl), body: '' });
      const back = await browser.follow(denied.headers.get('location') as string, running.baseUrl);
      expect(redirectParams(back.leftTo as string).get('error')).toBe('access_denied');
      expect(await grantsOf()).toBe(before);
    });

    it('honest: Allow twice stores one grant, and it serves her next flow without a page (prompt=none)', async () => {
      const before = await grantsOf();
      const { browser, allow } = await atConsent();
      await browser.request(allow, { method: 'POST', headers: form(running.baseUrl), body: '' });
      const second = await browser.request(allow, { method: 'POST', headers: form(running.baseUrl), body: '' });
      const done = await browser.follow(second.headers.get('location') as string, running.baseUrl);
      expect(redirectParams(done.leftTo as string).get('code')).toEqual(expect.any(String));
      expect(await grantsOf()).toBe(before + 1);
      const silent = await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope: 'openid email', prompt: 'none' }), running.baseUrl);
      expect(redirectParams(silent.leftTo as string).get('code')).toEqual(expect.any(String));
    });

    const post = (browser: FormBrowser, action: string) => browser.request(action, { method: 'POST', headers: form(running.baseUrl), body: '' });

    /** A browser where `demo` approved `web` for `openid` only, now at the consent page for `openid email`. */
    const approvedThenAskedMore = async (): Promise<{ browser: FormBrowser; allow: string; deny: string }> => {
      const browser = new FormBrowser();
      await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope: 'openid' }), running.baseUrl);
      await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
      const first = await browser.submit('consent-allow', {}, running.baseUrl);
      expect(redirectParams(first.leftTo as string).get('code')).toEqual(expect.any(String));
      await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope: 'openid email' }), running.baseUrl);
      expect(browser.lastPage).toContain('id="consent-allow"');
      return { browser, allow: browser.formAction('consent-allow', running.baseUrl), deny: browser.formAction('consent-deny', running.baseUrl) };
    };

    it('attack: Allow then Deny for more scopes: her last answer was Deny, so a silent request for email is consent_required', async () => {
      const { browser, allow, deny } = await approvedThenAskedMore();
      expect((await post(browser, allow)).status).toBe(303);
      const denied = await post(browser, deny);
      const back = await browser.follow(denied.headers.get('location') as string, running.baseUrl);
      expect(redirectParams(back.leftTo as string).get('error')).toBe('access_denied');

      const silent = await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope: 'openid email', prompt: 'none' }), running.baseUrl);
      expect(redirectParams(silent.leftTo as string).get('error')).toBe('consent_required');
    });

    it('honest: Deny for more scopes keeps what she approved before (openid alone is served silently)', async () => {
      const { browser, allow, deny } = await approvedThenAskedMore();
      expect((await post(browser, allow)).status).toBe(303);
      const denied = await post(browser, deny);
      await browser.follow(denied.headers.get('location') as string, running.baseUrl);
      const silent = await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope: 'openid', prompt: 'none' }), running.baseUrl);
      expect(redirectParams(silent.leftTo as string).get('code')).toEqual(expect.any(String));
    });

    it('honest: Allow twice for more scopes serves email silently afterwards', async () => {
      const { browser, allow } = await approvedThenAskedMore();
      await post(browser, allow);
      const second = await post(browser, allow);
      const done = await browser.follow(second.headers.get('location') as string, running.baseUrl);
      expect(redirectParams(done.leftTo as string).get('code')).toEqual(expect.any(String));
      const silent = await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope: 'openid email', prompt: 'none' }), running.baseUrl);
      expect(redirectParams(silent.leftTo as string).get('code')).toEqual(expect.any(String));
    });
  });
});

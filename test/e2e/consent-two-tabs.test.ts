import { describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { confidentialClient } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, redirectParams } from '../helpers/flow.js';
import { appPerSuite } from '../helpers/suite-app.js';

const web = confidentialClient({ redirect_uris: ['https://rp.example/cb'] });
const store = createMemoryStore();

describe('consent in two tabs of one browser: a Deny takes out only what its own Allow added (C8)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules(), clients: [web], store });
  const headers = { 'content-type': 'application/x-www-form-urlencoded', origin: '' };
  // A browser keeps one interaction cookie per interaction path; FormBrowser's jar holds one per name, so each tab's
  // cookies are put back before it posts.
  const INTERACTION_COOKIES = ['_interaction', '_interaction.sig', '_interaction_resume', '_interaction_resume.sig'];
  interface Tab { allow: string; deny: string; cookies: Map<string, string> }
  const post = (browser: FormBrowser, tab: Tab, action: 'allow' | 'deny') => {
    for (const [name, value] of tab.cookies) browser.setCookie(name, value);
    return browser.request(tab[action], { method: 'POST', headers: { ...headers, origin: running.baseUrl }, body: '' });
  };
  const silent = async (browser: FormBrowser, scope: string): Promise<URLSearchParams> =>
    redirectParams((await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope, prompt: 'none' }), running.baseUrl)).leftTo as string);

  /** One browser where `demo` approved `web` for `openid`, with two consent pages open: one per scope. */
  const twoTabs = async (a: string, b: string) => {
    const browser = new FormBrowser();
    await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope: 'openid' }), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code')).toEqual(expect.any(String));
    const tab = async (scope: string): Promise<Tab> => {
      await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', scope }), running.baseUrl);
      expect(browser.lastPage).toContain('id="consent-allow"');
      const cookies = new Map(INTERACTION_COOKIES.flatMap((name) => { const value = browser.cookie(name); return value ? [[name, value] as const] : []; }));
      return { allow: browser.formAction('consent-allow', running.baseUrl), deny: browser.formAction('consent-deny', running.baseUrl), cookies };
    };
    return { browser, a: await tab(a), b: await tab(b) };
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
});

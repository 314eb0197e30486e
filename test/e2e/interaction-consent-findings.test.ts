import { describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { confidentialClient } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, redirectParams } from '../helpers/flow.js';
import { appPerSuite } from '../helpers/suite-app.js';

const web = confidentialClient({ redirect_uris: ['https://rp.example/cb'] });
const store = createMemoryStore();

describe('an Allow followed by Deny on the consent page of a client she approved before (C8)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules(), clients: [web], store });
  const form = { 'content-type': 'application/x-www-form-urlencoded', origin: '' };
  const post = (browser: FormBrowser, action: string) => browser.request(action, { method: 'POST', headers: { ...form, origin: running.baseUrl }, body: '' });

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

import { describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { confidentialClient } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, redirectParams } from '../helpers/flow.js';
import { appPerSuite } from '../helpers/suite-app.js';

const web = confidentialClient({ redirect_uris: ['https://rp.example/cb'] });

/** The interaction cookies a browser holds: what a sibling subdomain can plant in another browser (Domain=parent). */
const interactionCookies = (browser: FormBrowser): [string, string][] =>
  ['_interaction', '_interaction.sig'].map((name) => [name, browser.cookie(name) as string]);

describe('a sign-in counts only in the browser that signed in (interaction cookie fixation)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules(), clients: [web], store: createMemoryStore() });

  /** The attacker starts a flow; she signs in on his interaction, planted in her browser; he resumes it in his. */
  const plantedSignIn = async (): Promise<{ attacker: FormBrowser; victim: FormBrowser; resume: string; victimResume: Response }> => {
    const attacker = new FormBrowser();
    await attacker.follow(codeFlowUrl(running.issuer, web, { state: 'st' }), running.baseUrl);
    expect(attacker.lastPage).toContain('id="login-form"');
    const page = attacker.formAction('login-form', running.baseUrl).replace(/\/login$/, '');

    const victim = new FormBrowser();
    for (const [name, value] of interactionCookies(attacker)) victim.setCookie(name, value);
    await victim.follow(page, running.baseUrl);
    expect(victim.lastPage).toContain('id="login-form"');
    const login = await victim.post(victim.formAction('login-form', running.baseUrl), { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(login.status).toBe(303);
    const resume = new URL(login.headers.get('location') as string, running.baseUrl).href;
    return { attacker, victim, resume, victimResume: await victim.request(resume) };
  };

  it('attack: her sign-in on an interaction a sibling subdomain planted in her browser does not sign in the browser that started it', async () => {
    const { attacker, resume } = await plantedSignIn();
    const step = await attacker.follow(resume, running.baseUrl);
    expect(attacker.lastPage).not.toContain('id="consent-allow"');
    expect(step.leftTo).toBeUndefined();
    expect(step.response?.status).toBe(400);
    // Nor silently afterwards: his browser holds no session of hers.
    const silent = await attacker.follow(codeFlowUrl(running.issuer, web, { state: 'st', prompt: 'none' }), running.baseUrl);
    expect(redirectParams(silent.leftTo as string).get('error')).toBe('login_required');
  });

  /** Signs `browser` in as `login` (consenting), so it holds a session. */
  const signedIn = async (browser: FormBrowser, login: string): Promise<void> => {
    await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st' }), running.baseUrl);
    await browser.submit('login-form', { login, password: login }, running.baseUrl);
    const done = await browser.submit('consent-allow', {}, running.baseUrl);
    expect(redirectParams(done.leftTo as string).get('code')).toEqual(expect.any(String));
  };

  /** Posts the sign-out form oidc-provider answers a resume with when the person changed (what its script submits). */
  const confirmSignOut = async (browser: FormBrowser): Promise<{ response?: Response; leftTo?: string }> => {
    const action = /<form method="post" action="([^"]+)"/.exec(browser.lastPage)?.[1]?.replace(/&amp;/g, '&');
    const fields: Record<string, string> = Object.fromEntries([...browser.lastPage.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1] as string, m[2] as string]));
    expect(fields.logout).toBe('yes');
    return browser.follow(new URL(action as string, running.baseUrl).href, running.baseUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: running.baseUrl },
      body: new URLSearchParams(fields).toString(),
    });
  };

  it('attack: planted from a browser signed in as another person (prompt=login), her sign-in ends his session there and signs nobody in', async () => {
    const attacker = new FormBrowser();
    await signedIn(attacker, 'demo-basic');
    await attacker.follow(codeFlowUrl(running.issuer, web, { state: 'st', prompt: 'login' }), running.baseUrl);
    const page = attacker.formAction('login-form', running.baseUrl).replace(/\/login$/, '');
    const victim = new FormBrowser();
    for (const [name, value] of interactionCookies(attacker)) victim.setCookie(name, value);
    await victim.follow(page, running.baseUrl);
    const login = await victim.post(victim.formAction('login-form', running.baseUrl), { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(login.status).toBe(303);

    await attacker.follow(new URL(login.headers.get('location') as string, running.baseUrl).href, running.baseUrl);
    const step = await confirmSignOut(attacker);
    expect(attacker.lastPage).not.toContain('id="consent-allow"');
    expect([step.leftTo, step.response?.status]).toEqual([undefined, 400]);
    const silent = await attacker.follow(codeFlowUrl(running.issuer, web, { state: 'st', prompt: 'none' }), running.baseUrl);
    expect(redirectParams(silent.leftTo as string).get('error')).toBe('login_required');
  });

  it('honest: in a browser signed in as one person, another signs in (prompt=login): the first is signed out, the second reaches consent and a code', async () => {
    const browser = new FormBrowser();
    await signedIn(browser, 'demo-basic');
    await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st', prompt: 'login' }), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    await confirmSignOut(browser);
    expect(browser.lastPage).toContain('id="consent-allow"');
    const done = await browser.submit('consent-allow', {}, running.baseUrl);
    expect(redirectParams(done.leftTo as string).get('code')).toEqual(expect.any(String));
  });

  it('honest: a browser that signs in on its own interaction resumes it, to consent and a code', async () => {
    const browser = new FormBrowser();
    await browser.follow(codeFlowUrl(running.issuer, web, { state: 'st' }), running.baseUrl);
    const consent = await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(consent.response?.status).toBe(200);
    const done = await browser.submit('consent-allow', {}, running.baseUrl);
    expect(redirectParams(done.leftTo as string).get('code')).toEqual(expect.any(String));
  });
});

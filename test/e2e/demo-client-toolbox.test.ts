import { describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { FormBrowser } from '../helpers/flow.js';
import { managementCalls } from '../helpers/management-calls.js';

const AUTH = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
const M = '/oidc/v1/management';

describe('the demo client in the operator toolbox (docs/demo.md: "delete old ones in the toolbox")', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules(), properties: { 'svc.proxy': true } });
  const call = managementCalls(running, AUTH);

  /** Posts the demo form in a fresh browser; the browser and where the page sent it. */
  const start = async (): Promise<{ browser: FormBrowser; location: string }> => {
    const browser = new FormBrowser();
    const posted = await browser.post(`${running.baseUrl}/oidcdemo/login`, { scope: 'email' }, running.baseUrl);
    expect(posted.status).toBe(303);
    return { browser, location: posted.headers.get('location') as string };
  };
  const clientOf = (location: string): string => new URL(location).searchParams.get('client_id') as string;
  /** Follows `location` through login and consent as `demo`; the status and page the demo callback answered. */
  const complete = async (browser: FormBrowser, location: string): Promise<{ status?: number; page: string }> => {
    let step = await browser.follow(location, running.baseUrl);
    for (let pages = 0; pages < 3 && /id="(login-form|consent-allow)"/.test(browser.lastPage); pages += 1) {
      step = browser.lastPage.includes('id="login-form"')
        ? await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl)
        : await browser.submit('consent-allow', {}, running.baseUrl);
    }
    return { status: step.response?.status, page: browser.lastPage };
  };
  /** The stored demo clients the toolbox lists. */
  const demoClients = async (): Promise<string[]> => {
    const listed = await call('GET', `${M}/clients?limit=500`);
    expect(listed.status).toBe(200);
    return (listed.body.clients as Record<string, unknown>[]).filter((c) => c.client_name === 'svc-connect demo page').map((c) => String(c.client_id));
  };

  it('after the operator deletes the demo client the page uses, its next flows register one new client and complete', async () => {
    const first = await start();
    const old = clientOf(first.location);
    expect((await call('DELETE', `${M}/clients/${old}`)).status).toBe(200);
    const next = await Promise.all([start(), start(), start()]);
    const fresh = new Set(next.map((n) => clientOf(n.location)));
    expect(fresh.size).toBe(1);
    expect(fresh.has(old)).toBe(false);
    expect(await demoClients()).toEqual([...fresh]);
    const done = await complete(next[0].browser, next[0].location);
    expect([done.status, done.page]).toEqual([200, expect.stringContaining('id="id-token-claims"')]);
  });

  it('honest: a demo client the operator disabled stays the one the page uses, and stays refused (invalid_client); enabled again, it works', async () => {
    const used = clientOf((await start()).location);
    expect((await call('POST', `${M}/clients/${used}/disable`)).body).toMatchObject({ disabled: true, changed: true });
    const refused = await start();
    expect(clientOf(refused.location)).toBe(used);
    await refused.browser.follow(refused.location, running.baseUrl);
    expect(refused.browser.lastPage).toContain('invalid_client');
    expect(await demoClients()).toEqual([used]);
    expect((await call('POST', `${M}/clients/${used}/enable`)).body).toMatchObject({ disabled: false, changed: true });
    const again = await start();
    expect(clientOf(again.location)).toBe(used);
    const done = await complete(again.browser, again.location);
    expect([done.status, done.page]).toEqual([200, expect.stringContaining('id="id-token-claims"')]);
  });
});

import { describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { FormBrowser } from '../helpers/flow.js';

describe('the demo page when the provider requires PAR (svc.par.required)', () => {
  const running = appPerSuite({ properties: { 'svc.par.required': true }, claimModules: createDemoClaimModules() });

  it.each([
    ['without the switch (plain parameters pushed)', {}],
    ['with the switch (an encrypted request object pushed)', { par: 'encrypted' }],
  ])('pushes every request %s: /authorize sees client_id and request_uri only, and the flow completes', async (_name, extra) => {
    const browser = new FormBrowser();
    const origin = running.baseUrl;
    const posted = await browser.post(`${origin}/oidcdemo/login`, { scope: 'email', claims: JSON.stringify({ userinfo: { email: { essential: true } } }), ...extra }, origin);
    expect(posted.status).toBe(303);
    const url = new URL(posted.headers.get('location') as string);
    expect(url.pathname).toBe('/oidc/v1/authorize');
    expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    await browser.follow(url.href, origin);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, origin);
    const done = await browser.submit('consent-allow', {}, origin);
    expect(done.response?.status).toBe(200);
    expect(browser.lastPage).toContain('id="userinfo-claims"');
    expect(browser.lastPage).toContain('erika.mustermann@example.com');
    expect(browser.lastPage).toContain('<code id="authorization-url-parameters">client_id request_uri</code>');
  });
});

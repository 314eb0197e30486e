import { describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { FormBrowser } from '../helpers/flow.js';
import { raw } from '../helpers/raw-request.js';

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

describe('the demo page and a claims request nested too deep to write out again (never a 500)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });
  const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  /** POSTs the demo form same-origin; `claims` with its brackets unescaped, as a browser may send them, so 5,000 levels fit in 16 KiB. */
  const postDemo = async (claims: string, extra: Record<string, string>): Promise<{ status: number; text: string }> => {
    const encoded = claims.replace(/"/g, '%22').replace(/:/g, '%3A').replace(/,/g, '%2C').replace(/\{/g, '%7B').replace(/\}/g, '%7D');
    const body = `${new URLSearchParams({ scope: 'email', ...extra }).toString()}&claims=${encoded}`;
    const res = await raw(`${running.baseUrl}/oidcdemo/login`, 'POST', { 'content-type': 'application/x-www-form-urlencoded', origin: running.baseUrl, 'content-length': String(Buffer.byteLength(body)) }, body);
    return { status: res.status, text: res.text };
  };

  it.each([
    ['the verified-claims option', { verified: 'yes' }],
    ['an encrypted request object pushed', { par: 'encrypted' }],
    ['plain parameters', {}],
  ])('attack: 5,000 levels with %s get the demo page saying why (400)', async (_name, extra) => {
    const res = await postDemo(`{"x":${nested(5000)}}`, extra);
    expect([res.status, res.text.includes('The claims request nests more than 64 levels deep.')]).toEqual([400, true]);
  });

  it.each([
    ['the verified-claims option', { verified: 'yes' }],
    ['an encrypted request object pushed', { par: 'encrypted' }],
  ])('honest: a claims request with %s goes on to the provider (303)', async (_name, extra) => {
    expect((await postDemo('{"userinfo":{"email":null}}', extra)).status).toBe(303);
  });
});

describe('the demo form shown again after a refused claims request keeps what she chose, as text', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });
  const post = (fields: Record<string, string>) => new FormBrowser().post(`${running.baseUrl}/oidcdemo/login`, fields, running.baseUrl);

  it('attack: a claims request closing the text field and a prompt or scope of its own come back inert: escaped text, no option or box added', async () => {
    const res = await post({ scope: 'email', claims: '</textarea><script>alert(1)</script>{', prompt: '"><option selected>evil', verified: 'yes' });
    const html = await res.text();
    expect(res.status).toBe(400);
    expect(html.match(/<\/textarea>/g)).toHaveLength(1);
    expect(html).toContain('&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;{</textarea>');
    expect(html).not.toContain('evil');
    expect(html.match(/ selected/g)).toBeNull();
    expect(html.match(/ checked/g)).toHaveLength(2);
  });

  it('honest: a claims request that is valid JSON goes on to the provider (303)', async () => {
    expect((await post({ scope: 'email', claims: '{"userinfo":{"email":null}}', prompt: 'login' })).status).toBe(303);
  });
});

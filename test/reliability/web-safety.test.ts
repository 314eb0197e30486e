import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, codeFlowUrl, FormBrowser } from '../helpers/flow.js';

const client = confidentialClient();
const REDIRECT = (client.redirect_uris as string[])[0] as string;

/** Every Set-Cookie of a browser walking through login and consent. */
async function cookiesOfAFlow(running: RunningApp, headers: Record<string, string> = {}): Promise<string[]> {
  const seen: string[] = [];
  // Behind the (simulated) TLS terminator the provider speaks https; the test talks to it in http.
  const onTheWire = (target: URL): string => {
    if (running.settings.baseUrl.startsWith('https:')) target.protocol = 'http:';
    return target.href;
  };
  let url = codeFlowUrl(running.issuer, client);
  const cookieJar = new Map<string, string>();
  let method = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 12; hop += 1) {
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      body,
      headers: { ...headers, cookie: [...cookieJar].map(([k, v]) => `${k}=${v}`).join('; '), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    for (const line of response.headers.getSetCookie()) {
      seen.push(line);
      const [pair] = line.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (pair && eq > 0) cookieJar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = response.headers.get('location');
    if (location) {
      if (location.startsWith(REDIRECT)) break;
      url = onTheWire(new URL(location, url));
      method = 'GET';
      body = undefined;
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*id="(login-form|consent-allow)"[^>]*action="([^"]+)"/.exec(html);
    if (!action?.[2]) break;
    url = onTheWire(new URL(action[2], url));
    method = 'POST';
    body = action[1] === 'login-form' ? 'login=demo&password=demo' : '';
  }
  return seen;
}

describe('web safety', () => {
  let running: RunningApp;
  let behindProxy: RunningApp;
  let behindUndeclaredTls: RunningApp;

  beforeAll(async () => {
    running = await startApp({ clients: [client], claimModules: createDemoClaimModules() });
    behindProxy = await startApp({ clients: [client], properties: { 'svc.proxy': true }, publicScheme: 'https' });
    behindUndeclaredTls = await startApp({ clients: [client], publicScheme: 'https' });
  });
  afterAll(async () => {
    await running.close();
    await behindProxy.close();
    await behindUndeclaredTls.close();
  });

  it('sets every cookie HttpOnly with a SameSite attribute', async () => {
    const cookies = await cookiesOfAFlow(running);
    expect(cookies.length).toBeGreaterThan(3);
    for (const cookie of cookies) {
      expect(cookie).toMatch(/;\s*httponly/i);
      expect(cookie).toMatch(/;\s*samesite=(lax|strict|none)/i);
    }
  });

  it('sets cookies Secure behind a TLS-terminating proxy (svc.proxy=true, X-Forwarded-Proto: https)', async () => {
    const cookies = await cookiesOfAFlow(behindProxy, { 'x-forwarded-proto': 'https' });
    expect(cookies.length).toBeGreaterThan(3);
    for (const cookie of cookies) expect(cookie).toMatch(/;\s*secure/i);
  });

  it('sets cookies Secure, the session cookie SameSite=None, for an https base URL whose TLS ends in front of a process not told svc.proxy (a client-sent X-Forwarded-Proto: http changes nothing)', async () => {
    for (const headers of [{}, { 'x-forwarded-proto': 'http' }] as Record<string, string>[]) {
      const cookies = await cookiesOfAFlow(behindUndeclaredTls, headers);
      const sessions = cookies.filter((cookie) => cookie.startsWith('_session='));
      expect(sessions.length).toBeGreaterThan(0);
      for (const cookie of sessions) expect(cookie).toMatch(/;\s*samesite=none/i);
      expect(cookies.length).toBeGreaterThan(3);
      for (const cookie of cookies) expect(cookie).toMatch(/;\s*secure/i);
    }
    const answer = await fetch(`${behindUndeclaredTls.issuer}/.well-known/openid-configuration`);
    expect(answer.headers.get('strict-transport-security')).toBe('max-age=31536000');
  });

  it('honest: an http base URL (development) sets no cookie Secure and the session cookie SameSite=Lax, which browsers keep over http', async () => {
    const cookies = await cookiesOfAFlow(running);
    const sessions = cookies.filter((cookie) => cookie.startsWith('_session='));
    expect(sessions.length).toBeGreaterThan(0);
    for (const cookie of sessions) expect(cookie).toMatch(/;\s*samesite=lax/i);
    for (const cookie of cookies) expect(cookie).not.toMatch(/;\s*secure/i);
  });

  it('protects every HTML page with a CSP and frame protections', async () => {
    const browser = new FormBrowser();
    const pages: [string, Response | undefined][] = [];
    const start = await browser.follow(codeFlowUrl(running.issuer, client), running.baseUrl);
    pages.push(['login', start.response]);
    pages.push(['failed login', (await browser.submit('login-form', { login: 'demo', password: 'x' }, running.baseUrl)).response]);
    pages.push(['consent', (await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl)).response]);
    pages.push(['error page', await fetch(authorizationUrl(running.issuer, { client_id: 'nobody', response_type: 'code', scope: 'openid', redirect_uri: REDIRECT }))]);
    pages.push(['demo form', await fetch(`${running.baseUrl}/oidcdemo/login`)]);
    pages.push(['logout page', await fetch(`${running.issuer}/logout`)]);
    for (const [name, response] of pages) {
      expect({ name, type: response?.headers.get('content-type')?.split(';')[0] }).toEqual({ name, type: 'text/html' });
      const csp = response?.headers.get('content-security-policy') ?? '';
      expect({ name, frameAncestors: csp.includes("frame-ancestors 'none'"), defaultNone: csp.includes("default-src 'none'") }).toEqual({ name, frameAncestors: true, defaultNone: true });
      expect({ name, xfo: response?.headers.get('x-frame-options') }).toEqual({ name, xfo: 'DENY' });
    }
  });

  it('never redirects to an unregistered redirect_uri, whatever else is wrong', async () => {
    for (const params of [
      { response_type: 'code' },
      { response_type: 'token' },
      { response_type: 'code', prompt: 'none' },
      { response_type: 'code', scope: 'profile' },
      { response_type: 'code', claims: '{not json' },
    ]) {
      const response = await fetch(
        authorizationUrl(running.issuer, { client_id: client.client_id, scope: 'openid', redirect_uri: 'https://evil.example/cb', ...params }),
        { redirect: 'manual' },
      );
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    }
  });
});

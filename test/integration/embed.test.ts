import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';

import { createHostApp } from '../../examples/embed-koa.js';
import { loadSettings, silentLogger, type SvcConnect } from '../../lib/index.js';
import { confidentialClient } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, signIn } from '../helpers/flow.js';
import { startHostServer, type HostServer } from '../helpers/host-server.js';

describe('embedding in an existing Koa app (examples/embed-koa.ts)', () => {
  let host: HostServer;
  let base = '';
  let svc: SvcConnect;
  const client = confidentialClient({ subject_type: 'public' });

  beforeAll(async () => {
    host = await startHostServer();
    base = host.base;
    const hosted = await createHostApp(loadSettings({ env: {}, properties: { 'svc.base-url': base } }), { logger: silentLogger, clients: [client] });
    svc = hosted.svc;
    host.serve(hosted.app);
  });
  afterAll(async () => {
    await host.close();
    await svc.close();
  });

  it('keeps the host route and serves the provider beside it', async () => {
    expect(await (await fetch(`${base}/`)).json()).toEqual({ service: 'host app', issuer: `${base}/oidc/v1` });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('runs a full code flow through the host app', async () => {
    const config = await oidc.discovery(new URL(`${base}/oidc/v1`), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: (client.redirect_uris as string[])[0] as string,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { callbackUrl } = await signIn(url.href);
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, idTokenExpected: true });
    expect(tokens.claims()?.sub).toBe('demo-0001');
  });

  describe('with claimModules: [] (C5, issue 15)', () => {
    const discover = (): Promise<oidc.Configuration> =>
      oidc.discovery(new URL(`${base}/oidc/v1`), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), { execute: [oidc.allowInsecureRequests] });
    const authorizationUrl = async (config: oidc.Configuration, verifier: string, extra: Record<string, string> = {}): Promise<URL> =>
      oidc.buildAuthorizationUrl(config, {
        redirect_uri: (client.redirect_uris as string[])[0] as string,
        scope: 'openid profile email',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: 'st',
        ...extra,
      });

    it('advertises neither profile nor email, nor their claims', () => {
      return discover().then((config) => {
        const metadata = config.serverMetadata();
        expect(metadata.scopes_supported).toEqual(['openid']);
        for (const claim of ['name', 'given_name', 'family_name', 'birthdate', 'email', 'email_verified']) expect(metadata.claims_supported).not.toContain(claim);
      });
    });

    it('serves scope=openid profile email without the scopes it does not offer: consent asks for nothing more, tokens carry sub', async () => {
      const config = await discover();
      const verifier = oidc.randomPKCECodeVerifier();
      const { callbackUrl, browser } = await signIn((await authorizationUrl(config, verifier)).href);
      expect(callbackUrl.searchParams.get('error')).toBeNull();
      expect(browser.lastPage).toContain('id="consent-allow"');
      for (const text of ['your full name', 'your e-mail address']) expect(browser.lastPage).not.toContain(text);
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedState: 'st', idTokenExpected: true });
      expect(tokens.scope).toBe('openid');
      const { sub, scope, name, email } = tokens.claims() as oidc.IDToken;
      expect({ sub, scope, name, email }).toEqual({ sub: 'demo-0001', scope: 'openid', name: undefined, email: undefined });
    });

    it('refuses a claims request for a claim no module provides with invalid_request, redirected with state', async () => {
      const config = await discover();
      const url = await authorizationUrl(config, oidc.randomPKCECodeVerifier(), { claims: JSON.stringify({ userinfo: { email: null } }) });
      const response = await fetch(url, { redirect: 'manual' });
      const location = new URL(response.headers.get('location') as string);
      expect(Object.fromEntries(location.searchParams)).toMatchObject({
        error: 'invalid_request',
        error_description: 'claim email is not provided by any claim module',
        state: 'st',
      });
    });
  });

  describe.each(['https', 'http'] as const)('a host middleware that reads a cookie before svc-connect runs, %s base URL (TLS ends in front, no svc.proxy)', (scheme) => {
    const hostServer = createServer();
    let wire = '';
    let hostedSvc: SvcConnect;

    beforeAll(async () => {
      await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
      wire = `http://127.0.0.1:${(hostServer.address() as AddressInfo).port}`;
      const settings = loadSettings({ env: {}, properties: { 'svc.base-url': wire.replace(/^http:/, `${scheme}:`) } });
      const hosted = await createHostApp(settings, { logger: silentLogger, clients: [client] });
      hostedSvc = hosted.svc;
      // As a session or CSRF middleware of the host does: Koa makes its cookie jar now, before svc-connect pinned the scheme.
      hosted.app.middleware.unshift((ctx, next) => {
        ctx.cookies.get('host-session');
        return next();
      });
      const callback = hosted.app.callback();
      hostServer.on('request', (req: IncomingMessage, res: ServerResponse) => void callback(req, res));
    });
    afterAll(async () => {
      hostServer.closeAllConnections();
      await new Promise((resolve) => hostServer.close(resolve));
      await hostedSvc.close();
    });

    it(`${scheme === 'https' ? 'attack' : 'honest'}: a correct sign-in goes on to consent, its device and sign-in cookies ${scheme === 'https' ? 'Secure' : 'without Secure (browsers keep them over http)'}`, async () => {
      const onTheWire = (location: string): string => `${wire}${new URL(location, wire).pathname}${new URL(location, wire).search}`;
      const browser = new FormBrowser();
      const login = onTheWire((await browser.request(codeFlowUrl(`${wire}/oidc/v1`, client))).headers.get('location') as string);
      expect((await browser.request(login)).status).toBe(200);
      const signedIn = await browser.post(`${login}/login`, { login: 'demo', password: 'demo' }, wire.replace(/^http:/, `${scheme}:`));
      expect(signedIn.status).toBe(303);
      // The device cookie and the cookie that ties the sign-in to this browser.
      // Over https the latter is `__Host-svc.signin.{uid}` at `/`, which only this host can set.
      for (const name of ['svc.device=', scheme === 'https' ? '__Host-svc.signin.' : 'svc.signin=']) {
        const set = browser.seenSetCookies.filter((line) => line.startsWith(name));
        expect(set).toHaveLength(1);
        if (scheme === 'https') expect(set[0]).toMatch(/;\s*secure/i);
        else expect(set[0]).not.toMatch(/;\s*secure/i);
      }
    });
  });
});

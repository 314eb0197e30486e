import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import type { Mailer, MailMessage } from '../../lib/index.js';
import { confidentialClient, pairwiseSubOf } from '../helpers/app.js';
import { FormBrowser, runCodeFlow } from '../helpers/flow.js';
import { MOUNTINGS, startMounted, type MountedApp } from '../helpers/mounted.js';
import { raw } from '../helpers/raw-request.js';
import { encryptionKey } from '../helpers/registration.js';
import { tokenIn } from '../helpers/smtp.js';

const USER = 'ops';
const PASSWORD = 'a management password for the mount tests';

/** A mailer that keeps what it was asked to send. */
function keepingMailer(): Mailer & { sent: MailMessage[] } {
  const sent: MailMessage[] = [];
  return { kind: 'outbox', sent, send: async (m) => void sent.push(m), close: () => undefined };
}

describe.each(MOUNTINGS)('served at %s (every URL carries the base path)', (mounting) => {
  let running: MountedApp;
  let doc: Record<string, string>;
  const client = confidentialClient();
  const mailer = keepingMailer();
  const basePath = mounting === 'root' ? '' : '/auth';

  beforeAll(async () => {
    running = await startMounted(mounting, {
      claimModules: createDemoClaimModules(),
      clients: [client],
      mailer,
      properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD },
    });
    const response = await fetch(`${running.issuer}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    doc = (await response.json()) as Record<string, string>;
  });
  afterAll(async () => running?.close());

  it('names the issuer and every endpoint under the base path, and serves each of them there', async () => {
    expect(doc.issuer).toBe(`${running.origin}${basePath}/oidc/v1`);
    expect({
      authorization_endpoint: doc.authorization_endpoint,
      token_endpoint: doc.token_endpoint,
      userinfo_endpoint: doc.userinfo_endpoint,
      jwks_uri: doc.jwks_uri,
      registration_endpoint: doc.registration_endpoint,
      end_session_endpoint: doc.end_session_endpoint,
    }).toEqual({
      authorization_endpoint: `${running.issuer}/authorize`,
      token_endpoint: `${running.issuer}/token`,
      userinfo_endpoint: `${running.issuer}/userinfo`,
      jwks_uri: `${running.issuer}/jwks`,
      registration_endpoint: `${running.issuer}/register`,
      end_session_endpoint: `${running.issuer}/logout`,
    });
    const jwks = await fetch(doc.jwks_uri as string);
    expect(jwks.status).toBe(200);
    expect(((await jwks.json()) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
    expect(await (await fetch(`${running.baseUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${running.baseUrl}/readyz`)).status).toBe(200);
  });

  if (basePath) {
    it('serves nothing of svc-connect outside the base path', async () => {
      for (const path of ['/oidc/v1/jwks', '/oidc/v1/.well-known/openid-configuration', '/healthz', '/oidcdemo/login', '/authx/oidc/v1/jwks']) {
        expect([path, (await fetch(`${running.origin}${path}`)).status]).toEqual([path, 404]);
      }
    });
  }

  it('runs the openid-client code flow: discovery, login and consent pages, token, UserInfo', async () => {
    const result = await runCodeFlow(running.issuer, client, { scope: 'openid profile' });
    expect(result.claims.iss).toBe(running.issuer);
    expect(result.claims.sub).toBe(pairwiseSubOf((client.redirect_uris as string[])[0] as string, 'demo-0001', client.client_id));
    expect(result.userinfo.sub).toBe(result.claims.sub);
  });

  it('sets the interaction cookies on the public paths of the pages', async () => {
    const browser = new FormBrowser();
    const config = await oidc.discovery(new URL(running.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: (client.redirect_uris as string[])[0] as string,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const response = await browser.request(url.href);
    expect(response.status).toBe(303);
    const location = new URL(response.headers.get('location') as string, url);
    expect(location.pathname).toMatch(new RegExp(`^${basePath}/oidc/v1/interaction/[^/]+$`));
    const paths = browser.seenSetCookies.map((line) => /;\s*path=([^;]+)/i.exec(line)?.[1]);
    expect(paths).toContain(location.pathname);
    expect(paths).toContain(`${basePath}/oidc/v1/authorize/${location.pathname.split('/').pop() as string}`);
    // The login page's form posts to its public path.
    await browser.follow(location.href, running.origin);
    expect(browser.formAction('login-form', location.href)).toBe(`${location.href}/login`);
  });

  it('an absolute-form request target on another origin is served as its path: discovery names the same URLs', async () => {
    const forged = await raw(`${running.issuer}/.well-known/openid-configuration`, 'GET', {}, undefined, 'http://evil.example');
    expect(forged.status).toBe(200);
    expect(JSON.parse(forged.text)).toEqual(doc);
  });

  it('keeps the session cookie under the provider path of the base URL, never on the whole host', async () => {
    const browser = new FormBrowser();
    const config = await oidc.discovery(new URL(running.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: (client.redirect_uris as string[])[0] as string,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    await browser.follow(url.href, running.origin);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.origin);
    const session = browser.seenSetCookies.filter((line) => /^_session(\.sig)?=/.test(line));
    expect(session.length).toBeGreaterThanOrEqual(2);
    for (const line of session) expect(/;\s*path=([^;]+)/i.exec(line)?.[1]).toBe(`${basePath}/oidc/v1`);
  });

  it('invites by mail with the registration URL under the base path; registration and client configuration work there', async () => {
    const response = await fetch(`${running.issuer}/management/invite_client?email=partner@example.com`, {
      headers: { authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` },
    });
    expect(response.status).toBe(202);
    const mail = mailer.sent.pop() as MailMessage;
    expect(mail.text).toContain(`${running.issuer}/register`);
    const { jwk } = await encryptionKey('RSA-OAEP-256');
    const config = await oidc.dynamicClientRegistration(
      new URL(running.issuer),
      { redirect_uris: ['https://partner.example/cb'], id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [jwk] } },
      undefined,
      { initialAccessToken: tokenIn(mail.text), execute: [oidc.allowInsecureRequests] },
    );
    const registered = config.clientMetadata();
    expect(registered.registration_client_uri).toBe(`${running.issuer}/register/${registered.client_id}`);
    const read = await fetch(registered.registration_client_uri as string, { headers: { authorization: `Bearer ${registered.registration_access_token as string}` } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as Record<string, unknown>).client_id).toBe(registered.client_id);
  });

  it('signs out through the logout pages under the base path', async () => {
    const browser = new FormBrowser();
    const { tokens } = await runCodeFlow(running.issuer, client, { skipUserinfo: true, browser });
    const logout = new URL(doc.end_session_endpoint as string);
    logout.searchParams.set('id_token_hint', tokens.id_token as string);
    await browser.follow(logout.href, running.origin);
    const action = browser.formAction('op.logoutForm', logout.href);
    expect(action).toBe(`${running.issuer}/logout/confirm`);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(browser.lastPage)?.[1] as string;
    const done = await browser.submit('op.logoutForm', { xsrf, logout: 'yes' }, running.origin);
    expect(done.response?.url).toBe(`${running.issuer}/logout/success`);
    expect(browser.lastPage).toContain('You are signed out.');
  });

  it('serves the demo page with its form posting to the public path', async () => {
    const response = await fetch(`${running.baseUrl}/oidcdemo/login`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain(`action="${basePath}/oidcdemo/login"`);
  });
});

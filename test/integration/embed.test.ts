import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';

import { createHostApp } from '../../examples/embed-koa.js';
import { loadSettings, silentLogger, type SvcConnect } from '../../lib/index.js';
import { confidentialClient } from '../helpers/app.js';
import { signIn } from '../helpers/browser.js';

describe('embedding in an existing Koa app (examples/embed-koa.ts)', () => {
  const server = createServer();
  let base = '';
  let svc: SvcConnect;
  const client = confidentialClient();

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const hosted = await createHostApp(loadSettings({ env: {}, properties: { 'svc.base-url': base } }), { logger: silentLogger, clients: [client] });
    svc = hosted.svc;
    server.on('request', hosted.app.callback());
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await svc.close();
  });

  it('keeps the host route and serves the provider beside it', async () => {
    expect(await (await fetch(`${base}/`)).json()).toEqual({ service: 'host app', issuer: `${base}/oidc/v1` });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('runs a full code flow through the host app', async () => {
    const config = await oidc.discovery(new URL(`${base}/oidc/v1`), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret as string), {
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
});

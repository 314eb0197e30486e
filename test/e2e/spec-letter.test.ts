import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { basicAuthorization } from '../../lib/web/basic-auth.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, codeFlowParams, FormBrowser, pkcePair, signIn } from '../helpers/flow.js';
import { outcomeOf } from '../helpers/request-objects.js';

const client = confidentialClient();
const redirectUri = (client.redirect_uris as string[])[0] as string;

/**
 * The letter of the specifications the contract names (C3): OpenID Connect Core 3.1.2.1 makes `redirect_uri`
 * REQUIRED on an authorization request, RFC 6749 4.1.3 makes it REQUIRED on the token request whenever the
 * authorization request carried it, and RFC 6749 5.1 makes a token response carry `Cache-Control: no-store` and
 * `Pragma: no-cache`.
 */
describe('authorization and token requests to the letter (OIDC Core 3.1.2.1, RFC 6749 4.1.3, 5.1)', () => {
  let running: RunningApp;
  let browser: FormBrowser;

  beforeAll(async () => {
    running = await startApp({ clients: [client] });
    ({ browser } = await signIn(authorizationUrl(running.issuer, codeFlowParams(client, { state: 'st' }))));
  });
  afterAll(async () => running.close());

  /** A code for `client` from the signed-in browser (`prompt=none`), with its PKCE verifier. */
  const freshCode = async (): Promise<{ code: string; verifier: string }> => {
    const { verifier, challenge } = pkcePair();
    const response = await browser.request(authorizationUrl(running.issuer, codeFlowParams(client, { state: 'st', prompt: 'none', code_challenge: challenge })));
    const code = new URL(response.headers.get('location') ?? '').searchParams.get('code');
    if (!code) throw new Error(`no code: ${response.headers.get('location')}`);
    return { code, verifier };
  };

  const redeem = async (fields: Record<string, string>): Promise<Response> =>
    fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: { authorization: basicAuthorization(client.client_id, client.client_secret as string, { formEncoded: true }), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', ...fields }).toString(),
    });

  it('refuses an authorization request without redirect_uri (invalid_request, nothing redirected), even for a client with one redirect URI', async () => {
    const { redirect_uri: _omitted, ...params } = codeFlowParams(client, { state: 'st' });
    const outcome = await outcomeOf(authorizationUrl(running.issuer, params));
    expect(outcome).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(outcome.description).toContain('redirect_uri');
    expect(outcome.interaction).toBeUndefined();
  });

  it('the same request with its redirect_uri goes on to sign-in', async () => {
    const outcome = await outcomeOf(authorizationUrl(running.issuer, codeFlowParams(client, { state: 'st' })));
    expect(outcome.interaction).toEqual(expect.stringContaining('/interaction/'));
  });

  it('refuses a token request that omits the redirect_uri its authorization request carried (invalid_request), and the code stays good', async () => {
    const { code, verifier } = await freshCode();
    const omitted = await redeem({ code, code_verifier: verifier });
    expect(omitted.status).toBe(400);
    expect(await omitted.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('redirect_uri') });

    const honest = await redeem({ code, code_verifier: verifier, redirect_uri: redirectUri });
    expect(honest.status).toBe(200);
    expect(await honest.json()).toMatchObject({ id_token: expect.any(String), access_token: expect.any(String) });
  });

  it('answers a token request with Cache-Control: no-store and Pragma: no-cache, success and error alike', async () => {
    const { code, verifier } = await freshCode();
    const success = await redeem({ code, code_verifier: verifier, redirect_uri: redirectUri });
    expect(success.status).toBe(200);
    expect(success.headers.get('cache-control')).toBe('no-store');
    expect(success.headers.get('pragma')).toBe('no-cache');

    const reused = await redeem({ code, code_verifier: verifier, redirect_uri: redirectUri });
    expect(reused.status).toBe(400);
    expect(reused.headers.get('cache-control')).toBe('no-store');
    expect(reused.headers.get('pragma')).toBe('no-cache');
  });

  it('sends Pragma: no-cache beside every Cache-Control: no-store of the provider, and not on cacheable answers', async () => {
    const configuration = await fetch(`${running.issuer}/.well-known/openid-configuration`);
    expect(configuration.headers.get('cache-control') ?? '').not.toContain('no-store');
    expect(configuration.headers.get('pragma')).toBeNull();

    const userinfo = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: 'Bearer nope' } });
    expect(userinfo.status).toBe(401);
    expect(userinfo.headers.get('cache-control')).toBe('no-store');
    expect(userinfo.headers.get('pragma')).toBe('no-cache');
  });
});

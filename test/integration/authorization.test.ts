import { describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import { confidentialClient } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { authorizationUrl, FormBrowser, pkcePair, redeemCode, redirectParams, signIn } from '../helpers/flow.js';

const client = confidentialClient();
const redirectUri = (client.redirect_uris as string[])[0] as string;
const publicClient: ClientMetadata = { client_id: 'public-rp', token_endpoint_auth_method: 'none', redirect_uris: [redirectUri] };
const otherClient = confidentialClient({ client_id: 'other-rp', client_secret: 'other-rp-secret-that-is-long-enough-0123456789' });

describe('authorization endpoint rules (C3)', () => {
  const running = appPerSuite({ clients: [client, publicClient, otherClient] });

  const baseParams = (challenge?: string, clientId = client.client_id): Record<string, string | undefined> => ({
    client_id: clientId,
    response_type: 'code',
    scope: 'openid',
    redirect_uri: redirectUri,
    state: 'st-123',
    code_challenge: challenge,
    code_challenge_method: challenge ? 'S256' : undefined,
  });

  const redirectFor = async (params: Record<string, string | undefined>): Promise<{ status: number; location: string | null }> => {
    const response = await fetch(authorizationUrl(running.issuer, params), { redirect: 'manual' });
    return { status: response.status, location: response.headers.get('location') };
  };

  const codeFor = async (challenge: string, clientId = client.client_id): Promise<string> => {
    const { callbackUrl } = await signIn(authorizationUrl(running.issuer, baseParams(challenge, clientId)));
    const code = callbackUrl.searchParams.get('code');
    if (!code) throw new Error(`no code: ${callbackUrl.href}`);
    return code;
  };

  it('requires PKCE: no code_challenge → invalid_request redirected with state', async () => {
    const { location } = await redirectFor(baseParams());
    expect(location?.startsWith(redirectUri)).toBe(true);
    const params = redirectParams(location as string);
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('state')).toBe('st-123');
  });

  it('rejects code_challenge_method=plain with invalid_request redirected with state', async () => {
    const { challenge } = pkcePair();
    const { location } = await redirectFor({ ...baseParams(challenge), code_challenge_method: 'plain' });
    const params = redirectParams(location as string);
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('state')).toBe('st-123');
  });

  it('rejects response_type=token with unsupported_response_type', async () => {
    const { challenge } = pkcePair();
    const { location } = await redirectFor({ ...baseParams(challenge), response_type: 'token' });
    expect(redirectParams(location as string).get('error')).toBe('unsupported_response_type');
  });

  it('rejects prompt=select_account with invalid_request', async () => {
    const { challenge } = pkcePair();
    const { location } = await redirectFor({ ...baseParams(challenge), prompt: 'select_account' });
    expect(redirectParams(location as string).get('error')).toBe('invalid_request');
  });

  it('answers prompt=none without a session with login_required', async () => {
    const { challenge } = pkcePair();
    const { location } = await redirectFor({ ...baseParams(challenge), prompt: 'none' });
    const params = redirectParams(location as string);
    expect(params.get('error')).toBe('login_required');
    expect(params.get('state')).toBe('st-123');
  });

  it('rejects a scope without openid with invalid_scope', async () => {
    const { challenge } = pkcePair();
    const { location } = await redirectFor({ ...baseParams(challenge), scope: 'profile' });
    const params = redirectParams(location as string);
    expect(params.get('error')).toBe('invalid_scope');
    expect(params.get('state')).toBe('st-123');
    // A scope beside the error would read as one granted (RFC 6749 4.1.2.1 defines none there).
    expect(params.has('scope')).toBe(false);
  });

  it('a scope without openid beside nonce, max_age or claims (what an OpenID Connect relying party sends) is invalid_request naming openid, redirected with state and no scope', async () => {
    const { challenge } = pkcePair();
    for (const [name, value] of [['nonce', 'n-1'], ['max_age', '60'], ['claims', '{"userinfo":{"sub":null}}']] as const) {
      const { location } = await redirectFor({ ...baseParams(challenge), scope: 'profile', [name]: value });
      expect(location?.startsWith(redirectUri)).toBe(true);
      const params = redirectParams(location as string);
      expect([name, params.get('error'), params.get('error_description'), params.get('state'), params.has('scope')]).toEqual([name, 'invalid_request', `openid scope must be requested when using the ${name} parameter`, 'st-123', false]);
    }
  });

  it('attack: the same request to an unregistered redirect_uri gets the error page, never a redirect; honest: with openid it goes on to sign-in', async () => {
    const { challenge } = pkcePair();
    for (const extra of [{}, { nonce: 'n-1' }, { max_age: '60' }]) {
      const response = await fetch(authorizationUrl(running.issuer, { ...baseParams(challenge), ...extra, scope: 'profile', redirect_uri: 'https://evil.example/cb' }), { redirect: 'manual' });
      expect([response.status, response.headers.get('location')]).toEqual([400, null]);
      expect((await redirectFor({ ...baseParams(challenge), ...extra, scope: 'openid profile' })).location).toMatch(/^\/oidc\/v1\/interaction\/[\w-]+$/);
    }
  });

  it('accepts and ignores display, ui_locales, claims_locales, login_hint and acr_values', async () => {
    const { challenge } = pkcePair();
    const { status, location } = await redirectFor({
      ...baseParams(challenge),
      display: 'popup',
      ui_locales: 'de-DE',
      claims_locales: 'de',
      login_hint: 'someone@example.com',
      acr_values: 'urn:example:loa:3',
    });
    expect(status).toBe(303);
    expect(location).toMatch(/^\/oidc\/v1\/interaction\/[\w-]+$/);
  });

  it('shows an error page, never a redirect, for an unregistered redirect_uri', async () => {
    const { challenge } = pkcePair();
    const response = await fetch(authorizationUrl(running.issuer, { ...baseParams(challenge), redirect_uri: 'https://evil.example/cb' }), {
      redirect: 'manual',
      headers: { accept: 'text/html' },
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    const html = await response.text();
    expect(html).toContain('invalid_redirect_uri');
    expect(html).not.toMatch(/at .*\.js:\d+/);
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it("lets the origin of its redirect URI, and no other, frame the form_post answer of /authorize (silent renew in an iframe); the error page of an unregistered redirect_uri and the answer after the login and consent pages refuse every frame", async () => {
    const framing = (response?: Response): Record<string, unknown> => ({
      status: response?.status,
      frameAncestors: /frame-ancestors ([^;]*)/.exec(response?.headers.get('content-security-policy') ?? '')?.[1],
      xfo: response?.headers.get('x-frame-options'),
    });
    const formPost = (params: Record<string, string> = {}): string => authorizationUrl(running.issuer, { ...baseParams(pkcePair().challenge), response_mode: 'form_post', ...params });
    const client = { frameAncestors: new URL(redirectUri).origin, xfo: null };
    const none = { frameAncestors: "'none'", xfo: 'DENY' };

    expect(framing(await fetch(formPost({ prompt: 'none' }), { redirect: 'manual' }))).toEqual({ status: 400, ...client });
    expect(framing(await fetch(formPost({ redirect_uri: 'https://evil.example/cb' }), { redirect: 'manual', headers: { accept: 'text/html' } }))).toEqual({ status: 400, ...none });

    const browser = new FormBrowser();
    await browser.follow(formPost(), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    const resumed = await browser.submit('consent-allow', {}, running.baseUrl);
    expect({ ...framing(resumed.response), code: browser.lastPage.includes('name="code"') }).toEqual({ status: 200, ...none, code: true });
    // Signed in, with a grant: /authorize answers at once, with a code.
    const direct = await browser.follow(formPost(), running.baseUrl);
    expect({ ...framing(direct.response), code: browser.lastPage.includes('name="code"') }).toEqual({ status: 200, ...client, code: true });
  });

  it('redeems a code once: the second redemption → invalid_grant', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(challenge);
    const first = await redeemCode(running.issuer, client, code, verifier);
    expect(first.status).toBe(200);
    expect(first.body.access_token).toEqual(expect.any(String));
    const second = await redeemCode(running.issuer, client, code, verifier);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
  });

  it('lets exactly one of two simultaneous redemptions win', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(challenge);
    const results = await Promise.all([1, 2].map(() => redeemCode(running.issuer, client, code, verifier)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(results.find((r) => r.status === 400)?.body.error).toBe('invalid_grant');
  });

  it('lets exactly one of two simultaneous redemptions win, code after code (the loser\'s replay revocation never withdraws the winner\'s answer)', async () => {
    for (let round = 0; round < 10; round += 1) {
      const { verifier, challenge } = pkcePair();
      const code = await codeFor(challenge);
      const results = await Promise.all([1, 2].map(() => redeemCode(running.issuer, client, code, verifier)));
      expect(results.map((r) => [r.status, r.body.error]).sort()).toEqual([[200, undefined], [400, 'invalid_grant']]);
    }
  });

  it('attack: a code presented by another authenticated client, or without its code_verifier, redeems nothing (invalid_grant) and stays good for its own client', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(challenge);
    const stolen = await redeemCode(running.issuer, otherClient, code, verifier);
    expect([stolen.status, stolen.body.error]).toEqual([400, 'invalid_grant']);
    const withoutVerifier = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: redirectUri }, { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret as string}`).toString('base64')}` });
    expect(withoutVerifier).toEqual([400, 'invalid_grant']);
    expect((await redeemCode(running.issuer, client, code, verifier)).status).toBe(200);
  });

  it('rejects a wrong code_verifier with invalid_grant', async () => {
    const { challenge } = pkcePair();
    const code = await codeFor(challenge);
    const result = await redeemCode(running.issuer, client, code, pkcePair().verifier);
    expect(result.status).toBe(400);
    expect(result.body.error).toBe('invalid_grant');
  });

  const tokenRequest = async (fields: Record<string, string>, headers: Record<string, string> = {}): Promise<[number, unknown]> => {
    const response = await fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });
    return [response.status, ((await response.json()) as { error?: string }).error];
  };

  it('honest: a public client that sends an empty client_secret (RFC 6749 2.3.1: an empty secret may be left out) is served as one that leaves it out', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(challenge, publicClient.client_id);
    const grant = { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier, client_id: publicClient.client_id };
    expect(await tokenRequest({ ...grant, client_secret: '' })).toEqual([200, undefined]);
  });

  it('attack: an empty secret authenticates no confidential client, in the form or in Basic, nor does a secret a public client never had; the code stays good', async () => {
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(challenge);
    const grant = { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier };
    const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    expect(await tokenRequest({ ...grant, client_id: client.client_id, client_secret: '' })).toEqual([401, 'invalid_client']);
    expect(await tokenRequest(grant, { authorization: basic(client.client_id, '') })).toEqual([400, 'invalid_request']);
    expect(await tokenRequest({ ...grant, client_id: publicClient.client_id, client_secret: 'anything' })).toEqual([401, 'invalid_client']);
    expect(await tokenRequest({ ...grant, client_secret: '' }, { authorization: basic(client.client_id, client.client_secret as string) })).toEqual([200, undefined]);
  });

  it.each(['client_credentials', 'urn:ietf:params:oauth:grant-type:device_code', 'urn:openid:params:grant-type:ciba', 'urn:ietf:params:oauth:grant-type:token-exchange', 'implicit'])('refuses grant type %s from an authenticated client (unsupported_grant_type)', async (grantType) => {
    expect(await tokenRequest({ grant_type: grantType, device_code: 'x', auth_req_id: 'x', subject_token: 'x' }, { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret as string}`).toString('base64')}` })).toEqual([400, 'unsupported_grant_type']);
  });

  it('refuses the refresh_token grant type (not supported)', async () => {
    const basic = Buffer.from(`${client.client_id}:${client.client_secret as string}`).toString('base64');
    const response = await fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&refresh_token=abc',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('unsupported_grant_type');
  });
});

import { describe, expect, it } from '@jest/globals';

import { confidentialClient } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { authorizationUrl, pkcePair, redeemCode, redirectParams, signIn } from '../helpers/flow.js';

const client = confidentialClient();
const redirectUri = (client.redirect_uris as string[])[0] as string;

describe('authorization endpoint rules (C3)', () => {
  const running = appPerSuite({ clients: [client] });

  const baseParams = (challenge?: string): Record<string, string | undefined> => ({
    client_id: client.client_id,
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

  const codeFor = async (challenge: string): Promise<string> => {
    const { callbackUrl } = await signIn(authorizationUrl(running.issuer, baseParams(challenge)));
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

  it('rejects a wrong code_verifier with invalid_grant', async () => {
    const { challenge } = pkcePair();
    const code = await codeFor(challenge);
    const result = await redeemCode(running.issuer, client, code, pkcePair().verifier);
    expect(result.status).toBe(400);
    expect(result.body.error).toBe('invalid_grant');
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

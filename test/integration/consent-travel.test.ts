import { describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { FormBrowser, redirectParams } from '../helpers/flow.js';
import { registerClient, registeredClientUrl } from '../helpers/clients.js';

type Channel = 'id_token' | 'userinfo';

/**
 * Consent covers where each claim travels (C8, docs/claims.md#consent): approved in one channel, a claim asked in
 * the other (by the `claims` parameter, by scope alone, inside `verified_claims`) asks her again; asked as she
 * approved it, nothing is asked again.
 */
describe.each([false, true])('a claim approved in one channel does not move to the other without asking (svc.stage.include-scopes-in-user-info=%s)', (scopesInUserinfo) => {
  const running = appPerSuite({ claimModules: createDemoClaimModules(), properties: { 'svc.stage.include-scopes-in-user-info': scopesInUserinfo } });

  /**
   * A client registered with `registration` asks `approved` (extra authorization parameters); demo signs in and
   * allows, after the page said `shown`. Then, silently, each of `later`: the error, or `code`.
   */
  const approveThenAsk = async (registration: Record<string, unknown>, approved: Record<string, string>, shown: string, later: Record<string, string>[]): Promise<(string | null)[]> => {
    const client = await registerClient(running, 'rsa', registration);
    const browser = new FormBrowser();
    await browser.follow(registeredClientUrl(running.issuer, client, approved), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain(shown);
    expect(redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code')).toEqual(expect.any(String));
    const outcomes: (string | null)[] = [];
    for (const params of later) {
      const landed = redirectParams((await browser.follow(registeredClientUrl(running.issuer, client, { ...params, prompt: 'none' }), running.baseUrl)).leftTo as string);
      outcomes.push(landed.get('error') ?? (landed.get('code') ? 'code' : null));
    }
    return outcomes;
  };
  const emailIn = (channel: Channel, scope = 'openid email'): Record<string, string> => ({ scope, claims: JSON.stringify({ [channel]: { email: null } }) });
  // Scope claims travel in UserInfo with the setting, else in the ID token (C5).
  const scopeOnly = scopesInUserinfo ? 'consent_required' : 'code';

  it('approved encrypted in the sign-in token: asked there again, nothing is asked; asked in plaintext UserInfo, by claims or by scope, she is asked', async () => {
    const registration = { allow_unencrypted_userinfo: true, userinfo_encrypted_response_alg: undefined };
    const outcomes = await approveThenAsk(registration, emailIn('id_token'), 'your e-mail address — in the sign-in token', [emailIn('id_token'), emailIn('userinfo'), { scope: 'openid email' }]);
    expect(outcomes).toEqual(['code', 'consent_required', scopeOnly]);
  });

  it('shown as not sent in the sign-in token (no encryption there): asked in encrypted UserInfo, by claims or by scope, she is asked', async () => {
    const outcomes = await approveThenAsk({ id_token_encrypted_response_alg: undefined }, emailIn('id_token'), 'your e-mail address — not sent', [emailIn('id_token'), emailIn('userinfo'), { scope: 'openid email' }]);
    // The sign-in token carries no user data, so scope claims travel in UserInfo whatever the setting.
    expect(outcomes).toEqual(['code', 'consent_required', 'consent_required']);
  });

  it('a verified claim approved in the sign-in token and asked in UserInfo: she is asked', async () => {
    const verified = (channel: Channel): Record<string, string> => ({ scope: 'openid', claims: JSON.stringify({ [channel]: { verified_claims: { verification: { trust_framework: null }, claims: { given_name: null } } } }) });
    const outcomes = await approveThenAsk({}, verified('id_token'), 'your first name, as verified by an identity check — in the sign-in token', [verified('id_token'), verified('userinfo')]);
    expect(outcomes).toEqual(['code', 'consent_required']);
  });
});

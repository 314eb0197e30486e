import { describe, expect, it } from '@jest/globals';
import { compactDecrypt, decodeJwt } from 'jose';

import { createMemoryStore } from '../../adapters/memory.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { FormBrowser, pkcePair, redeemCode, redirectParams, runCodeFlow } from '../helpers/flow.js';
import { registerClient, type RegisteredClient, registeredClientUrl, updateRegistration } from '../helpers/clients.js';

type Channel = 'id_token' | 'userinfo';

const HEALTH = 'demo.ver.healthinsurance.l0.api.demo';

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

  it('approved by its scope: named later in the channel it travelled in, nothing is asked; in the other, she is asked', async () => {
    const [here, there]: [Channel, Channel] = scopesInUserinfo ? ['userinfo', 'id_token'] : ['id_token', 'userinfo'];
    const outcomes = await approveThenAsk({}, { scope: 'openid email' }, 'your e-mail address', [emailIn(here), emailIn(here, 'openid'), emailIn(there)]);
    expect(outcomes).toEqual(['code', 'code', 'consent_required']);
  });

  // The configured scope channel carries data in plain form (the opt-out), the other encrypted: she approves the
  // e-mail address named in the encrypted one only. The client then drops the opt-out, so scope claims would travel
  // where she approved them, and asks by scope alone; then it opts out again before it redeems the code.
  const [plainHere, encryptedThere]: [Channel, Channel] = scopesInUserinfo ? ['userinfo', 'id_token'] : ['id_token', 'userinfo'];
  const optedOut = { allow_unencrypted_userinfo: true, [`${plainHere}_encrypted_response_alg`]: undefined, [`${plainHere}_encrypted_response_enc`]: undefined };
  const emailNamedThere = { scope: 'openid email', claims: JSON.stringify({ [encryptedThere]: { email: null, email_verified: null } }) };

  it('attack: a registration change that moves scope claims where she approved them needs her consent: a code issued so would carry them in plain form once the opt-out is back', async () => {
    const client = await registerClient(running, 'rsa', optedOut);
    const browser = new FormBrowser();
    await browser.follow(registeredClientUrl(running.issuer, client, emailNamedThere), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain(`your e-mail address — ${encryptedThere === 'id_token' ? 'in the sign-in token' : 'in the profile request'}`);
    expect(redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code')).toEqual(expect.any(String));

    const moved = await updateRegistration(client, { allow_unencrypted_userinfo: false });
    const pkce = pkcePair();
    const silent = redirectParams(
      (await browser.follow(registeredClientUrl(running.issuer, moved, { scope: 'openid email', code_challenge: pkce.challenge, prompt: 'none' }), running.baseUrl)).leftTo as string,
    );
    // Her grant records the opt-out: its codes carry scope claims in the plain channel, where she approved none.
    expect(silent.get('error')).toBe('consent_required');
    expect(silent.get('code')).toBeNull();
    // Asked, she sees them where they travel now; once allowed, the opt-out back is not covered by her new grant.
    await browser.follow(registeredClientUrl(running.issuer, moved, { scope: 'openid email' }), running.baseUrl);
    expect(browser.lastPage).toContain(`your e-mail address — ${encryptedThere === 'id_token' ? 'in the sign-in token' : 'in the profile request'}`);
    expect(redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code')).toEqual(expect.any(String));
    const back = await updateRegistration(moved, { allow_unencrypted_userinfo: true });
    const again = redirectParams((await browser.follow(registeredClientUrl(running.issuer, back, { scope: 'openid email', prompt: 'none' }), running.baseUrl)).leftTo as string);
    expect(again.get('error')).toBe('consent_required');
  });

  it('honest: a registration change that leaves scope claims where she approved them asks nothing, and they are delivered', async () => {
    const client = await registerClient(running, 'rsa', { ...optedOut, [`${plainHere}_encrypted_response_alg`]: 'RSA-OAEP-256' });
    const browser = new FormBrowser();
    await browser.follow(registeredClientUrl(running.issuer, client, { scope: 'openid email' }), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code')).toEqual(expect.any(String));
    // Another name and logo, and the opt-out dropped: both channels stay encrypted, nothing moves.
    const renamed = await updateRegistration(client, { client_name: 'renamed', logo_uri: 'https://rp.example/logo.png', allow_unencrypted_userinfo: false });
    const pkce = pkcePair();
    const silent = redirectParams(
      (await browser.follow(registeredClientUrl(running.issuer, renamed, { scope: 'openid email', code_challenge: pkce.challenge, prompt: 'none' }), running.baseUrl)).leftTo as string,
    );
    const redeemed = await redeemCode(running.issuer, renamed.metadata, silent.get('code') as string, pkce.verifier);
    expect(redeemed.status).toBe(200);
    const carried = plainHere === 'id_token'
      ? await decryptFor(renamed, redeemed.body.id_token as string)
      : await decryptFor(renamed, await (await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${redeemed.body.access_token as string}` } })).text());
    expect(USER(carried)).toEqual(['email', 'email_verified']);
  });

  it('a verified claim approved in the sign-in token and asked in UserInfo: she is asked', async () => {
    const verified = (channel: Channel): Record<string, string> => ({ scope: 'openid', claims: JSON.stringify({ [channel]: { verified_claims: { verification: { trust_framework: null }, claims: { given_name: null } } } }) });
    const outcomes = await approveThenAsk({}, verified('id_token'), 'your first name, as verified by an identity check — in the sign-in token', [verified('id_token'), verified('userinfo')]);
    expect(outcomes).toEqual(['code', 'consent_required']);
  });
});

const decryptFor = async (client: RegisteredClient, jwe: string): Promise<Record<string, unknown>> => {
  const { plaintext } = await compactDecrypt(jwe, client.privateKey as CryptoKey);
  const text = new TextDecoder().decode(plaintext);
  return text.split('.').length === 3 ? decodeJwt(text) : (JSON.parse(text) as Record<string, unknown>);
};
const USER = (claims: Record<string, unknown>): string[] => Object.keys(claims).filter((k) => !['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'scope', 'sid'].includes(k)).sort();

describe.each([
  // setting on: scope claims travel in UserInfo, but the client's UserInfo is withheld, so they travel in the ID token.
  { scopesInUserinfo: true, first: { userinfo_encrypted_response_alg: undefined }, added: 'userinfo' as const },
  // setting off: scope claims travel in the ID token, but the client's ID token is withheld, so they travel in UserInfo.
  { scopesInUserinfo: false, first: { id_token_encrypted_response_alg: undefined }, added: 'id_token' as const },
])('scope claims approved in one channel, then the client adds encryption to the other (include-scopes-in-user-info=$scopesInUserinfo)', ({ scopesInUserinfo, first, added }) => {
  const running = appPerSuite({ claimModules: createDemoClaimModules(), properties: { 'svc.stage.include-scopes-in-user-info': scopesInUserinfo } });

  it(`delivers nothing in the ${added} channel with a code or access token of the earlier consent`, async () => {
    const client = await registerClient(running, 'rsa', first);
    const browser = new FormBrowser();
    const pkce = pkcePair();
    const params = { scope: 'openid email', code_challenge: pkce.challenge };
    await browser.follow(registeredClientUrl(running.issuer, client, params), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    // The page shows where the e-mail address travels: the channel that carries data now.
    expect(browser.lastPage).toContain(added === 'userinfo' ? 'your e-mail address — in the sign-in token' : 'your e-mail address — in the profile request');
    const code = redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code') as string;
    // A second code of the same consent, redeemed only after the registration changes.
    const pkce2 = pkcePair();
    const later = redirectParams((await browser.follow(registeredClientUrl(running.issuer, client, { ...params, code_challenge: pkce2.challenge, prompt: 'none' }), running.baseUrl)).leftTo as string).get('code') as string;
    expect(later).toEqual(expect.any(String));
    const tokens = await redeemCode(running.issuer, client.metadata, code, pkce.verifier);
    expect(tokens.status).toBe(200);

    // Adding encryption needs no new consent for delivery, but it moves the scope channel.
    const alg = 'RSA-OAEP-256';
    const moved = await updateRegistration(client, added === 'userinfo' ? { userinfo_encrypted_response_alg: alg } : { id_token_encrypted_response_alg: alg });

    // A fresh authorization is not covered (the travel check): consent_required silently.
    const fresh = redirectParams((await browser.follow(registeredClientUrl(running.issuer, moved, { ...params, prompt: 'none' }), running.baseUrl)).leftTo as string);
    expect(fresh.get('error')).toBe('consent_required');

    if (added === 'userinfo') {
      // The earlier access token: UserInfo (now encrypted) must not carry what she approved only in the sign-in token.
      const res = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${tokens.body.access_token as string}` } });
      expect(res.status).toBe(200);
      expect(USER(await decryptFor(moved, await res.text()))).toEqual([]);
    } else {
      // The code issued before the change: the ID token (now encrypted) must not carry what she approved only in UserInfo.
      const redeemed = await redeemCode(running.issuer, moved.metadata, later, pkce2.verifier);
      expect(redeemed.status).toBe(200);
      expect(USER(await decryptFor(moved, redeemed.body.id_token as string))).toEqual([]);
    }
  });

  it(`a code of an earlier consent carries nothing into the ${added} channel once she consents under the new registration`, async () => {
    const client = await registerClient(running, 'rsa', first);
    const browser = new FormBrowser();
    const params = { scope: 'openid email' };
    await browser.follow(registeredClientUrl(running.issuer, client, { ...params, code_challenge: pkcePair().challenge }), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain(added === 'userinfo' ? 'your e-mail address — in the sign-in token' : 'your e-mail address — in the profile request');
    expect(redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code')).toEqual(expect.any(String));
    // A code of that consent, redeemed later.
    const pkce = pkcePair();
    const later = redirectParams((await browser.follow(registeredClientUrl(running.issuer, client, { ...params, code_challenge: pkce.challenge, prompt: 'none' }), running.baseUrl)).leftTo as string).get('code') as string;
    expect(later).toEqual(expect.any(String));

    // The client adds encryption to the other channel (no new consent needed for delivery).
    const moved = await updateRegistration(client, { [`${added}_encrypted_response_alg`]: 'RSA-OAEP-256' });
    // She consents to her profile, which the page now shows in the other channel; the e-mail address is not on the page.
    await browser.follow(registeredClientUrl(running.issuer, moved, { scope: 'openid profile', code_challenge: pkcePair().challenge }), running.baseUrl);
    expect(browser.lastPage).toContain('consent-allow');
    expect(browser.lastPage).not.toContain('your e-mail address');
    expect(redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code')).toEqual(expect.any(String));

    // Her consent under the new delivery replaced the grant: the code of the earlier one ends with it.
    const redeemed = await redeemCode(running.issuer, moved.metadata, later, pkce.verifier);
    expect([redeemed.status, redeemed.body.error]).toEqual([400, 'invalid_grant']);
  });
});

/**
 * The operator restarts with `svc.stage.include-scopes-in-user-info` set otherwise (C5): codes and refresh tokens of
 * an earlier consent say nothing of where scope claims travel now. Her e-mail address, approved in the encrypted
 * sign-in token of a client whose UserInfo is plain (the opt-out), does not go out in plain UserInfo.
 */
describe('a restart that moves the scope channel', () => {
  const approveThenRestart = async (after: boolean): Promise<{ tokens: Record<string, unknown>; client: RegisteredClient; issuer: string; close: () => Promise<void> }> => {
    const store = createMemoryStore();
    const before = await startApp({ store, claimModules: createDemoClaimModules() });
    const client = await registerClient(before, 'rsa', { allow_unencrypted_userinfo: true, userinfo_encrypted_response_alg: undefined });
    const browser = new FormBrowser();
    const pkce = pkcePair();
    await browser.follow(registeredClientUrl(before.issuer, client, { scope: 'openid email', code_challenge: pkce.challenge }), before.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, before.baseUrl);
    expect(browser.lastPage).toContain('your e-mail address — in the sign-in token');
    const code = redirectParams((await browser.submit('consent-allow', {}, before.baseUrl)).leftTo as string).get('code') as string;
    await before.close();
    // Restarted on another port, so under another base URL: it takes the store over from the one it had.
    const restarted = await startApp({ store, claimModules: createDemoClaimModules(), properties: { 'svc.stage.include-scopes-in-user-info': after, 'svc.redis.previous-base-url': before.baseUrl } });
    const redeemed = await redeemCode(restarted.issuer, client.metadata, code, pkce.verifier);
    expect(redeemed.status).toBe(200);
    return { tokens: redeemed.body, client, issuer: restarted.issuer, close: () => restarted.close() };
  };
  const userinfo = async (issuer: string, tokens: Record<string, unknown>): Promise<Record<string, unknown>> =>
    (await (await fetch(`${issuer}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token as string}` } })).json()) as Record<string, unknown>;

  it('attack: set to UserInfo since, the code of her consent delivers the e-mail address in plain UserInfo nowhere', async () => {
    const { tokens, client, issuer, close } = await approveThenRestart(true);
    try {
      expect(USER(await userinfo(issuer, tokens))).toEqual([]);
      expect(USER(await decryptFor(client, tokens.id_token as string))).toEqual([]);
    } finally {
      await close();
    }
  });

  /**
   * Demo approves, in one browser, the scope `svc.insurance.verified` (its claims in the sign-in token), then in
   * UserInfo "one of: e-mail; ID card" and her health insurance member number; the operator restarts with the setting
   * `after`. Where a silent request of the scope alone ends (its `error`, or the user data each channel delivered), and
   * the user data UserInfo gives for the access token of her first consent.
   */
  const scopeAfterRestart = async (after: boolean): Promise<{ silent: string | string[][]; earlier: string[] }> => {
    const store = createMemoryStore();
    const properties = { 'svc.cookies.keys': 'restart-test-cookie-key-0123456789abcdefgh' };
    const before = await startApp({ store, claimModules: createDemoClaimModules(), properties });
    const client = await registerClient(before, 'rsa');
    const browser = new FormBrowser();
    const scope = 'openid svc.insurance.verified';
    const { tokens } = await runCodeFlow(before.issuer, client.metadata, { configure: client.configure, browser, scope, skipUserinfo: true });
    const claims = JSON.stringify({ userinfo: { 'svc.ver.[email.l2,idcard.l3.nfc]': null, [HEALTH]: null } });
    await runCodeFlow(before.issuer, client.metadata, { configure: client.configure, browser, params: { claims }, skipUserinfo: true });
    expect(browser.lastPage).toContain('one of: your verified e-mail address (level 2): the address and when it was confirmed; your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read — in the profile request');
    await before.close();
    const restarted = await startApp({ store, claimModules: createDemoClaimModules(), properties: { ...properties, 'svc.stage.include-scopes-in-user-info': after, 'svc.redis.previous-base-url': before.baseUrl } });
    try {
      const done = await runCodeFlow(restarted.issuer, client.metadata, { configure: client.configure, browser, scope, params: { prompt: 'none' } }).catch((err: unknown) => String(err));
      const earlier = await fetch(`${restarted.issuer}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(earlier.status).toBe(200);
      return {
        silent: typeof done === 'string' ? (/error=(\w+)/.exec(done)?.[1] ?? done) : [USER(done.claims), USER(done.userinfo)],
        earlier: USER(await decryptFor(client, await earlier.text())),
      };
    } finally {
      await restarted.close();
    }
  };

  it('attack: set to UserInfo since, the scope alone does not send there on its own the ID card she approved there only as the second of "one of", nor does her first access token', async () => {
    // The member number she approved by name in UserInfo may travel there; the ID card only as "one of: e-mail; ID card".
    expect(await scopeAfterRestart(true)).toEqual({ silent: 'consent_required', earlier: [HEALTH] });
  });

  it('honest: restarted as it was, the scope alone is asked again without a page and delivers its claims in the sign-in token', async () => {
    expect(await scopeAfterRestart(false)).toEqual({ silent: [[HEALTH, 'svc.ver.idcard.l3.nfc'], []], earlier: [] });
  });

  it('honest: restarted as it was, the code delivers the e-mail address where she approved it, and UserInfo stays without it', async () => {
    const { tokens, client, issuer, close } = await approveThenRestart(false);
    try {
      expect(USER(await decryptFor(client, tokens.id_token as string))).toEqual(['email', 'email_verified']);
      expect(USER(await userinfo(issuer, tokens))).toEqual([]);
    } finally {
      await close();
    }
  });
});

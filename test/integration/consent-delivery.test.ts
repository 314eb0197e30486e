import { describe, expect, it } from '@jest/globals';
import { compactDecrypt, decodeJwt, decodeProtectedHeader } from 'jose';

import { recordedDelivery } from '../../lib/claims/delivery.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { FormBrowser, pkcePair, redeemCode, redirectParams, runCodeFlow, userData } from '../helpers/flow.js';
import { encryptionKey } from '../helpers/registration.js';
import { registerClient, type RegisteredClient, registeredClientUrl, updateRegistration } from '../helpers/clients.js';

/**
 * Consent covers how data travels (C8): a grant records each channel's delivery; a registration
 * weakened later (encryption dropped, the plaintext opt-out added) is not covered by it, and tokens
 * issued before never deliver user data in the weaker form.
 */
describe('consent covers how her data travels (C8)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });

  /** UserInfo's claims for `accessToken`, which must come back readable without any key (JSON or a bare JWS). */
  const plainUserinfo = async (accessToken: string): Promise<Record<string, unknown>> => {
    const response = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    const body = await response.text();
    if (!(response.headers.get('content-type') ?? '').includes('application/jwt')) return JSON.parse(body) as Record<string, unknown>;
    expect(body.split('.')).toHaveLength(3);
    return decodeJwt(body);
  };
  /** An authorization request of `client` for `openid email`, with PKCE. */
  const urlFor = (client: RegisteredClient, params: Record<string, string> = {}): string => registeredClientUrl(running.issuer, client, { scope: 'openid email', ...params });
  /** Where the browser lands for a silent authorization request of `client` (with `params`). */
  const silently = async (browser: FormBrowser, client: RegisteredClient, params: Record<string, string> = {}): Promise<URLSearchParams> => {
    const url = urlFor(client, { ...params, prompt: 'none' });
    return redirectParams((await browser.follow(url, running.baseUrl)).leftTo as string);
  };
  /** Allows the page of an `openid`-only request of `client` (`check` reads it first), then asks `asked` silently. */
  const allowPageThenAsk = async (browser: FormBrowser, client: RegisteredClient, check: (page: string) => void, asked: Record<string, string>): Promise<URLSearchParams> => {
    await browser.follow(urlFor(client, { scope: 'openid' }), running.baseUrl);
    check(browser.lastPage);
    expect(redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code')).toEqual(expect.any(String));
    return silently(browser, client, asked);
  };
  it('asks again when a client drops encryption and opts out, and an earlier access token delivers no user data in plaintext', async () => {
    const original = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const asked = { claims: JSON.stringify({ userinfo: { email: null } }) };
    const first = await runCodeFlow(running.issuer, original.metadata, { scope: 'openid email', configure: original.configure, browser, params: asked });
    expect(userData(first.userinfo)).toEqual({ email: 'erika.mustermann@example.com' });
    expect((await silently(browser, original, asked)).get('code')).toEqual(expect.any(String));

    const weakened = await updateRegistration(original, {
      id_token_encrypted_response_alg: undefined,
      id_token_encrypted_response_enc: undefined,
      userinfo_encrypted_response_alg: undefined,
      userinfo_encrypted_response_enc: undefined,
      jwks: undefined,
      allow_unencrypted_userinfo: true,
    });

    // The token issued under the encrypted consent: plaintext now, and so nothing but sub.
    const earlier = await plainUserinfo(first.tokens.access_token);
    expect(earlier.sub).toBe(first.claims.sub);
    expect(userData(earlier)).toEqual({});

    // The next authorization is not covered by the grant: consent_required silently, the page otherwise.
    expect((await silently(browser, weakened, asked)).get('error')).toBe('consent_required');
    const again = await runCodeFlow(running.issuer, weakened.metadata, { scope: 'openid email', browser, params: asked });
    expect(browser.lastPage).toContain('id="consent-allow"');
    // Consented in plaintext now: delivered so.
    expect(userData(again.userinfo)).toEqual({ email: 'erika.mustermann@example.com' });
    // Her consent under the new delivery replaced the grant: the earlier token ends with it.
    const ended = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${first.tokens.access_token}` } });
    expect([ended.status, ((await ended.json()) as { error?: string }).error]).toEqual([401, 'invalid_token']);
  });

  it('does not take an approval of a page that showed another delivery: a registration weakened while the page is open', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    await browser.follow(urlFor(client), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain('Profile request (UserInfo): <strong>encrypted</strong>');
    await updateRegistration(client, { userinfo_encrypted_response_alg: undefined, userinfo_encrypted_response_enc: undefined, allow_unencrypted_userinfo: true });
    const stale = await browser.submit('consent-allow', {}, running.baseUrl);
    expect(stale.leftTo).toBeUndefined();
    expect(browser.lastPage).toContain('Profile request (UserInfo): <strong>not encrypted</strong>');
    const allowed = await browser.submit('consent-allow', {}, running.baseUrl);
    expect(redirectParams(allowed.leftTo as string).get('code')).toEqual(expect.any(String));
  });

  it('asks again when only the opt-out is added to a client that received nothing', async () => {
    const plain = await registerClient(running, 'plain');
    const browser = new FormBrowser();
    await runCodeFlow(running.issuer, plain.metadata, { scope: 'openid email', browser });
    const optedOut = await updateRegistration(plain, { allow_unencrypted_userinfo: true });
    expect((await silently(browser, optedOut)).get('error')).toBe('consent_required');
  });

  it('asks again when a client that received nothing adds encryption: the page she approved said nothing is sent', async () => {
    const plain = await registerClient(running, 'plain');
    const browser = new FormBrowser();
    await runCodeFlow(running.issuer, plain.metadata, { scope: 'openid email', browser });
    const keyed = await registerClient(running, 'rsa');
    const strengthened = await updateRegistration(plain, {
      id_token_encrypted_response_alg: keyed.metadata.id_token_encrypted_response_alg,
      userinfo_encrypted_response_alg: keyed.metadata.userinfo_encrypted_response_alg,
      jwks: keyed.metadata.jwks,
    });
    expect((await silently(browser, strengthened)).get('error')).toBe('consent_required');
    const flow = await runCodeFlow(running.issuer, strengthened.metadata, { scope: 'openid email', browser, configure: keyed.configure });
    expect(userData(flow.claims)).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
  });

  it('attack: a claim she approved as not sent is asked again once the client adds encryption, also after she allowed a page that showed only an identifier', async () => {
    const plain = await registerClient(running, 'plain');
    const browser = new FormBrowser();
    const asked = { scope: 'openid', claims: JSON.stringify({ id_token: { email: null } }) };
    await browser.follow(urlFor(plain, asked), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain('<li>your e-mail address — not sent</li>');
    expect(redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code')).toEqual(expect.any(String));
    const keyed = await registerClient(running, 'rsa');
    const strengthened = await updateRegistration(plain, { id_token_encrypted_response_alg: keyed.metadata.id_token_encrypted_response_alg, jwks: keyed.metadata.jwks });
    const silent = await allowPageThenAsk(browser, strengthened, (page) => expect(page).not.toContain('e-mail'), asked);
    expect(silent.get('error')).toBe('consent_required');
  });

  it('attack: a claim she approved encrypted is asked again once the client opts out of encryption, also after she allowed a page that showed only an identifier', async () => {
    const original = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const asked = { scope: 'openid', claims: JSON.stringify({ userinfo: { email: null } }) };
    await runCodeFlow(running.issuer, original.metadata, { scope: 'openid', configure: original.configure, browser, params: asked });
    const weakened = await updateRegistration(original, { userinfo_encrypted_response_alg: undefined, userinfo_encrypted_response_enc: undefined, allow_unencrypted_userinfo: true });
    const silent = await allowPageThenAsk(browser, weakened, (page) => expect(page).toContain('Profile request (UserInfo): <strong>not encrypted</strong>'), asked);
    expect(silent.get('error')).toBe('consent_required');
  });

  it('honest: a claim approved in the sign-in token stays approved there when only UserInfo stops receiving data', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const asked = { scope: 'openid', claims: JSON.stringify({ id_token: { email: null } }) };
    await runCodeFlow(running.issuer, client.metadata, { scope: 'openid', configure: client.configure, browser, params: asked });
    const changed = await updateRegistration(client, { userinfo_encrypted_response_alg: undefined, userinfo_encrypted_response_enc: undefined });
    const silent = await allowPageThenAsk(browser, changed, (page) => expect(page).toContain('id="consent-allow"'), asked);
    expect(silent.get('code')).toEqual(expect.any(String));
  });

  it('honest: a client that changes the algorithm, encoding and key of its encrypted channels keeps her consent: its earlier code and token deliver to the new key, and she is not asked again', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const first = await runCodeFlow(running.issuer, client.metadata, { scope: 'openid email', configure: client.configure, browser });
    const { verifier, challenge } = pkcePair();
    const code = (await silently(browser, client, { code_challenge: challenge })).get('code') as string;
    const ecdh = await encryptionKey('ECDH-ES+A256KW');
    const changed = { alg: 'ECDH-ES+A256KW', enc: 'A256GCM' };
    await updateRegistration(client, {
      id_token_encrypted_response_alg: changed.alg,
      id_token_encrypted_response_enc: changed.enc,
      userinfo_encrypted_response_alg: changed.alg,
      userinfo_encrypted_response_enc: changed.enc,
      jwks: { keys: [ecdh.jwk] },
    });

    const redeemed = await redeemCode(running.issuer, client.metadata, code, verifier);
    const idToken = String(redeemed.body.id_token);
    expect(decodeProtectedHeader(idToken)).toMatchObject({ ...changed, kid: ecdh.jwk.kid });
    const userinfo = await (await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${first.tokens.access_token}` } })).text();
    expect(decodeProtectedHeader(userinfo)).toMatchObject({ ...changed, kid: ecdh.jwk.kid });
    const opened = async (jwe: string): Promise<Record<string, unknown>> => decodeJwt(new TextDecoder().decode((await compactDecrypt(jwe, ecdh.privateKey)).plaintext));
    expect(userData(await opened(idToken))).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
    expect((await opened(userinfo)).sub).toBe(first.claims.sub);
    expect((await silently(browser, client)).get('code')).toEqual(expect.any(String));
  });

  it('counts a grant without a delivery record (made before this rule) as not covering', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const flow = await runCodeFlow(running.issuer, client.metadata, { scope: 'openid email', configure: client.configure, browser });
    const accessToken = await running.app.svc.provider.AccessToken.find(flow.tokens.access_token);
    const grant = await running.app.svc.provider.Grant.find(accessToken?.grantId as string);
    if (!grant?.openid?.claims) throw new Error('the grant has no claims');
    expect(recordedDelivery(grant)).toEqual({ id_token: 'encrypted', userinfo: 'encrypted', subject: 'pairwise' });
    grant.openid.claims = grant.openid.claims.filter((c) => !c.startsWith('svc:delivery:'));
    await grant.save();
    expect((await silently(browser, client)).get('error')).toBe('consent_required');
  });
});

import { describe, expect, it } from '@jest/globals';
import { compactDecrypt, decodeJwt } from 'jose';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { registerClient, registeredClientUrl, updateRegistration, type RegisteredClient } from '../helpers/clients.js';
import { FormBrowser, pkcePair, redeemCode, redirectParams } from '../helpers/flow.js';
import { encryptionKey } from '../helpers/registration.js';
import { appPerSuite } from '../helpers/suite-app.js';

const PROTOCOL = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'scope', 'sid']);
const userDataOf = (claims: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(claims).filter(([k]) => !PROTOCOL.has(k)));

/** A JWE for `key` (a nested JWS inside, or JSON) as claims. */
async function decrypt(key: CryptoKey, jwe: string): Promise<Record<string, unknown>> {
  const { plaintext } = await compactDecrypt(jwe, key);
  const text = new TextDecoder().decode(plaintext);
  return text.split('.').length === 3 ? decodeJwt(text) : (JSON.parse(text) as Record<string, unknown>);
}

/** UserInfo's user data for `accessToken`: decrypted with `key` when it comes as a JWE, else as it comes. */
async function userinfoData(issuer: string, accessToken: string, key?: CryptoKey): Promise<{ status: number; data: Record<string, unknown> }> {
  const res = await fetch(`${issuer}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  const body = await res.text();
  if (res.status !== 200) return { status: res.status, data: {} };
  const parts = body.split('.');
  if (parts.length === 5 && key) return { status: 200, data: userDataOf(await decrypt(key, body)) };
  if (parts.length === 3) return { status: 200, data: userDataOf(decodeJwt(body)) };
  return { status: 200, data: userDataOf(JSON.parse(body) as Record<string, unknown>) };
}

/**
 * C8: "until the person has approved a client on the
 * consent page, nothing that depends on her attributes reaches that client"; "Consent covers how data travels:
 * a grant records, per channel, whether user data was to be encrypted to the client's key". The consent page of a
 * channel without encryption tells her "not encrypted, so no personal data is sent this way" and marks each claim
 * "— not sent". What she approves there is that this client receives nothing about her on that channel. The grant
 * records the channel as `withheld`. Then the client adds encryption.
 */
describe('approved as "not sent", then the client adds encryption (C8)', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });
  const EMAIL_IN_USERINFO = { scope: 'openid', claims: JSON.stringify({ userinfo: { email: null } }) };

  /** A client encrypting the ID token only: its UserInfo carries no user data (C4). */
  const idTokenOnly = (): Promise<RegisteredClient> => registerClient(running, 'rsa', { userinfo_encrypted_response_alg: undefined });

  /** demo signs in to `client` with `params` and approves the page, which must say `shown`; the browser, code and verifier. */
  async function approve(client: RegisteredClient, params: Record<string, string>, shown: string[]): Promise<{ browser: FormBrowser; code: string; verifier: string }> {
    const browser = new FormBrowser();
    const { verifier, challenge } = pkcePair();
    await browser.follow(registeredClientUrl(running.issuer, client, { ...params, code_challenge: challenge }), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    for (const text of shown) expect(browser.lastPage).toContain(text);
    const code = redirectParams((await browser.submit('consent-allow', {}, running.baseUrl)).leftTo as string).get('code') as string;
    expect(code).toEqual(expect.any(String));
    return { browser, code, verifier };
  }

  it('an access token issued when the page said "no personal data is sent" in UserInfo returns no user data there once the client adds UserInfo encryption', async () => {
    const client = await idTokenOnly();
    const { code, verifier } = await approve(client, EMAIL_IN_USERINFO, [
      'Profile request (UserInfo): not encrypted, so <strong>no personal data</strong> is sent this way',
      'your e-mail address — not sent',
    ]);
    const tokens = await redeemCode(running.issuer, client.metadata, code, verifier);
    expect(tokens.status).toBe(200);
    const accessToken = tokens.body.access_token as string;
    expect(await userinfoData(running.issuer, accessToken)).toEqual({ status: 200, data: {} });

    // The client adds UserInfo encryption (RFC 7592), to its own key.
    await updateRegistration(client, { userinfo_encrypted_response_alg: 'RSA-OAEP-256' });

    // The same access token: she was told her e-mail address is not sent to this client. Nothing about her may follow.
    const after = await userinfoData(running.issuer, accessToken, client.privateKey);
    expect(after.data).toEqual({});
  });

  it('a silent authorization after the client adds UserInfo encryption to the channel she was told carries nothing needs her consent again (consent_required)', async () => {
    const client = await idTokenOnly();
    const { browser } = await approve(client, EMAIL_IN_USERINFO, ['your e-mail address — not sent']);
    const moved = await updateRegistration(client, { userinfo_encrypted_response_alg: 'RSA-OAEP-256' });
    const silent = redirectParams((await browser.follow(registeredClientUrl(running.issuer, moved, { ...EMAIL_IN_USERINFO, prompt: 'none' }), running.baseUrl)).leftTo as string);
    expect(silent.get('error')).toBe('consent_required');
  });

  it.each([
    ['received data encrypted and replaces its key and algorithm (RSA-OAEP-256 to ECDH-ES+A256KW)', 'rsa', 'ECDH-ES+A256KW', 'your e-mail address — in the sign-in token'],
    ['opted out of encryption and then adds it', 'optout', 'RSA-OAEP-256', 'your e-mail address'],
  ] as const)('honest: a client that %s needs no new consent, and its data comes to the new key', async (_name, kind, alg, shown) => {
    const client = await registerClient(running, kind);
    const { browser } = await approve(client, { scope: 'openid email' }, [shown]);
    const key = await encryptionKey(alg, { kid: 'rp-new' });
    const moved = await updateRegistration(client, { id_token_encrypted_response_alg: alg, userinfo_encrypted_response_alg: alg, jwks: { keys: [key.jwk] } });
    const { verifier, challenge } = pkcePair();
    const silent = redirectParams((await browser.follow(registeredClientUrl(running.issuer, moved, { scope: 'openid email', code_challenge: challenge, prompt: 'none' }), running.baseUrl)).leftTo as string);
    expect(silent.get('error')).toBeNull();
    const tokens = await redeemCode(running.issuer, moved.metadata, silent.get('code') as string, verifier);
    expect(tokens.status).toBe(200);
    expect(userDataOf(await decrypt(key.privateKey, tokens.body.id_token as string))).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
  });
});

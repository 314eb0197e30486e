import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';

import { compactDecrypt, createRemoteJWKSet, jwtVerify } from 'jose';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { pairwiseSubOf, startApp, type RunningApp } from '../helpers/app.js';
import { FormBrowser, redirectParams, runCodeFlow, signIn, userData } from '../helpers/flow.js';
import { registerClient, type RegisteredClient, registeredClientUrl } from '../helpers/clients.js';

const INSURANCE = 'demo.ver.healthinsurance.l0.api.demo';

describe('claims and privacy end to end (C4, C5)', () => {
  let running: RunningApp;
  let rsa: RegisteredClient;
  let ecdh: RegisteredClient;
  let plain: RegisteredClient;
  let optout: RegisteredClient;
  /** The pairwise sub a client receives for the demo person (clients are pairwise by default). */
  const subOf = (client: RegisteredClient): string => pairwiseSubOf((client.metadata.redirect_uris as string[])[0] as string);

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
    [rsa, ecdh, plain, optout] = await Promise.all([
      registerClient(running, 'rsa'),
      registerClient(running, 'ecdh'),
      registerClient(running, 'plain'),
      registerClient(running, 'optout'),
    ]);
  });
  afterAll(async () => running.close());

  /** An authorization URL for a registered client with PKCE, state `st` and scope `openid`. */
  const urlFor = (client: RegisteredClient, params: Record<string, string>): string => registeredClientUrl(running.issuer, client, params);
  /** The redirect back to the client after signing in as `login`. */
  const authorize = async (client: RegisteredClient, params: Record<string, string>, login = 'demo'): Promise<URLSearchParams> =>
    redirectParams((await signIn(urlFor(client, params), { login, password: login })).callbackUrl.href);
  /** The redirect back to the client for a request refused before any page. */
  const errorBeforeLogin = async (client: RegisteredClient, params: Record<string, string>): Promise<URLSearchParams> =>
    redirectParams((await fetch(urlFor(client, params), { redirect: 'manual' })).headers.get('location') as string);

  it.each([
    ['RSA-OAEP-256', () => rsa],
    ['ECDH-ES+A256KW', () => ecdh],
  ])('encrypts the ID token with %s: it decrypts with the client key, verifies, and carries the claims', async (_alg, client) => {
    const flow = await runCodeFlow(running.issuer, client().metadata, { scope: 'openid profile email', configure: client().configure });
    expect(userData(flow.claims)).toEqual({
      name: 'Erika Mustermann',
      given_name: 'Erika',
      family_name: 'Mustermann',
      birthdate: '1964-08-12',
      email: 'erika.mustermann@example.com',
      email_verified: true,
    });
    expect(flow.claims.scope).toBe('openid profile email');
    // Each claim travels once (C5): the scope claims went in the ID token, UserInfo has only sub.
    expect(userData(flow.userinfo)).toEqual({});
  });

  it('answers UserInfo for an encrypting client with application/jwt: a JWE holding a JWS signed RS256', async () => {
    const claims = JSON.stringify({ userinfo: { email: null, email_verified: null } });
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { configure: rsa.configure, skipUserinfo: true, params: { claims } });
    const response = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${flow.tokens.access_token}` } });
    expect(response.headers.get('content-type')).toContain('application/jwt');
    const jwe = await response.text();
    expect(jwe.split('.')).toHaveLength(5);
    const { plaintext, protectedHeader } = await compactDecrypt(jwe, rsa.privateKey as CryptoKey);
    expect(protectedHeader).toMatchObject({ alg: 'RSA-OAEP-256', enc: 'A128CBC-HS256' });
    const { payload, protectedHeader: sigHeader } = await jwtVerify(new TextDecoder().decode(plaintext), createRemoteJWKSet(new URL(`${running.issuer}/jwks`)), {
      issuer: running.issuer,
      audience: rsa.metadata.client_id,
    });
    expect(sigHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({ sub: subOf(rsa), email: 'erika.mustermann@example.com', email_verified: true });
  });

  it('gives a client without encryption or opt-out no user data, in the ID token or UserInfo', async () => {
    const flow = await runCodeFlow(running.issuer, plain.metadata, { scope: 'openid profile email svc.insurance' });
    expect(userData(flow.claims)).toEqual({});
    expect(userData(flow.userinfo)).toEqual({});
    expect(flow.userinfo.sub).toBe(subOf(plain));
  });

  it('refuses an essential claim for a client that cannot receive user data, saying how to fix it', async () => {
    const params = await errorBeforeLogin(plain, { claims: JSON.stringify({ userinfo: { email: { essential: true } } }) });
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('state')).toBe('st');
    expect(params.get('error_description')).toBe(
      'claim email is essential, but the client cannot receive user data in the UserInfo response: register userinfo_encrypted_response_alg (e.g. RSA-OAEP-256) with an encryption key in jwks or jwks_uri, or set allow_unencrypted_userinfo to true',
    );
  });

  it('delivers plaintext JSON UserInfo with the claims to a client registered with allow_unencrypted_userinfo', async () => {
    const claims = JSON.stringify({ userinfo: { email: null, email_verified: null } });
    const flow = await runCodeFlow(running.issuer, optout.metadata, { skipUserinfo: true, params: { claims } });
    expect(userData(flow.claims)).toEqual({});
    const response = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${flow.tokens.access_token}` } });
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toEqual({ sub: subOf(optout), email: 'erika.mustermann@example.com', email_verified: true });
  });

  it('delivers svc.ver.[driverslicense,idcard].l3.nfc for demo as svc.ver.idcard.l3.nfc', async () => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, {
      configure: rsa.configure,
      params: { claims: JSON.stringify({ userinfo: { 'svc.ver.[driverslicense,idcard].l3.nfc': { essential: true } } }) },
    });
    expect(userData(flow.userinfo)).toEqual({
      'svc.ver.idcard.l3.nfc': { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', nationality: 'DE', verified_at: '2025-03-01T10:15:00Z' },
    });
  });

  it('delivers the first satisfied alternative in written order, in the ID token too', async () => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, {
      configure: rsa.configure,
      params: { claims: JSON.stringify({ id_token: { 'svc.ver.[mobile,email].l2': null, 'svc.auth.mobile.l2.otp': null } }) },
    });
    expect(Object.keys(userData(flow.claims)).sort()).toEqual(['svc.auth.mobile.l2.otp', 'svc.ver.email.l2']);
    const proof = flow.claims['svc.auth.mobile.l2.otp'] as Record<string, unknown>;
    expect(proof).toMatchObject({ executed: true, method: 'otp' });
    expect(JSON.stringify(proof)).not.toContain('+4915123456789');
  });

  it("the example OTP proof names no account: it confirms no guessed account id and links her at no other relying party", async () => {
    // A relying party of another sector, which receives her under another pairwise sub.
    const other = await registerClient(running, 'rsa', { redirect_uris: ['https://other-rp.example/cb'] });
    const claims = JSON.stringify({ id_token: { 'svc.auth.mobile.l2.otp': null } });
    const proofAt = async (client: RegisteredClient) => {
      const flow = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, params: { claims } });
      return { sub: flow.claims.sub, otp: flow.claims['svc.auth.mobile.l2.otp'] as { proof: string; completed_at: string } };
    };
    const [here, there] = [await proofAt(rsa), await proofAt(other)];
    expect(here.sub).not.toBe(there.sub);
    // Hashing a guessed account id with the delivered time does not reproduce the proof (pairwise subjects hide the id).
    expect(here.otp.proof).not.toBe(createHash('sha256').update(`otp:demo-0001:${here.otp.completed_at}`).digest('base64url'));
    expect(here.otp.proof).not.toBe(there.otp.proof);
    // The time is the day only: the minute she confirmed a password would be one value to join her on.
    expect([here.otp.completed_at, there.otp.completed_at]).toEqual(['2025-03-02', '2025-03-02']);
  });

  it('honest: the example OTP proof is an opaque value beside the day the password was confirmed, for her again in the next flow', async () => {
    const claims = JSON.stringify({ userinfo: { 'svc.auth.mobile.l2.otp': { essential: true } } });
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { configure: rsa.configure, params: { claims } });
    const otp = flow.userinfo['svc.auth.mobile.l2.otp'] as Record<string, unknown>;
    expect(otp).toEqual({ executed: true, method: 'otp', completed_at: '2025-03-02', proof: expect.stringMatching(/^[\w-]{22,}$/) });
  });

  it('answers an essential svc.ver.idcard.l3.nfc for demo-basic with access_denied', async () => {
    const params = await authorize(rsa, { claims: JSON.stringify({ userinfo: { 'svc.ver.idcard.l3.nfc': { essential: true } } }) }, 'demo-basic');
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('state')).toBe('st');
  });

  it('omits a voluntary claim the user lacks', async () => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, {
      login: 'demo-basic',
      password: 'demo-basic',
      configure: rsa.configure,
      params: { claims: JSON.stringify({ userinfo: { 'svc.ver.idcard.l3.nfc': null, 'svc.ver.email.l2': null } }) },
    });
    expect(Object.keys(userData(flow.userinfo))).toEqual(['svc.ver.email.l2']);
  });

  it('refuses a claim no module provides with invalid_request', async () => {
    const params = await errorBeforeLogin(rsa, { claims: JSON.stringify({ userinfo: { middle_name: null } }) });
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toBe('claim middle_name is not provided by any claim module');
  });

  it('refuses the values member with invalid_request', async () => {
    const params = await errorBeforeLogin(rsa, { claims: JSON.stringify({ userinfo: { email: { values: ['a@b.c', 'd@e.f'] } } }) });
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toBe('claims.userinfo.email: the values member is not supported (request one value with value)');
  });

  it('refuses a malformed svc.* name, naming the claim and the offset', async () => {
    const params = await errorBeforeLogin(rsa, { claims: JSON.stringify({ userinfo: { 'svc.ver.[idcard,.l3': null } }) });
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toBe('claim svc.ver.[idcard,.l3: empty segment at offset 16');
  });

  it('refuses aggregated and distributed claims with invalid_request', async () => {
    const params = await errorBeforeLogin(rsa, { claims: JSON.stringify({ userinfo: { _claim_sources: null } }) });
    expect(params.get('error')).toBe('invalid_request');
  });

  it.each<[string, Record<string, unknown>]>([
    ['profile', { name: 'Erika Mustermann', given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12' }],
    ['email', { email: 'erika.mustermann@example.com', email_verified: true }],
    ['svc.insurance', { [INSURANCE]: 'A123456780', name: 'Erika Mustermann', birthdate: '1964-08-12' }],
    [
      'svc.insurance.verified',
      {
        [INSURANCE]: 'A123456780',
        'svc.ver.idcard.l3.nfc': { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', nationality: 'DE', verified_at: '2025-03-01T10:15:00Z' },
      },
    ],
    ['address phone offline_access', {}],
  ])('scope %s delivers exactly its claims', async (scope, expected) => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { scope: `openid ${scope}`, configure: rsa.configure });
    expect(userData(flow.claims)).toEqual(expected);
    expect(userData(flow.userinfo)).toEqual({});
    expect(flow.tokens.refresh_token).toBeUndefined();
  });

  it('puts the granted scopes in the ID token and not in UserInfo by default', async () => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { scope: 'openid email', configure: rsa.configure });
    expect(flow.claims.scope).toBe('openid email');
    expect(flow.userinfo.scope).toBeUndefined();
  });

  it('sends a claim named in the claims parameter only where it was named, not also where its scope goes', async () => {
    const claims = JSON.stringify({ userinfo: { email: null }, id_token: { name: null } });
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { scope: 'openid email profile', configure: rsa.configure, params: { claims } });
    expect(userData(flow.userinfo)).toEqual({ email: 'erika.mustermann@example.com' });
    expect(userData(flow.claims)).toEqual({ name: 'Erika Mustermann', given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', email_verified: true });
  });

  it('sends a scope claim where the consent page said when only a group of the other member offers it as an alternative', async () => {
    // The page: the ID card in the sign-in token (scope svc.insurance.verified), "one of: e-mail; ID card" in UserInfo.
    const claims = JSON.stringify({ userinfo: { 'svc.ver.[email.l2,idcard.l3.nfc]': null } });
    const browser = new FormBrowser();
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { scope: 'openid svc.insurance.verified', configure: rsa.configure, params: { claims }, browser });
    expect(browser.lastPage).toContain('<li>your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read — in the sign-in token</li>');
    expect(Object.keys(userData(flow.claims)).sort()).toEqual(['demo.ver.healthinsurance.l0.api.demo', 'svc.ver.idcard.l3.nfc']);
    expect(Object.keys(userData(flow.userinfo))).toEqual(['svc.ver.email.l2']);
  });

  it('honest: a scope claim the other member names by itself still travels only there, also beside a group offering it', async () => {
    const claims = JSON.stringify({ userinfo: { 'svc.ver.idcard.l3.nfc': null, 'svc.ver.[email.l2,idcard.l3.nfc]': null } });
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { scope: 'openid svc.insurance.verified', configure: rsa.configure, params: { claims } });
    expect(Object.keys(userData(flow.claims))).toEqual(['demo.ver.healthinsurance.l0.api.demo']);
    expect(Object.keys(userData(flow.userinfo)).sort()).toEqual(['svc.ver.email.l2', 'svc.ver.idcard.l3.nfc']);
  });

  it('sends a claim named in both members to both: an explicit request', async () => {
    const claims = JSON.stringify({ userinfo: { email: null }, id_token: { email: null } });
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { scope: 'openid email', configure: rsa.configure, params: { claims } });
    expect(userData(flow.userinfo)).toEqual({ email: 'erika.mustermann@example.com' });
    expect(userData(flow.claims)).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
  });

  it('sends the scope claims in UserInfo when the ID token cannot carry user data and UserInfo can', async () => {
    const userinfoOnly = await registerClient(running, 'rsa', { id_token_encrypted_response_alg: undefined });
    const flow = await runCodeFlow(running.issuer, userinfoOnly.metadata, { scope: 'openid email', configure: userinfoOnly.configure });
    expect(userData(flow.claims)).toEqual({});
    expect(flow.claims.scope).toBeUndefined();
    expect(flow.userinfo.scope).toBe('openid email');
    expect(userData(flow.userinfo)).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
  });
});

describe('svc.stage.include-scopes-in-user-info=true', () => {
  let running: RunningApp;
  let rsa: RegisteredClient;
  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules(), properties: { 'svc.stage.include-scopes-in-user-info': true } });
    rsa = await registerClient(running, 'rsa');
  });
  afterAll(async () => running.close());

  it('puts the granted scopes and their claims in UserInfo and not in the ID token', async () => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { scope: 'openid email', configure: rsa.configure });
    expect(flow.userinfo.scope).toBe('openid email');
    expect(userData(flow.userinfo)).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
    expect(flow.claims.scope).toBeUndefined();
    expect(userData(flow.claims)).toEqual({});
  });

  it('serves a relying party that reads only UserInfo (an IAM broker) with every scope claim', async () => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { scope: 'openid profile email', configure: rsa.configure });
    expect(userData(flow.userinfo)).toEqual({ name: 'Erika Mustermann', given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', email: 'erika.mustermann@example.com', email_verified: true });
  });
});

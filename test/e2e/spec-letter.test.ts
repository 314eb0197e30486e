import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeProtectedHeader, SignJWT } from 'jose';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { basicAuthorization } from '../../lib/web/basic-auth.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, codeFlowParams, FormBrowser, pkcePair, runCodeFlow, signIn, userData } from '../helpers/flow.js';
import { register } from '../helpers/registration.js';
import { rpKeyPair } from '../helpers/rp-keys.js';
import { completeFlow, outcomeOf, registerSigningClient, signRequestObject, type SigningClient } from '../helpers/request-objects.js';
import { registerClient, registeredClientParams, registeredClientUrl, type RegisteredClient } from '../helpers/clients.js';

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

/**
 * RFC 6749 5.2: a client refused at the token endpoint gets `invalid_client`, with 401 "to indicate which HTTP
 * authentication schemes are supported", and HTTP gives no 401 without a `WWW-Authenticate` challenge (RFC 9110
 * 15.5.2). RFC 9126 2.3 answers a pushed request the same way. oidc-provider challenges only a client that used the
 * Authorization header; one that authenticated in the body (`client_secret_post`, `private_key_jwt`) or not at all got
 * a bare 401.
 */
describe('every 401 invalid_client at /token and /par carries a Basic challenge (RFC 6749 5.2, RFC 9126 2.3)', () => {
  const poster = confidentialClient({ client_id: 'post-rp', token_endpoint_auth_method: 'client_secret_post' });
  let running: RunningApp;
  let asserting: SigningClient;
  let browser: FormBrowser;

  beforeAll(async () => {
    running = await startApp({ clients: [client, poster] });
    asserting = await registerSigningClient(running, { token_endpoint_auth_method: 'private_key_jwt' });
    ({ browser } = await signIn(authorizationUrl(running.issuer, codeFlowParams(poster, { state: 'st' }))));
  });
  afterAll(async () => running.close());

  const post = (endpoint: 'token' | 'par', fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${running.issuer}/${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });
  const answer = async (response: Response): Promise<unknown[]> => [response.status, ((await response.json()) as { error?: string }).error, response.headers.get('www-authenticate')];
  const pushed = async (): Promise<number> => (await running.app.svc.store.inventory?.list('PushedAuthorizationRequest', { limit: 500 }))?.records.length ?? -1;
  const wrongAudience = async (): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    const id = String(asserting.metadata.client_id);
    return new SignJWT({ iss: id, sub: id, aud: `${running.issuer}/token`, jti: oidc.randomState(), iat: now, exp: now + 60 })
      .setProtectedHeader({ alg: asserting.alg, kid: asserting.kid })
      .sign(asserting.signingKey);
  };
  /** Client authentication in the body or none at all, each refused: `[name, fields]`. */
  const refusedInTheBody = async (): Promise<[string, Record<string, string>][]> => [
    ['client_secret_post with a wrong secret', { client_id: poster.client_id, client_secret: 'wrong' }],
    ['an unknown client_id with a secret', { client_id: 'nobody', client_secret: 'wrong' }],
    ['a confidential client sending no credentials', { client_id: poster.client_id }],
    ['private_key_jwt with an assertion for the token endpoint', { client_id: String(asserting.metadata.client_id), client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: await wrongAudience() }],
  ];
  const challenge = (): RegExp => new RegExp(`^Basic realm="${running.issuer.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}", error="invalid_client"`);

  it('attack: a token request authenticated in the body, or not at all, and refused gets 401 invalid_client with a Basic challenge, and the code stays good', async () => {
    const { verifier, challenge: pkce } = pkcePair();
    const code = new URL((await browser.request(authorizationUrl(running.issuer, codeFlowParams(poster, { state: 'st', prompt: 'none', code_challenge: pkce })))).headers.get('location') ?? '').searchParams.get('code') ?? '';
    const grant = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri };
    for (const [name, credentials] of await refusedInTheBody()) {
      expect([name, ...(await answer(await post('token', { ...grant, ...credentials })))]).toEqual([name, 401, 'invalid_client', expect.stringMatching(challenge())]);
    }
    const honest = await post('token', { ...grant, client_id: poster.client_id, client_secret: String(poster.client_secret) });
    expect([honest.status, honest.headers.get('www-authenticate')]).toEqual([200, null]);
  });

  it('attack: the same at /par, where nothing is stored', async () => {
    const before = await pushed();
    const request = { response_type: 'code', scope: 'openid', redirect_uri: redirectUri, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' };
    for (const [name, credentials] of await refusedInTheBody()) {
      expect([name, ...(await answer(await post('par', { ...request, ...credentials })))]).toEqual([name, 401, 'invalid_client', expect.stringMatching(challenge())]);
    }
    expect(await pushed()).toBe(before);
  });

  it('honest: a client refused with Basic gets its one challenge, as before; pushes authenticated in the body side by side get 201 and no challenge', async () => {
    const basic = await post('token', { grant_type: 'authorization_code', code: 'x', code_verifier: pkcePair().verifier, redirect_uri: redirectUri }, { authorization: basicAuthorization(client.client_id, 'wrong', { formEncoded: true }) });
    expect(await answer(basic)).toEqual([401, 'invalid_client', `Basic realm="${running.issuer}", error="invalid_client", error_description="client authentication failed"`]);
    const pushes = await Promise.all(
      Array.from({ length: 8 }, () => post('par', { response_type: 'code', scope: 'openid', redirect_uri: redirectUri, code_challenge: pkcePair().challenge, code_challenge_method: 'S256', client_id: poster.client_id, client_secret: String(poster.client_secret) })),
    );
    expect(pushes.map((r) => [r.status, r.headers.get('www-authenticate')])).toEqual(Array.from({ length: 8 }, () => [201, null]));
  });
});

/**
 * OpenID Connect Discovery 1.0 section 3: what discovery advertises is what works. Every ID token and UserInfo
 * encryption `alg` and `enc` it lists, and every signing `alg`, is registered by a client and run through a whole code
 * flow by openid-client, which decrypts and verifies what it receives. The lists are read from discovery, so a value
 * added there is tried here too.
 */
describe('every advertised ID token and UserInfo algorithm works with a real relying party (Discovery 1.0 section 3)', () => {
  let running: RunningApp;
  let discovery: Record<string, string[]>;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
    discovery = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
  });
  afterAll(async () => running.close());

  const registered = async (metadata: Record<string, unknown>): Promise<ClientMetadata> => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: ['https://rp.example/cb'], ...metadata }, token);
    expect([res.status, res.body.error_description]).toEqual([201, undefined]);
    return res.body as unknown as ClientMetadata;
  };

  it('advertises the C6 lists alike for the ID token and UserInfo', () => {
    expect(discovery.id_token_encryption_alg_values_supported).toEqual(['RSA-OAEP', 'RSA-OAEP-256', 'ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW']);
    expect(discovery.id_token_encryption_enc_values_supported).toEqual(['A128CBC-HS256', 'A192CBC-HS384', 'A256CBC-HS512', 'A128GCM', 'A256GCM']);
    expect(discovery.userinfo_encryption_alg_values_supported).toEqual(discovery.id_token_encryption_alg_values_supported);
    expect(discovery.userinfo_encryption_enc_values_supported).toEqual(discovery.id_token_encryption_enc_values_supported);
  });

  it('delivers an ID token and UserInfo encrypted with every advertised alg and enc, which openid-client decrypts', async () => {
    const tried: string[] = [];
    for (const alg of discovery.id_token_encryption_alg_values_supported ?? []) {
      for (const enc of discovery.id_token_encryption_enc_values_supported ?? []) {
        const { publicJwk, privateKey } = await rpKeyPair(alg);
        const kid = `${alg}-${enc}`;
        const client = await registered({
          id_token_encrypted_response_alg: alg,
          id_token_encrypted_response_enc: enc,
          userinfo_encrypted_response_alg: alg,
          userinfo_encrypted_response_enc: enc,
          jwks: { keys: [{ ...publicJwk, use: 'enc', kid }] },
        });
        const flow = await runCodeFlow(running.issuer, client, {
          scope: 'openid email',
          params: { claims: JSON.stringify({ userinfo: { name: null } }) },
          configure: (config) => oidc.enableDecryptingResponses(config, [enc], { key: privateKey, kid, alg }),
        });
        expect(decodeProtectedHeader(String(flow.tokens.id_token))).toMatchObject({ alg, enc, kid, cty: 'JWT' });
        expect(userData(flow.claims)).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
        expect(userData(flow.userinfo)).toEqual({ name: 'Erika Mustermann' });
        tried.push(kid);
      }
    }
    expect(tried).toHaveLength(30);
  }, 120_000);

  it('signs the ID token and UserInfo with every advertised signing alg, which openid-client verifies against the published keys', async () => {
    expect(discovery.id_token_signing_alg_values_supported).toEqual(expect.arrayContaining(['RS256', 'PS256', 'ES256']));
    expect(discovery.userinfo_signing_alg_values_supported).toEqual(discovery.id_token_signing_alg_values_supported);
    for (const alg of discovery.id_token_signing_alg_values_supported ?? []) {
      const client = await registered({ id_token_signed_response_alg: alg, userinfo_signed_response_alg: alg });
      const flow = await runCodeFlow(running.issuer, client);
      expect(decodeProtectedHeader(String(flow.tokens.id_token)).alg).toBe(alg);
      expect(flow.userinfo.sub).toBe(flow.claims.sub);
      expect(flow.userinfo.iss).toBe(running.issuer);
    }
  });
});

/**
 * OpenID Connect Core 5.5: the `claims` parameter's members `userinfo` and `id_token` are both OPTIONAL, and "any
 * members used that are not understood MUST be ignored". A parameter naming neither requests nothing: it is served as
 * a request without one, in the query, a pushed request and a request object alike, within the same budget (C5).
 */
describe('a claims parameter naming neither userinfo nor id_token requests nothing (OIDC Core 5.5)', () => {
  let running: RunningApp;
  let rsa: RegisteredClient;
  let signing: SigningClient;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
    rsa = await registerClient(running, 'rsa');
    signing = await registerSigningClient(running);
  });
  afterAll(async () => running.close());

  const NOT_UNDERSTOOD = [{}, { essential_claims: { email: { essential: true } } }, { id_token_hint_claims: null, verified_claims: { email: null } }];
  const stored = async (model: string): Promise<string> => JSON.stringify((await running.app.svc.store.inventory?.list(model, { limit: 500 }))?.records ?? []);

  it('honest: each is served as a request without claims: openid-client signs in and receives no user data', async () => {
    for (const claims of NOT_UNDERSTOOD) {
      const flow = await runCodeFlow(running.issuer, rsa.metadata, { configure: rsa.configure, params: { claims: JSON.stringify(claims) } });
      expect([claims, userData(flow.claims), userData(flow.userinfo)]).toEqual([claims, {}, {}]);
    }
  });

  it('honest: the same in a pushed request (RFC 9126) and in a signed request object (RFC 9101)', async () => {
    const config = await signing.config();
    for (const claims of NOT_UNDERSTOOD) {
      const verifier = oidc.randomPKCECodeVerifier();
      const nonce = oidc.randomNonce();
      const params = { redirect_uri: 'https://rp.example/cb', scope: 'openid', nonce, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', claims: JSON.stringify(claims) };
      const pushed = await completeFlow(config, await oidc.buildAuthorizationUrlWithPAR(config, params), verifier, nonce);
      expect([claims, userData(pushed.claims)]).toEqual([claims, {}]);
      const request = await signRequestObject(signing, running.issuer, { ...params, response_type: 'code', claims });
      const byValue = await completeFlow(config, new URL(authorizationUrl(running.issuer, { client_id: String(signing.metadata.client_id), request })), verifier, nonce);
      expect([claims, userData(byValue.claims)]).toEqual([claims, {}]);
    }
  });

  it('attack: a value hidden in a member not understood is stored nowhere, beside a channel or alone, pushed or not', async () => {
    const sentinel = 'erika.mustermann@example.com';
    const hidden = { later: { email: { value: sentinel } } };
    for (const claims of [hidden, { ...hidden, id_token: { email: null } }]) {
      const pushed = await fetch(`${running.issuer}/par`, {
        method: 'POST',
        headers: { authorization: basicAuthorization(String(rsa.metadata.client_id), String(rsa.metadata.client_secret), { formEncoded: true }), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(registeredClientParams(rsa, { claims: JSON.stringify(claims) })).toString(),
      });
      expect(pushed.status).toBe(201);
      expect((await outcomeOf(registeredClientUrl(running.issuer, rsa, { claims: JSON.stringify(claims) }))).interaction).toEqual(expect.stringContaining('/interaction/'));
    }
    expect(await stored('PushedAuthorizationRequest')).not.toContain(sentinel);
    expect(await stored('Interaction')).not.toContain(sentinel);
  });

  it('attack: the budget holds for such a parameter too, and a channel that is not an object is still refused (invalid_request, nothing stored)', async () => {
    const interactions = await stored('Interaction');
    const oversized = await outcomeOf(registeredClientUrl(running.issuer, rsa, { claims: JSON.stringify({ later: 'x'.repeat(9000) }) }));
    expect(oversized).toMatchObject({ error: 'invalid_request', state: 'st' });
    const notAnObject = await outcomeOf(registeredClientUrl(running.issuer, rsa, { claims: JSON.stringify({ id_token: null }) }));
    expect(notAnObject).toMatchObject({ error: 'invalid_request', description: 'claims.id_token should be an object', state: 'st' });
    for (const claims of ['[]', 'null', '"text"']) expect((await outcomeOf(registeredClientUrl(running.issuer, rsa, { claims }))).error).toBe('invalid_request');
    expect(await stored('Interaction')).toBe(interactions);
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CompactEncrypt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, UnsecuredJWT, type JWK } from 'jose';
import * as oidc from 'openid-client';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createStore, generateProviderKeys, loadSettings } from '../../lib/index.js';
import { validateProviderKeys } from '../../lib/provider/keys.js';
import { pairwiseSubOf, startApp, type RunningApp } from '../helpers/app.js';
import { clockAt } from '../helpers/clock.js';
import { pkcePair, userData } from '../helpers/flow.js';
import { bracketFlood } from '../helpers/claims-requests.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import {
  completeFlow,
  encryptRequestObject,
  outcomeOf,
  registerSigningClient,
  signingKey,
  signRequestObject,
  type RequestEncryptionAlg,
  type RequestObjectFlow,
  type SigningClient,
} from '../helpers/request-objects.js';

const REDIRECT = 'https://rp.example/cb';

describe('request objects by value (RFC 9101, C3)', () => {
  let running: RunningApp;
  let store: CountingStore;
  /** request_object_signing_alg PS256 */
  let ps: SigningClient;
  /** request_object_signing_alg ES256 */
  let es: SigningClient;
  /** no request_object_signing_alg: any offered alg */
  let free: SigningClient;
  /** request_object_encryption_alg RSA-OAEP-256, enc A256GCM */
  let sealed: SigningClient;
  /** require_signed_request_object */
  let strict: SigningClient;

  beforeAll(async () => {
    store = countingStore(createStore(loadSettings({ env: {}, properties: {} }).redis));
    running = await startApp({ store, claimModules: createDemoClaimModules() });
    [ps, es, free, sealed, strict] = await Promise.all([
      registerSigningClient(running, { request_object_signing_alg: 'PS256' }),
      registerSigningClient(running, { request_object_signing_alg: 'ES256' }, 'ES256'),
      registerSigningClient(running, {}, 'RS256'),
      registerSigningClient(running, { request_object_signing_alg: 'PS256', request_object_encryption_alg: 'RSA-OAEP-256', request_object_encryption_enc: 'A256GCM' }),
      registerSigningClient(running, { require_signed_request_object: true }),
    ]);
  });
  afterAll(async () => running.close());

  /** Signs `params` (plus PKCE, nonce, redirect_uri, scope) into a request object with openid-client; optionally encrypts it. */
  const jarUrl = async (client: SigningClient, params: Record<string, string>, encrypt?: RequestEncryptionAlg): Promise<{ url: URL; config: oidc.Configuration; verifier: string; nonce: string }> => {
    const config = await client.config();
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const url = await oidc.buildAuthorizationUrlWithJAR(
      config,
      { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', nonce, ...params },
      { key: client.signingKey, kid: client.kid },
    );
    if (encrypt) url.searchParams.set('request', await encryptRequestObject(running.issuer, url.searchParams.get('request') as string, encrypt));
    return { url, config, verifier, nonce };
  };

  /** Runs the whole flow with a request object by value: sign in, redeem, decrypt, UserInfo. */
  const jarFlow = async (client: SigningClient, params: Record<string, string>, encrypt?: RequestEncryptionAlg): Promise<RequestObjectFlow> => {
    const { url, config, verifier, nonce } = await jarUrl(client, params, encrypt);
    return completeFlow(config, url, verifier, nonce);
  };

  /** An /authorize URL carrying `request` (and the client id) only. */
  const byValue = (client: SigningClient, request: string, extra: Record<string, string> = {}): URL => {
    const url = new URL(`${running.issuer}/authorize`);
    url.searchParams.set('client_id', client.metadata.client_id);
    url.searchParams.set('request', request);
    for (const [k, v] of Object.entries(extra)) url.searchParams.set(k, v);
    return url;
  };
  /** Pushes `request` to /par for `client` (client_secret_basic). */
  const pushRequestObject = (client: SigningClient, request: string): Promise<Response> =>
    fetch(`${running.issuer}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${client.metadata.client_id}:${String(client.metadata.client_secret)}`)}` },
      body: new URLSearchParams({ client_id: client.metadata.client_id, request }).toString(),
    });
  /** A complete, valid set of authorization parameters for a hand-made request object. */
  const goodParams = (): Record<string, unknown> => ({
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'st-ro',
  });

  describe('accepted', () => {
    it.each([
      ['PS256', () => ps],
      ['ES256', () => es],
      ['RS256 (no request_object_signing_alg registered)', () => free],
    ])('a request object signed %s, built by openid-client: the URL holds client_id and request only, the flow delivers the claims', async (_name, client) => {
      const flow = await jarFlow(client(), { scope: 'openid email' });
      expect([...flow.url.searchParams.keys()].sort()).toEqual(['client_id', 'request']);
      expect(userData(flow.claims)).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
      expect(userData(flow.userinfo)).toEqual({});
    });

    it.each<[RequestEncryptionAlg, () => SigningClient]>([
      ['RSA-OAEP-256', () => sealed],
      ['ECDH-ES', () => free],
      ['ECDH-ES+A128KW', () => free],
      ['RSA-OAEP', () => ps],
    ])('a signed request object encrypted %s to the provider key: decrypted, verified, served', async (alg, client) => {
      const flow = await jarFlow(client(), { scope: 'openid profile', claims: JSON.stringify({ userinfo: { 'svc.ver.[driverslicense,idcard].l3.nfc': { essential: true } } }) }, alg);
      const request = flow.url.searchParams.get('request') as string;
      expect(request.split('.')).toHaveLength(5);
      expect(decodeProtectedHeader(request)).toMatchObject({ alg, enc: 'A256GCM', cty: 'JWT' });
      expect(userData(flow.claims)).toMatchObject({ name: 'Erika Mustermann' });
      expect(Object.keys(userData(flow.userinfo))).toEqual(['svc.ver.idcard.l3.nfc']);
    });

    it('ignores an id_token_hint inside the request object, whatever its form (C3)', async () => {
      const flow = await jarFlow(ps, { id_token_hint: 'a.b.c.d.e', scope: 'openid email' });
      expect(userData(flow.claims)).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
      const garbage = await jarFlow(ps, { id_token_hint: 'not a token at all' });
      expect(garbage.claims.sub).toBe(pairwiseSubOf((ps.metadata.redirect_uris as string[])[0] as string));
    });

    it('honest: a client whose clock runs up to 15 s ahead (the tolerance oidc-provider gives its nbf), dating the longest hour from it (iat = nbf = its now, exp an hour later, as FAPI allows): served, by value and pushed', async () => {
      const clock = clockAt(Math.floor(Date.now() / 1000) * 1000 + 500);
      try {
        for (const skew of [1, 5, 15]) {
          const itsNow = Math.floor(Date.now() / 1000) + skew;
          const jws = await signRequestObject(ps, running.issuer, { ...goodParams(), iat: itsNow, nbf: itsNow, exp: itsNow + 3600 });
          expect({ skew, interaction: Boolean((await outcomeOf(byValue(ps, jws))).interaction) }).toEqual({ skew, interaction: true });
          expect({ skew, status: (await pushRequestObject(ps, jws)).status }).toEqual({ skew, status: 201 });
        }
      } finally {
        clock.restore();
      }
    });

    it('serves a client with require_signed_request_object when it sends one', async () => {
      const flow = await jarFlow(strict, { scope: 'openid email' });
      expect(userData(flow.claims)).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
    });
  });

  describe('refused with the exact OAuth error', () => {
    const refused = async (url: URL | string): Promise<{ error?: string; description?: string }> => {
      const { error, description } = await outcomeOf(url);
      return { error, description };
    };

    it('alg none: invalid_request_object, unsupported alg', async () => {
      const now = Math.floor(Date.now() / 1000);
      const none = new UnsecuredJWT({ ...goodParams(), client_id: free.metadata.client_id, iss: free.metadata.client_id, aud: running.issuer, exp: now + 60 }).encode();
      expect(await refused(byValue(free, none))).toEqual({ error: 'invalid_request_object', description: 'unsupported signed request alg' });
    });

    it('HS256 with the client secret: invalid_request_object, unsupported alg (no symmetric algorithms)', async () => {
      const now = Math.floor(Date.now() / 1000);
      const hs = await new SignJWT({ ...goodParams(), client_id: free.metadata.client_id, iss: free.metadata.client_id, aud: running.issuer, exp: now + 60 })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode(free.metadata.client_secret));
      expect(await refused(byValue(free, hs))).toEqual({ error: 'invalid_request_object', description: 'unsupported signed request alg' });
    });

    it('signed with a key the client never registered (its kid or another): invalid_request_object', async () => {
      const stranger = await signingKey('PS256');
      for (const kid of [ps.kid, 'someone-else']) {
        const jws = await signRequestObject(ps, running.issuer, goodParams(), { key: stranger.privateKey, kid });
        expect(await refused(byValue(ps, jws))).toEqual({ error: 'invalid_request_object', description: 'could not validate Request Object' });
      }
    });

    it('signed with another alg than the registered request_object_signing_alg: invalid_request_object', async () => {
      // The registered PS256 key, used for RS256 (what the client registered it for is PS256).
      const rs256 = (await importJWK(await exportJWK(ps.signingKey), 'RS256')) as CryptoKey;
      const jws = await signRequestObject(ps, running.issuer, goodParams(), { alg: 'RS256', key: rs256 });
      expect(await refused(byValue(ps, jws))).toEqual({ error: 'invalid_request_object', description: 'the preregistered alg must be used in request or request_uri' });
    });

    it('expired, not yet valid, for another audience or from another issuer: invalid_request_object', async () => {
      const now = Math.floor(Date.now() / 1000);
      const cases: Record<string, unknown>[] = [
        { exp: now - 120 },
        { nbf: now + 600 },
        { aud: 'https://other-provider.example/oidc/v1' },
        { aud: [`${running.issuer}/`] },
        { iss: es.metadata.client_id },
      ];
      for (const claims of cases) {
        const jws = await signRequestObject(ps, running.issuer, { ...goodParams(), ...claims });
        expect({ claims, ...(await refused(byValue(ps, jws))) }).toEqual({ claims, error: 'invalid_request_object', description: 'Request Object claims are invalid' });
      }
    });

    it('without exp, or living longer than an hour: invalid_request_object', async () => {
      const now = Math.floor(Date.now() / 1000);
      const noExp = await signRequestObject(ps, running.issuer, { ...goodParams(), exp: undefined });
      expect(await refused(byValue(ps, noExp))).toEqual({ error: 'invalid_request_object', description: 'the request object must carry exp (at most 3600 seconds ahead)' });
      const long = await signRequestObject(ps, running.issuer, { ...goodParams(), exp: now + 7200 });
      const answer = await refused(byValue(ps, long));
      expect(answer.error).toBe('invalid_request_object');
      expect(answer.description).toMatch(/^the request object expires 7\d{3} seconds from now; at most 3600 are allowed$/);
    });

    it('expiring more than an hour and 15 s from now, by value or pushed: invalid_request_object, nothing stored', async () => {
      const clock = clockAt(Math.floor(Date.now() / 1000) * 1000 + 500);
      try {
        const now = Math.floor(Date.now() / 1000);
        const jws = await signRequestObject(ps, running.issuer, { ...goodParams(), iat: now + 16, nbf: now + 15, exp: now + 3616 });
        const description = 'the request object expires 3616 seconds from now; at most 3600 are allowed';
        expect(await refused(byValue(ps, jws))).toEqual({ error: 'invalid_request_object', description });
        const writes = store.writes('PushedAuthorizationRequest');
        const pushed = await pushRequestObject(ps, jws);
        expect({ status: pushed.status, ...((await pushed.json()) as object) }).toEqual({ status: 400, error: 'invalid_request_object', error_description: description });
        expect(store.writes('PushedAuthorizationRequest')).toBe(writes);
      } finally {
        clock.restore();
      }
    });

    it('for another client (client_id differs from the request object): invalid_request_object', async () => {
      const jws = await signRequestObject(ps, running.issuer, goodParams());
      expect(await refused(byValue(es, jws))).toEqual({ error: 'invalid_request_object', description: 'request client_id must equal the one in request parameters' });
    });

    it('encrypted with another alg or enc than the client registered: invalid_request_object', async () => {
      const jws = await signRequestObject(sealed, running.issuer, goodParams());
      expect(await refused(byValue(sealed, await encryptRequestObject(running.issuer, jws, 'ECDH-ES')))).toEqual({
        error: 'invalid_request_object',
        description: 'the request object is encrypted with ECDH-ES, but the client registered request_object_encryption_alg RSA-OAEP-256',
      });
      expect(await refused(byValue(sealed, await encryptRequestObject(running.issuer, jws, 'RSA-OAEP-256', 'A128CBC-HS256')))).toEqual({
        error: 'invalid_request_object',
        description: 'the request object is encrypted with enc A128CBC-HS256, but the client registered request_object_encryption_enc A256GCM',
      });
    });

    it('encrypted to a key the provider does not hold, or garbage in five parts: invalid_request_object', async () => {
      const jws = await signRequestObject(free, running.issuer, goodParams());
      const foreign = await generateKeyPair('RSA-OAEP-256', { modulusLength: 2048 });
      const sealedElsewhere = await new CompactEncrypt(new TextEncoder().encode(jws)).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' }).encrypt(foreign.publicKey);
      expect(await refused(byValue(free, sealedElsewhere))).toEqual({ error: 'invalid_request_object', description: 'could not decrypt request object' });
      expect(await refused(byValue(free, 'a.b.c.d.e'))).toEqual({ error: 'invalid_request_object', description: 'could not decrypt request object' });
    });

    it('symmetric encryption keyed by the client secret (dir, A128KW): invalid_request_object', async () => {
      const jws = await signRequestObject(free, running.issuer, goodParams());
      const secret = new TextEncoder().encode((free.metadata.client_secret as string).slice(0, 32));
      const dir = await new CompactEncrypt(new TextEncoder().encode(jws)).setProtectedHeader({ alg: 'dir', enc: 'A256GCM' }).encrypt(secret);
      expect(await refused(byValue(free, dir))).toEqual({ error: 'invalid_request_object', description: 'could not decrypt request object' });
      const kw = await new CompactEncrypt(new TextEncoder().encode(jws)).setProtectedHeader({ alg: 'A128KW', enc: 'A128GCM' }).encrypt(secret.slice(0, 16));
      expect(await refused(byValue(free, kw))).toEqual({ error: 'invalid_request_object', description: 'could not decrypt request object' });
    });

    it('the same checks when the request object comes in a POST form body', async () => {
      const post = async (client: SigningClient, request: string): Promise<{ error?: string; description?: string; interaction?: boolean }> => {
        const body = new URLSearchParams({ client_id: client.metadata.client_id, request }).toString();
        const outcome = await outcomeOf(`${running.issuer}/authorize`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
        return outcome.interaction ? { interaction: true } : { error: outcome.error, description: outcome.description };
      };
      const jws = await signRequestObject(sealed, running.issuer, goodParams());
      expect((await post(sealed, await encryptRequestObject(running.issuer, jws, 'RSA-OAEP-256'))).interaction).toBeDefined();
      expect(await post(sealed, await encryptRequestObject(running.issuer, jws, 'ECDH-ES'))).toEqual({
        error: 'invalid_request_object',
        description: 'the request object is encrypted with ECDH-ES, but the client registered request_object_encryption_alg RSA-OAEP-256',
      });
      const now = Math.floor(Date.now() / 1000);
      expect(await post(ps, await signRequestObject(ps, running.issuer, { ...goodParams(), exp: now - 120 }))).toEqual({ error: 'invalid_request_object', description: 'Request Object claims are invalid' });
    });

    it('a client with require_signed_request_object sending plain parameters: invalid_request', async () => {
      const url = new URL(`${running.issuer}/authorize`);
      for (const [k, v] of Object.entries({ ...goodParams(), client_id: strict.metadata.client_id })) url.searchParams.set(k, String(v));
      expect(await outcomeOf(url)).toMatchObject({ error: 'invalid_request', description: 'Request Object must be used by this client', state: 'st-ro' });
    });

    it('request_uri pointing at a relying party server: request_uri_not_supported (no fetch, no SSRF)', async () => {
      const url = new URL(`${running.issuer}/authorize`);
      for (const [k, v] of Object.entries({ ...goodParams(), client_id: ps.metadata.client_id, request_uri: 'https://rp.example/request.jwt' })) url.searchParams.set(k, String(v));
      expect((await outcomeOf(url)).error).toBe('request_uri_not_supported');
    });
  });

  describe('every check applies inside the request object exactly as in the query', () => {
    /** Sends a request object with `params` replacing the good ones (undefined removes one). */
    const inObject = async (params: Record<string, unknown>, outer: Record<string, string> = {}) => {
      const merged = { ...goodParams(), ...params };
      const jws = await signRequestObject(ps, running.issuer, merged);
      return outcomeOf(byValue(ps, jws, outer));
    };

    it('PKCE missing inside the object is invalid_request, even with a code_challenge outside it', async () => {
      const outcome = await inObject({ code_challenge: undefined, code_challenge_method: undefined }, { code_challenge: pkcePair().challenge, code_challenge_method: 'S256', response_type: 'code' });
      expect(outcome).toMatchObject({ error: 'invalid_request', state: 'st-ro' });
      expect(outcome.description).toContain('PKCE');
    });

    it('code_challenge_method plain is invalid_request', async () => {
      expect(await inObject({ code_challenge_method: 'plain' })).toMatchObject({ error: 'invalid_request', state: 'st-ro' });
    });

    it('scope without openid is invalid_scope; prompt=select_account is invalid_request; response_type token is unsupported_response_type', async () => {
      expect(await inObject({ scope: 'email' })).toMatchObject({ error: 'invalid_scope', state: 'st-ro' });
      expect(await inObject({ prompt: 'select_account' })).toMatchObject({ error: 'invalid_request', state: 'st-ro' });
      expect(await inObject({ response_type: 'token' })).toMatchObject({ error: 'unsupported_response_type', state: 'st-ro' });
    });

    it('an unregistered redirect_uri inside the object is never redirected to', async () => {
      const outcome = await inObject({ redirect_uri: 'https://attacker.example/cb' });
      expect(outcome.error).toBe('invalid_redirect_uri');
      expect(outcome.status).toBe(400);
    });

    it('the claims parameter inside the object: values refused, malformed names named, budget enforced, nothing stored', async () => {
      const interactions = store.writes('Interaction');
      expect(await inObject({ claims: { userinfo: { email: { values: ['a'] } } } })).toMatchObject({
        error: 'invalid_request',
        description: 'claims.userinfo.email: the values member is not supported (request one value with value)',
        state: 'st-ro',
      });
      expect((await inObject({ claims: { userinfo: { 'svc.ver.[mobile,': null } } })).error).toBe('invalid_request');
      const flood = await inObject({ claims: { userinfo: bracketFlood(3) } });
      expect(flood).toMatchObject({ error: 'invalid_request', state: 'st-ro' });
      expect(flood.description).toBe("the claims parameter expands to 387 claim names; at most 256 are allowed");
      expect(store.writes('Interaction')).toBe(interactions);
    });

    it('outside the object: a response_type other than its own is invalid_request_object (OpenID Connect Core 6.1: they must match); scope, prompt, max_age and state are neither honoured nor stored', async () => {
      expect(await inObject({}, { response_type: 'code id_token', redirect_uri: REDIRECT, state: 'outer' })).toMatchObject({
        error: 'invalid_request_object',
        description: 'request response_type must equal the one in request parameters',
        state: 'st-ro',
      });
      const interactions = store.writes('Interaction');
      const outcome = await inObject({}, { response_type: 'code', scope: 'openid email profile', prompt: 'none', max_age: '0', state: 'outer' });
      expect(outcome.interaction).toMatch(/\/interaction\//);
      const params = (JSON.parse(store.written('Interaction').slice(interactions).join('') || '{}') as { params?: Record<string, unknown> }).params ?? {};
      expect([params.scope, params.state, params.prompt, params.max_age]).toEqual(['openid', 'st-ro', undefined, undefined]);
    });

    it('an accepted request object leads to the login page (the control case)', async () => {
      expect((await inObject({})).interaction).toMatch(/\/interaction\//);
    });
  });
});

describe('request objects encrypted to the provider during a key rotation', () => {
  let running: RunningApp;
  let client: SigningClient;
  /** The provider's RSA decryption key of each rotation state, and one dropped by an earlier rotation. */
  const rsaEnc: Partial<Record<'retiring' | 'current' | 'next' | 'dropped', JWK>> = {};

  beforeAll(async () => {
    const [retiring, current, next, dropped] = await Promise.all([generateProviderKeys(), generateProviderKeys(), generateProviderKeys(), generateProviderKeys()]);
    const sets = { retiring, current, next, dropped };
    for (const [state, set] of Object.entries(sets)) rsaEnc[state as keyof typeof sets] = set.keys.find((k) => k.use === 'enc' && k.kty === 'RSA');
    const file = { keys: [...retiring.keys.map((k) => ({ ...k, svc_state: 'retiring', svc_since: 1 })), ...current.keys, ...next.keys.map((k) => ({ ...k, svc_state: 'next', svc_since: 1 }))] };
    running = await startApp({ jwks: validateProviderKeys(file, 'rotated keys'), claimModules: createDemoClaimModules() });
    client = await registerSigningClient(running, { request_object_signing_alg: 'PS256', request_object_encryption_alg: 'RSA-OAEP-256', request_object_encryption_enc: 'A256GCM' });
  });
  afterAll(async () => running.close());

  /** Where an authorization request ends whose signed request object is encrypted to `key` (with its kid in the header, or without). */
  const sealedTo = async (key: JWK | undefined, withKid: boolean): Promise<{ error?: string; interaction?: string }> => {
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicKey } = key as JWK;
    const jws = await signRequestObject(client, running.issuer, { response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'st-rot' });
    const header = { alg: 'RSA-OAEP-256', enc: 'A256GCM', cty: 'JWT', ...(withKid ? { kid: publicKey.kid } : {}) };
    const jwe = await new CompactEncrypt(new TextEncoder().encode(jws)).setProtectedHeader(header).encrypt(await importJWK(publicKey, 'RSA-OAEP-256'));
    const url = new URL(`${running.issuer}/authorize`);
    url.searchParams.set('client_id', client.metadata.client_id);
    url.searchParams.set('request', jwe);
    const { error, interaction } = await outcomeOf(url);
    return { error, interaction };
  };

  it.each([true, false])('honest: to the retiring key a relying party cached, to the current and to the next key (kid in the header: %s), it is decrypted', async (withKid) => {
    for (const state of ['retiring', 'current', 'next'] as const) expect(await sealedTo(rsaEnc[state], withKid)).toEqual({ error: undefined, interaction: expect.stringMatching(/\/interaction\//) });
  });

  it('to a key an earlier rotation dropped: invalid_request_object', async () => {
    for (const withKid of [true, false]) expect(await sealedTo(rsaEnc.dropped, withKid)).toEqual({ error: 'invalid_request_object', interaction: undefined });
  });
});

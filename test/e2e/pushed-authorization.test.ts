import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt, decodeProtectedHeader, SignJWT, UnsecuredJWT } from 'jose';
import * as oidc from 'openid-client';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createStore, loadSettings } from '../../lib/index.js';
import { PUSHED_REQUEST_USE_MODEL } from '../../lib/provider/pushed-requests.js';
import { REPLAY_DETECTION_MODEL } from '../../lib/provider/replay-detection.js';
import { MODEL_NAMES } from '../../lib/seams.js';
import { hashClientSecret } from '../../lib/registration/client-secrets.js';
import { pairwiseSubOf, startApp, type RunningApp } from '../helpers/app.js';
import { clockAhead } from '../helpers/clock.js';
import { pkcePair, signIn, userData } from '../helpers/flow.js';
import { bracketFlood } from '../helpers/claims-requests.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { deletePrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';
import { completeFlow, encryptRequestObject, outcomeOf, registerSigningClient, signRequestObject, type RequestEncryptionAlg, type RequestObjectFlow, type SigningClient } from '../helpers/request-objects.js';

const REDIRECT = 'https://rp.example/cb';
const URN = 'urn:ietf:params:oauth:request_uri:';
/** A requested value unique to this suite: finding it in the store means a leak. */
const SENTINEL = 'erika.mustermann@example.com';

/** The HTTP answer of a push. */
interface Pushed {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('pushed authorization requests (RFC 9126, C2, C3)', () => {
  let running: RunningApp;
  let store: CountingStore;
  /** client_secret_basic; request objects PS256, encrypted RSA-OAEP-256 */
  let viaBasic: SigningClient;
  /** client_secret_post */
  let viaPost: SigningClient;
  /** private_key_jwt */
  let viaJwt: SigningClient;
  /** require_pushed_authorization_requests */
  let parOnly: SigningClient;

  beforeAll(async () => {
    store = countingStore(createStore(loadSettings({ env: {}, properties: {} }).redis));
    running = await startApp({ store, claimModules: createDemoClaimModules() });
    [viaBasic, viaPost, viaJwt, parOnly] = await Promise.all([
      registerSigningClient(running, { request_object_signing_alg: 'PS256', request_object_encryption_alg: 'RSA-OAEP-256', request_object_encryption_enc: 'A256GCM' }),
      registerSigningClient(running, { token_endpoint_auth_method: 'client_secret_post' }),
      registerSigningClient(running, { token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'PS256' }),
      registerSigningClient(running, { require_pushed_authorization_requests: true }),
    ]);
  });
  afterAll(async () => running.close());

  /** Pushes `params` with openid-client (optionally as a signed, perhaps encrypted request object), then runs the flow. */
  const parFlow = async (
    client: SigningClient,
    params: Record<string, string>,
    options: { jar?: boolean; encrypt?: RequestEncryptionAlg; login?: string } = {},
  ): Promise<RequestObjectFlow> => {
    const config = await client.config();
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    let pushed: URLSearchParams | Record<string, string> = {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
      ...params,
    };
    if (options.jar || options.encrypt) {
      pushed = (await oidc.buildAuthorizationUrlWithJAR(config, pushed, { key: client.signingKey, kid: client.kid })).searchParams;
      if (options.encrypt) pushed.set('request', await encryptRequestObject(running.issuer, pushed.get('request') as string, options.encrypt));
    }
    return completeFlow(config, await oidc.buildAuthorizationUrlWithPAR(config, pushed), verifier, nonce, options.login);
  };

  /** A push by hand: `fields` as the form body, client_secret_basic unless `authorization` says otherwise. */
  const push = async (client: SigningClient, fields: Record<string, string | undefined>, authorization: string | null = basic(client.metadata.client_id, client.metadata.client_secret as string)): Promise<Pushed> => {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) body.set(k, v);
    const response = await fetch(`${running.issuer}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
      body: body.toString(),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, headers: response.headers };
  };
  /** Valid pushed parameters of `client` (oidc-provider wants `client_id` in the body, as OAuth does). */
  const goodFields = (extra: Record<string, string | undefined> = {}, client: SigningClient = viaBasic): Record<string, string | undefined> => ({
    client_id: client.metadata.client_id,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'st-par',
    ...extra,
  });
  const authorizeWith = (clientId: string, requestUri: string): URL => {
    const url = new URL(`${running.issuer}/authorize`);
    url.searchParams.set('client_id', clientId);
    url.searchParams.set('request_uri', requestUri);
    return url;
  };
  /** Writes of pushed requests and their use marks so far (to assert that nothing was stored). */
  const pushedWrites = (): number[] => [store.writes(MODEL_NAMES.pushedAuthorizationRequest), store.writes(PUSHED_REQUEST_USE_MODEL)];

  describe('the flow', () => {
    it.each([
      ['client_secret_basic', () => viaBasic],
      ['client_secret_post', () => viaPost],
      ['private_key_jwt', () => viaJwt],
    ])('without a request object (%s): the browser URL holds client_id and request_uri only, the flow delivers the claims', async (_name, client) => {
      const flow = await parFlow(client(), { scope: 'openid email' });
      expect([...flow.url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
      expect(flow.url.searchParams.get('request_uri')).toMatch(new RegExp(`^${URN}[A-Za-z0-9_-]+$`));
      expect(userData(flow.claims)).toEqual({ email: SENTINEL, email_verified: true });
      expect(userData(flow.userinfo)).toEqual({});
    });

    it('with a signed request object', async () => {
      const flow = await parFlow(viaJwt, { scope: 'openid profile' }, { jar: true });
      expect([...flow.url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
      expect(userData(flow.claims)).toMatchObject({ name: 'Erika Mustermann' });
    });

    it.each<[RequestEncryptionAlg, () => SigningClient]>([
      ['RSA-OAEP-256', () => viaBasic],
      ['ECDH-ES', () => viaPost],
    ])('with a signed request object encrypted %s to the provider', async (alg, client) => {
      const claims = JSON.stringify({ userinfo: { email: { essential: true, value: SENTINEL } } });
      const flow = await parFlow(client(), { claims }, { encrypt: alg });
      expect([...flow.url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
      expect(userData(flow.userinfo)).toEqual({ email: SENTINEL });
    });

    it('answers 201 with a request_uri valid 60 seconds, never cached', async () => {
      const pushed = await push(viaBasic, goodFields());
      expect(pushed.status).toBe(201);
      expect(pushed.body).toEqual({ request_uri: expect.stringMatching(new RegExp(`^${URN}`)) as unknown, expires_in: 60 });
      expect(pushed.headers.get('cache-control')).toBe('no-store');
    });

    it('answers a request by any method but POST with 405 and Allow: POST (RFC 9126 2.3), as OAuth JSON, storing nothing', async () => {
      const before = pushedWrites();
      const fields = new URLSearchParams(goodFields() as Record<string, string>).toString();
      const authorization = basic(viaBasic.metadata.client_id, viaBasic.metadata.client_secret as string);
      for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH']) {
        const withBody = method !== 'GET' && method !== 'HEAD';
        const response = await fetch(`${running.issuer}/par${withBody ? '' : `?${fields}`}`, {
          method,
          headers: { authorization, ...(withBody ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
          ...(withBody ? { body: fields } : {}),
        });
        const body = method === 'HEAD' ? {} : ((await response.json()) as Record<string, unknown>);
        expect([method, response.status, response.headers.get('allow'), response.headers.get('cache-control')]).toEqual([method, 405, 'POST', 'no-store']);
        if (method !== 'HEAD') expect(body.error).toBe('method_not_allowed');
      }
      expect(pushedWrites()).toEqual(before);
    });

    it('answers 405 on every spelling of the path oidc-provider serves the push at (any letter case, one trailing slash), and 404 on others', async () => {
      const outcomes: string[] = [];
      for (const path of ['/PAR', '/Par/', '/par/', '/par//', '/%70ar']) {
        const served = await fetch(`${running.issuer}${path}`, { method: 'POST', headers: { authorization: basic(viaBasic.metadata.client_id, viaBasic.metadata.client_secret as string), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(goodFields() as Record<string, string>).toString() });
        const before = pushedWrites();
        const got = await fetch(`${running.issuer}${path}`);
        expect(pushedWrites()).toEqual(before);
        outcomes.push(`${path} POST ${served.status} GET ${got.status} ${String(got.headers.get('allow'))}`);
      }
      expect(outcomes).toEqual(['/PAR POST 201 GET 405 POST', '/Par/ POST 201 GET 405 POST', '/par/ POST 201 GET 405 POST', '/par// POST 404 GET 404 null', '/%70ar POST 404 GET 404 null']);
    });

    it('honest: the same push by POST is served, and a CORS preflight from the client\'s origin is answered', async () => {
      expect((await push(viaBasic, goodFields())).status).toBe(201);
      const preflight = await fetch(`${running.issuer}/par`, { method: 'OPTIONS', headers: { origin: 'https://rp.example', 'access-control-request-method': 'POST' } });
      expect([preflight.status, preflight.headers.get('access-control-allow-methods')]).toEqual([204, 'POST']);
    });

    it('ignores id_token_hint in the pushed form and inside a pushed request object (C3)', async () => {
      const pushed = await push(viaBasic, goodFields({ id_token_hint: 'a.b.c.d.e' }));
      expect(pushed.status).toBe(201);
      expect((await outcomeOf(authorizeWith(viaBasic.metadata.client_id, pushed.body.request_uri as string))).interaction).toBeDefined();
      const flow = await parFlow(viaJwt, { id_token_hint: 'a.b.c.d.e' }, { jar: true });
      expect(flow.claims.sub).toBe(pairwiseSubOf((viaJwt.metadata.redirect_uris as string[])[0] as string));
    });
  });

  describe('requested values through PAR (C5): honoured, never stored', () => {
    it('matching values are delivered, a mismatched essential value is access_denied, with and without a request object', async () => {
      const matching = JSON.stringify({ userinfo: { email: { essential: true, value: SENTINEL } }, id_token: { name: { value: 'Somebody Else' } } });
      for (const options of [{}, { jar: true }]) {
        const flow = await parFlow(viaJwt, { claims: matching, scope: 'openid' }, options);
        expect(userData(flow.userinfo)).toEqual({ email: SENTINEL });
        expect(userData(flow.claims)).toEqual({});
      }
      const config = await viaJwt.config();
      const mismatched = await oidc.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: REDIRECT,
        scope: 'openid',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        state: 'st-value',
        claims: JSON.stringify({ userinfo: { email: { essential: true, value: 'someone-else@example.com' } } }),
      });
      const { callbackUrl } = await signIn(mismatched.href);
      expect(Object.fromEntries(callbackUrl.searchParams)).toMatchObject({ error: 'access_denied', state: 'st-value' });
    });

    it('stores the checked parameters (claims in stored form, values as MACs), never the request object or a value', async () => {
      const claims = { userinfo: { email: { essential: true, value: SENTINEL } } };
      const jws = await signRequestObject(viaBasic, running.issuer, { ...goodFields(), claims, nonce: 'n-1' });
      for (const request of [jws, await encryptRequestObject(running.issuer, jws, 'RSA-OAEP-256')]) {
        const pushed = await push(viaBasic, { request });
        expect(pushed.status).toBe(201);
        const id = (pushed.body.request_uri as string).slice(URN.length);
        const record = await store.adapter(MODEL_NAMES.pushedAuthorizationRequest).find(id);
        const text = JSON.stringify(record);
        expect(text).not.toContain(SENTINEL);
        expect(text).not.toContain(jws.split('.')[2]);
        const stored = (record as { request: string }).request;
        expect(decodeProtectedHeader(stored).alg).toBe('none');
        const payload = decodeJwt(stored);
        expect(payload).toMatchObject({ iss: viaBasic.metadata.client_id, aud: running.issuer, client_id: viaBasic.metadata.client_id, nonce: 'n-1', code_challenge_method: 'S256' });
        expect(JSON.stringify(payload.claims)).toMatch(/"email":\{"essential":true,"svc_mac":"[A-Za-z0-9_-]+"\}/);
      }
    });
  });

  describe('single use, short-lived, bound to the client', () => {
    it('a request_uri used once at /authorize is invalid_request_uri the second time', async () => {
      const pushed = await push(viaBasic, goodFields());
      const url = authorizeWith(viaBasic.metadata.client_id, pushed.body.request_uri as string);
      expect((await outcomeOf(url)).interaction).toBeDefined();
      expect(await outcomeOf(url)).toMatchObject({ error: 'invalid_request_uri', description: 'request_uri is invalid, expired, or was already used' });
    });

    it('of concurrent uses of one request_uri exactly one gets through', async () => {
      const pushed = await push(viaBasic, goodFields());
      const url = authorizeWith(viaBasic.metadata.client_id, pushed.body.request_uri as string);
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => outcomeOf(url)));
      expect(outcomes.filter((o) => o.interaction !== undefined)).toHaveLength(1);
      expect(outcomes.filter((o) => o.error === 'invalid_request_uri')).toHaveLength(7);
    });

    it('a request_uri that completed a flow cannot start another', async () => {
      const config = await viaBasic.config();
      const verifier = oidc.randomPKCECodeVerifier();
      const url = await oidc.buildAuthorizationUrlWithPAR(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const { callbackUrl } = await signIn(url.href);
      expect(callbackUrl.searchParams.get('code')).toBeTruthy();
      expect((await outcomeOf(url)).error).toBe('invalid_request_uri');
    });

    it("another client's request_uri is invalid_request_uri and stays usable by its own client", async () => {
      const pushed = await push(viaBasic, goodFields());
      const requestUri = pushed.body.request_uri as string;
      expect(await outcomeOf(authorizeWith(viaPost.metadata.client_id, requestUri))).toMatchObject({ error: 'invalid_request_uri', description: 'request_uri was pushed by another client' });
      expect((await outcomeOf(authorizeWith(viaBasic.metadata.client_id, requestUri))).interaction).toBeDefined();
    });

    it('parameters beside a request_uri at /authorize are ignored: nothing can be added around a pushed request', async () => {
      const pushed = await push(viaBasic, goodFields());
      const url = authorizeWith(viaBasic.metadata.client_id, pushed.body.request_uri as string);
      url.searchParams.set('prompt', 'none');
      url.searchParams.set('claims', JSON.stringify({ userinfo: bracketFlood(3) }));
      url.searchParams.set('redirect_uri', 'https://attacker.example/cb');
      expect((await outcomeOf(url)).interaction).toBeDefined();
    });

    it('a push carrying request_uri, or an unsigned request object, is refused', async () => {
      const before = pushedWrites();
      const nested = await push(viaBasic, goodFields({ request_uri: `${URN}anything` }));
      // C2: every JSON error carries error_description; oidc-provider gives these two none.
      expect([nested.status, nested.body.error, nested.body.error_description]).toEqual([400, 'request_uri_not_supported', expect.stringContaining('request_uri')]);
      const registration = await push(viaBasic, goodFields({ registration: '{"client_name":"x"}' }));
      expect([registration.status, registration.body.error, registration.body.error_description]).toEqual([400, 'registration_not_supported', expect.stringContaining('registration')]);
      const now = Math.floor(Date.now() / 1000);
      const none = new UnsecuredJWT({ ...goodFields(), iss: viaPost.metadata.client_id, aud: running.issuer, exp: now + 60, client_id: viaPost.metadata.client_id }).encode();
      const unsigned = await push(viaPost, { request: none, client_id: viaPost.metadata.client_id, client_secret: viaPost.metadata.client_secret }, null);
      expect([unsigned.status, unsigned.body.error, unsigned.body.error_description]).toEqual([400, 'invalid_request_object', 'unsupported signed request alg']);
      expect(pushedWrites()).toEqual(before);
    });

    it('a made-up request_uri, or one by reference to a relying party server, is refused', async () => {
      expect((await outcomeOf(authorizeWith(viaBasic.metadata.client_id, `${URN}made-up-0123456789`))).error).toBe('invalid_request_uri');
      const byReference = new URL(`${running.issuer}/authorize`);
      for (const [k, v] of Object.entries({ ...goodFields(), client_id: viaBasic.metadata.client_id, request_uri: 'https://rp.example/request.jwt' })) if (v) byReference.searchParams.set(k, v);
      expect((await outcomeOf(byReference)).error).toBe('request_uri_not_supported');
    });
  });

  describe('require_pushed_authorization_requests', () => {
    it('refuses the client at /authorize without PAR (query or request object), serves it through PAR', async () => {
      const query = new URL(`${running.issuer}/authorize`);
      for (const [k, v] of Object.entries({ ...goodFields(), client_id: parOnly.metadata.client_id })) if (v) query.searchParams.set(k, v);
      expect(await outcomeOf(query)).toMatchObject({ error: 'invalid_request', description: 'Pushed Authorization Request must be used', state: 'st-par' });
      const byValue = new URL(`${running.issuer}/authorize`);
      byValue.searchParams.set('client_id', parOnly.metadata.client_id);
      byValue.searchParams.set('request', await signRequestObject(parOnly, running.issuer, goodFields()));
      expect(await outcomeOf(byValue)).toMatchObject({ error: 'invalid_request', description: 'Pushed Authorization Request must be used' });
      const flow = await parFlow(parOnly, { scope: 'openid email' });
      expect(userData(flow.claims)).toEqual({ email: SENTINEL, email_verified: true });
    });
  });

  describe('client authentication at /par (secrets compared hashed)', () => {
    it('refuses no credentials, a wrong secret and the stored hash (Basic and form), storing nothing', async () => {
      const before = pushedWrites();
      const hash = hashClientSecret(viaPost.metadata.client_secret as string);
      const cases: [string, Pushed][] = [
        ['none', await push(viaBasic, goodFields(), null)],
        ['wrong', await push(viaBasic, goodFields(), basic(viaBasic.metadata.client_id, 'wrong-secret'))],
        ['basic hash', await push(viaBasic, goodFields(), basic(viaBasic.metadata.client_id, hashClientSecret(viaBasic.metadata.client_secret as string)))],
        ['post hash', await push(viaPost, goodFields({ client_secret: hash }, viaPost), null)],
      ];
      for (const [name, answer] of cases) expect({ name, status: answer.status, error: answer.body.error }).toEqual({ name, status: 401, error: 'invalid_client' });
      expect(pushedWrites()).toEqual(before);
      const real = await push(viaPost, goodFields({ client_secret: viaPost.metadata.client_secret as string }, viaPost), null);
      expect(real.status).toBe(201);
    });

    const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
    /** A JWT signed with viaJwt's key (PS256): `claims` over iss, sub, aud, jti and exp in 60 s; `typ` in the header when given. */
    const signedByJwtClient = async (claims: Record<string, unknown>, typ?: string): Promise<string> => {
      const id = viaJwt.metadata.client_id;
      const now = Math.floor(Date.now() / 1000);
      const payload = { iss: id, sub: id, aud: running.issuer, jti: oidc.randomState(), iat: now, exp: now + 60, ...claims };
      return new SignJWT(payload).setProtectedHeader({ alg: 'PS256', kid: viaJwt.kid, ...(typ ? { typ } : {}) }).sign(viaJwt.signingKey);
    };
    /** Pushes with `assertion` as viaJwt's client assertion; also presents it at /token for a made-up code (client authentication comes first). */
    const asAssertion = async (assertion: string): Promise<{ par: [number, unknown]; token: [number, unknown] }> => {
      const auth = { client_id: viaJwt.metadata.client_id, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion };
      const pushed = await push(viaJwt, { ...goodFields({}, viaJwt), ...auth }, null);
      const token = await fetch(`${running.issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'made-up', redirect_uri: REDIRECT, code_verifier: pkcePair().verifier, ...auth }).toString(),
      });
      return { par: [pushed.status, pushed.body.error], token: [token.status, ((await token.json()) as { error?: unknown }).error] };
    };
    const refusedEverywhere = { par: [401, 'invalid_client'], token: [401, 'invalid_client'] };
    /** Whether `client` authenticates at `endpoint` with an assertion for `aud` (a push is served, or /token refuses only the made-up code). */
    const authenticatesAt = async (app: RunningApp, client: SigningClient, endpoint: 'token' | 'par', aud: string | string[]): Promise<boolean> => {
      const id = client.metadata.client_id;
      const now = Math.floor(Date.now() / 1000);
      const assertion = await new SignJWT({ iss: id, sub: id, aud, jti: oidc.randomState(), iat: now, exp: now + 60 }).setProtectedHeader({ alg: 'PS256', kid: client.kid }).sign(client.signingKey);
      const auth = { client_id: id, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion };
      const body = endpoint === 'par' ? { ...goodFields({}, client), ...auth } : { grant_type: 'authorization_code', code: 'made-up', redirect_uri: REDIRECT, code_verifier: pkcePair().verifier, ...auth };
      const answer = await fetch(`${app.issuer}/${endpoint}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body).toString() });
      const { error } = (await answer.json()) as { error?: string };
      if (answer.status === 401 && error === 'invalid_client') return false;
      expect([answer.status, error]).toEqual(endpoint === 'par' ? [201, undefined] : [400, 'invalid_grant']);
      return true;
    };

    it('a request object, which travels through the browser, never authenticates its client, however typed (RFC 9101 10.8); nothing stored', async () => {
      const params = { ...goodFields({}, viaJwt), client_id: viaJwt.metadata.client_id };
      const objects: [string, string][] = [
        ['typed, with response_type', await signedByJwtClient(params, 'oauth-authz-req+jwt')],
        ['untyped, with response_type', await signedByJwtClient(params)],
        ['typed as a media type, without response_type', await signedByJwtClient({}, 'application/OAuth-Authz-Req+JWT')],
      ];
      const before = [...pushedWrites(), store.writes(REPLAY_DETECTION_MODEL)];
      for (const [name, object] of objects) expect({ name, ...(await asAssertion(object)) }).toEqual({ name, ...refusedEverywhere });
      expect([...pushedWrites(), store.writes(REPLAY_DETECTION_MODEL)]).toEqual(before);
      // Each is still the request object it is.
      const byValue = new URL(`${running.issuer}/authorize`);
      byValue.search = new URLSearchParams({ client_id: viaJwt.metadata.client_id, request: objects[0]?.[1] as string }).toString();
      expect((await outcomeOf(byValue)).interaction).toBeDefined();
    });
    it('attack: an assertion whose aud is the token or PAR endpoint, or the issuer in an array, is refused (it may have been made for a server that gave our endpoint as its own, CVE-2025-27370); the issuer as a string is served', async () => {
      const audiences: unknown[] = [`${running.issuer}/token`, `${running.issuer}/par`, [running.issuer], [running.issuer, 'https://as.example'], `${running.issuer}/`];
      const before = [...pushedWrites(), store.writes(REPLAY_DETECTION_MODEL)];
      for (const aud of audiences) expect({ aud, ...(await asAssertion(await signedByJwtClient({ aud }))) }).toEqual({ aud, ...refusedEverywhere });
      expect([...pushedWrites(), store.writes(REPLAY_DETECTION_MODEL)]).toEqual(before);
      for (const endpoint of ['token', 'par'] as const) expect(await authenticatesAt(running, viaJwt, endpoint, running.issuer)).toBe(true);
    });

    it('with svc.client-assertion.endpoint-audience, an assertion naming the token or PAR endpoint (Authlib) is served as oidc-provider serves it; another audience still is not', async () => {
      const lenient = await startApp({ properties: { 'svc.client-assertion.endpoint-audience': 'true' } });
      try {
        const client = await registerSigningClient(lenient, { token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'PS256' });
        for (const endpoint of ['token', 'par'] as const) {
          expect(await authenticatesAt(lenient, client, endpoint, `${lenient.issuer}/${endpoint}`)).toBe(true);
          expect(await authenticatesAt(lenient, client, endpoint, [lenient.issuer])).toBe(true);
          expect(await authenticatesAt(lenient, client, endpoint, 'https://as.example')).toBe(false);
        }
      } finally {
        await lenient.close();
      }
    });
  });

  describe('every authorization check applies to pushed parameters, before anything is stored', () => {
    const refused = async (client: SigningClient, fields: Record<string, string | undefined>): Promise<{ status: number; error: unknown; description: unknown }> => {
      const before = pushedWrites();
      const answer = await push(client, fields);
      expect(pushedWrites()).toEqual(before);
      return { status: answer.status, error: answer.body.error, description: answer.body.error_description };
    };

    it('PKCE: missing or plain → invalid_request', async () => {
      expect(await refused(viaBasic, goodFields({ code_challenge: undefined, code_challenge_method: undefined }))).toEqual({
        status: 400,
        error: 'invalid_request',
        description: 'Authorization Server policy requires PKCE to be used for this request',
      });
      expect(await refused(viaBasic, goodFields({ code_challenge_method: 'plain' }))).toMatchObject({ status: 400, error: 'invalid_request' });
    });

    it('scope without openid → invalid_scope; response_type token → unsupported_response_type; unregistered redirect_uri → invalid_request', async () => {
      expect(await refused(viaBasic, goodFields({ scope: 'email' }))).toMatchObject({ status: 400, error: 'invalid_scope' });
      expect(await refused(viaBasic, goodFields({ response_type: 'token' }))).toMatchObject({ status: 400, error: 'unsupported_response_type' });
      expect(await refused(viaBasic, goodFields({ redirect_uri: 'https://attacker.example/cb' }))).toMatchObject({ status: 400, error: 'invalid_request' });
    });

    it('the claims budget in the pushed form: too many names, too many bytes → invalid_request', async () => {
      expect(await refused(viaBasic, goodFields({ claims: JSON.stringify({ userinfo: bracketFlood(3) }) }))).toEqual({
        status: 400,
        error: 'invalid_request',
        description: 'the claims parameter expands to 387 claim names; at most 256 are allowed',
      });
      const big = JSON.stringify({ userinfo: { email: { value: 'x'.repeat(8200) } } });
      expect(await refused(viaBasic, goodFields({ claims: big }))).toEqual({
        status: 400,
        error: 'invalid_request',
        description: `the claims parameter is ${Buffer.byteLength(big)} bytes; at most 8192 are allowed`,
      });
    });

    it('the claims budget inside a pushed request object, signed or encrypted → invalid_request', async () => {
      const jws = await signRequestObject(viaBasic, running.issuer, { ...goodFields(), claims: { userinfo: bracketFlood(3) } });
      for (const request of [jws, await encryptRequestObject(running.issuer, jws, 'RSA-OAEP-256')]) {
        expect(await refused(viaBasic, { request })).toEqual({ status: 400, error: 'invalid_request', description: 'the claims parameter expands to 387 claim names; at most 256 are allowed' });
      }
    });

    it('an essential acr with values in the pushed form or a pushed request object, signed or encrypted → access_denied (OIDC Core 5.5.1.1: no acr is issued)', async () => {
      const claims = { id_token: { acr: { essential: true, values: ['urn:mace:incommon:iap:silver'] } } };
      const answers = [await refused(viaBasic, goodFields({ claims: JSON.stringify(claims) }))];
      const jws = await signRequestObject(viaBasic, running.issuer, { ...goodFields(), claims });
      for (const request of [jws, await encryptRequestObject(running.issuer, jws, 'RSA-OAEP-256')]) answers.push(await refused(viaBasic, { request }));
      expect(answers.map(({ status, error }) => [status, error])).toEqual([[400, 'access_denied'], [400, 'access_denied'], [400, 'access_denied']]);
    });

    it('a request object that fails its own checks → invalid_request_object', async () => {
      const now = Math.floor(Date.now() / 1000);
      const expired = await signRequestObject(viaBasic, running.issuer, { ...goodFields(), exp: now - 120 });
      expect(await refused(viaBasic, { request: expired })).toEqual({ status: 400, error: 'invalid_request_object', description: 'Request Object claims are invalid' });
      const foreign = await signRequestObject(viaBasic, running.issuer, { ...goodFields(), aud: 'https://elsewhere.example' });
      expect(await refused(viaBasic, { request: foreign })).toEqual({ status: 400, error: 'invalid_request_object', description: 'Request Object claims are invalid' });
      const otherClient = await signRequestObject(viaBasic, running.issuer, goodFields());
      const before = pushedWrites();
      const asPost = await push(viaPost, { request: otherClient, client_id: viaPost.metadata.client_id, client_secret: viaPost.metadata.client_secret }, null);
      expect({ status: asPost.status, error: asPost.body.error, description: asPost.body.error_description }).toEqual({
        status: 400,
        error: 'invalid_request_object',
        description: 'request client_id must equal the one in request parameters',
      });
      expect(pushedWrites()).toEqual(before);
    });

    it.each([
      ['10 s past (within the clock tolerance)', -10],
      ['now', 0],
    ])('a request object whose exp is %s → invalid_request_object: no request_uri dead on arrival', async (_when, delta) => {
      const now = Math.floor(Date.now() / 1000);
      const request = await signRequestObject(viaBasic, running.issuer, { ...goodFields(), exp: now + delta });
      expect(await refused(viaBasic, { request })).toEqual({ status: 400, error: 'invalid_request_object', description: 'the request object has expired (its exp is not in the future)' });
    });

    it('honest: a request object valid 30 s more is pushed for those 30 s, and its request_uri works', async () => {
      const now = Math.floor(Date.now() / 1000);
      const pushed = await push(viaBasic, { request: await signRequestObject(viaBasic, running.issuer, { ...goodFields(), exp: now + 30 }) });
      expect(pushed.status).toBe(201);
      expect(pushed.body.expires_in).toBeGreaterThanOrEqual(now + 30 - Math.floor(Date.now() / 1000));
      expect((await outcomeOf(authorizeWith(viaBasic.metadata.client_id, pushed.body.request_uri as string))).interaction).toBeDefined();
    });

    it('a fractional exp (a valid NumericDate) is kept until that exp, not for the 60 s oidc-provider falls back to: expires_in says so, and the request_uri ends then', async () => {
      const now = Math.floor(Date.now() / 1000);
      const soon = await push(viaBasic, { request: await signRequestObject(viaBasic, running.issuer, { ...goodFields(), exp: now + 20.5 }) });
      expect(soon.status).toBe(201);
      expect(soon.body.expires_in).toBeGreaterThanOrEqual(now + 20 - Math.floor(Date.now() / 1000));
      expect(soon.body.expires_in).toBeLessThanOrEqual(20);
      const later = clockAhead(21_000);
      try {
        expect((await outcomeOf(authorizeWith(viaBasic.metadata.client_id, soon.body.request_uri as string))).error).toBe('invalid_request_uri');
      } finally {
        later.restore();
      }
      const honest = await push(viaBasic, { request: await signRequestObject(viaBasic, running.issuer, { ...goodFields(), exp: now + 30.5 }) });
      expect(honest.status).toBe(201);
      expect((await outcomeOf(authorizeWith(viaBasic.metadata.client_id, honest.body.request_uri as string))).interaction).toBeDefined();
    });

    it('a dpop_jkt inside a pushed request object (DPoP is not offered) is not stored, whatever its size; the push still works', async () => {
      const junk = `dpop-${'x'.repeat(30_000)}`;
      const pushed = await push(viaBasic, { request: await signRequestObject(viaBasic, running.issuer, { ...goodFields(), dpop_jkt: junk }) });
      expect(pushed.status).toBe(201);
      const stored = JSON.stringify(await store.adapter(MODEL_NAMES.pushedAuthorizationRequest).find((pushed.body.request_uri as string).slice(URN.length)));
      expect([stored.includes('dpop'), stored.length < 4096]).toEqual([false, true]);
      expect((await outcomeOf(authorizeWith(viaBasic.metadata.client_id, pushed.body.request_uri as string))).interaction).toBeDefined();
    });
  });

  it('discovery names the endpoint and does not require PAR by default', async () => {
    const doc = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.pushed_authorization_request_endpoint).toBe(`${running.issuer}/par`);
    expect(doc.require_pushed_authorization_requests).toBeUndefined();
  });
});

describe('svc.par.required: PAR for every client, those registered before included', () => {
  const prefix = testPrefix('par-required');
  let before: RunningApp | undefined;
  let running: RunningApp;
  let registeredBefore: SigningClient;
  let registeredAfter: SigningClient;
  const redis = { 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix };

  beforeAll(async () => {
    before = await startApp({ properties: redis });
    registeredBefore = await registerSigningClient(before, {});
    const previous = before.baseUrl;
    await before.close();
    before = undefined;
    // Restarted on another port, so under another base URL: it takes the key prefix over from the one it had.
    running = await startApp({ properties: { ...redis, 'svc.par.required': 'true', 'svc.redis.previous-base-url': previous }, claimModules: createDemoClaimModules() });
    registeredAfter = await registerSigningClient(running, {});
  });
  afterAll(async () => {
    await before?.close();
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  it('discovery says require_pushed_authorization_requests: true', async () => {
    const doc = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.require_pushed_authorization_requests).toBe(true);
  });

  it.each([
    ['registered before the change', () => registeredBefore],
    ['registered after it', () => registeredAfter],
  ])('a client %s is refused at /authorize without PAR and served through it', async (_name, client) => {
    const url = new URL(`${running.issuer}/authorize`);
    const fields = { client_id: client().metadata.client_id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'st-req' };
    for (const [k, v] of Object.entries(fields)) url.searchParams.set(k, v);
    expect(await outcomeOf(url)).toMatchObject({ error: 'invalid_request', description: 'Pushed Authorization Request must be used', state: 'st-req' });
    const config = await client().config(running.issuer);
    const pushed = await oidc.buildAuthorizationUrlWithPAR(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    expect((await outcomeOf(pushed)).interaction).toBeDefined();
  });
});

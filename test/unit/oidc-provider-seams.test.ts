import { generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { SignJWT, type JWK } from 'jose';
import Koa from 'koa';
import Provider, { errors, interactionPolicy, type Adapter, type AdapterPayload, type KoaContextWithOIDC } from 'oidc-provider';

import { createMemoryStore } from '../../adapters/memory.js';
import { mountProvider } from '../../lib/http/mount-provider.js';
import { escapeHtml } from '../../lib/pages/html.js';
import { replaceRequestBody } from '../../lib/web/replace-request-body.js';
import {
  CLIENT_JWKS_MIN_FRESH_SECONDS,
  currentRequest,
  encryptionKeysFor,
  formPostOpening,
  INTERACTION_SESSION_ID,
  MODEL_NAMES,
  OIDC_PROVIDER_VERSIONS,
  PROVIDER_BODY_LIMIT_BYTES,
  PROVIDER_CLOCK_TOLERANCE_SECONDS,
  PROVIDER_EVENTS,
  PUSHED_REQUEST_TTL_SECONDS,
  ROUTE_NAMES,
} from '../../lib/seams.js';
import { pkcePair } from '../helpers/flow.js';

/*
 * Every assumption svc-connect makes about oidc-provider (lib/seams.ts and the places
 * docs/architecture.md#oidc-providers-seams lists), checked against the installed oidc-provider
 * on a bare instance: no svc-connect configuration, so a failure here names oidc-provider's
 * change, not ours.
 */

const SECRET = 'seam-client-secret-0123456789-0123456789';
const REDIRECT = 'https://rp.example/cb';
const REDIRECT_WITH_QUERY = "https://rp.example/cb?a=1&b='2'";
const JWKS_URI = 'https://rp.example/jwks';
const rpKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rpJwk = { ...(rpKeys.publicKey.export({ format: 'jwk' }) as JWK), kid: 'rp-sig', use: 'sig', alg: 'RS256' };
const rpEncJwk = { ...(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }) as JWK), kid: 'rp-enc', use: 'enc' };
const opJwk = { ...(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }) as JWK), kid: 'op-sig', use: 'sig', alg: 'RS256' };

interface AdapterCall {
  model: string;
  method: string;
  id?: string;
  route?: string;
  expiresIn?: number;
}

describe('oidc-provider seams (lib/seams.ts): what an upgrade must keep', () => {
  const calls: AdapterCall[] = [];
  const routes: string[] = [];
  const events: { name: string; args: number; ctx: boolean; route?: string }[] = [];
  const hooks: { hook: string; route?: string; pushed?: boolean; client?: string; params?: boolean }[] = [];
  const fetches: { url: unknown; method?: string; accept?: string | null; signal: boolean; client?: string; route?: string }[] = [];
  const rendered: { error?: string }[] = [];
  let failNext: string | undefined;
  let provider: Provider;
  let server: Server;
  let origin: string;
  let issuer: string;
  const store = createMemoryStore();

  /** The memory store's adapter, recording each call with the route being served. */
  const recordingAdapter = (model: string): Adapter => {
    const inner = store.adapter(model);
    const record = (method: string, id?: string, expiresIn?: number): void => {
      calls.push({ model, method, id, route: currentRequest()?.oidc?.route, ...(expiresIn !== undefined ? { expiresIn } : {}) });
      if (failNext === model) {
        failNext = undefined;
        throw new Error('store down');
      }
    };
    return {
      upsert: async (id: string, payload: AdapterPayload, expiresIn: number) => {
        record('upsert', id, expiresIn);
        return inner.upsert(id, payload, expiresIn);
      },
      find: async (id: string) => {
        record('find', id);
        return inner.find(id);
      },
      findByUid: async (uid: string) => inner.findByUid(uid),
      findByUserCode: async (code: string) => inner.findByUserCode(code),
      consume: async (id: string) => {
        record('consume', id);
        return inner.consume(id);
      },
      destroy: async (id: string) => {
        record('destroy', id);
        return inner.destroy(id);
      },
      revokeByGrantId: async (grantId: string) => inner.revokeByGrantId(grantId),
    };
  };

  /** The JWKS answers' bodies as a provider.use middleware sees them after next(). */
  const jwksBodies: unknown[] = [];
  const routeRecorder = async (ctx: Koa.Context, next: Koa.Next): Promise<void> => {
    await next();
    const route = (ctx as unknown as KoaContextWithOIDC).oidc?.route;
    if (route) routes.push(route);
    if (route === ROUTE_NAMES.jwks) jwksBodies.push(ctx.body);
  };

  let jwksResponse = (): Response => new Response(JSON.stringify({ keys: [rpJwk] }), { headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });

  beforeAll(async () => {
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    issuer = `${origin}/oidc/v1`;
    provider = new Provider(issuer, {
      adapter: recordingAdapter,
      jwks: { keys: [opJwk] },
      cookies: { keys: ['seam-cookie-key-0123456789-0123456789'] },
      findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
      clients: [
        { client_id: 'seam-rp', client_secret: SECRET, redirect_uris: [REDIRECT, REDIRECT_WITH_QUERY], grant_types: ['authorization_code', 'client_credentials'], response_types: ['code'] },
        { client_id: 'seam-jwt', token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'RS256', jwks_uri: JWKS_URI, grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
      ],
      routes: { registration: '/register', authorization: '/authorize', token: '/token', userinfo: '/userinfo', pushed_authorization_request: '/par' },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        encryption: { enabled: true },
        registration: {
          enabled: true,
          initialAccessToken: true,
          policies: { seam: (ctx: KoaContextWithOIDC) => void hooks.push({ hook: 'registration policy', route: ctx.oidc.route }) },
        },
        registrationManagement: { enabled: true, rotateRegistrationAccessToken: true },
        pushedAuthorizationRequests: { enabled: true },
        requestObjects: {
          enabled: true,
          assertJwtClaimsAndHeader: (ctx: KoaContextWithOIDC, _claims: unknown, _header: unknown, client: { clientId: string }) =>
            void hooks.push({ hook: 'assertJwtClaimsAndHeader', route: ctx.oidc.route, pushed: MODEL_NAMES.pushedAuthorizationRequest in ctx.oidc.entities, client: client.clientId, params: !!ctx.oidc.params }),
        },
        claimsParameter: {
          enabled: true,
          assertClaimsParameter: (ctx: KoaContextWithOIDC) => void hooks.push({ hook: 'assertClaimsParameter', route: ctx.oidc.route, client: ctx.oidc.client?.clientId }),
        },
      },
      extraParams: {
        probe: (ctx: KoaContextWithOIDC, _value: unknown, client: { clientId: string }) => void hooks.push({ hook: 'extraParams validator', route: ctx.oidc.route, client: client.clientId }),
      },
      pkce: { required: () => true },
      ttl: { Interaction: 3600, Session: 3600, Grant: 3600, ClientCredentials: 600, AccessToken: 600, AuthorizationCode: 60, IdToken: 3600 },
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      renderError: (ctx, out) => {
        rendered.push({ error: out.error });
        ctx.type = 'html';
        ctx.body = 'error';
      },
      fetch: async (url: string | URL | Request, init?: RequestInit) => {
        const ctx = currentRequest();
        fetches.push({ url, method: init?.method, accept: new Headers(init?.headers).get('accept'), signal: init?.signal instanceof AbortSignal, client: ctx?.oidc?.client?.clientId, route: ctx?.oidc?.route });
        return jwksResponse();
      },
    });
    for (const name of Object.values(PROVIDER_EVENTS)) {
      // Listened to as lib/observability/provider-events.ts does (the types name each event).
      (provider as unknown as NodeJS.EventEmitter).on(name, (...args: unknown[]) => {
        const ctx = args[0] as KoaContextWithOIDC | undefined;
        events.push({ name, args: args.length, ctx: !!ctx?.oidc, route: ctx?.oidc?.route });
      });
    }
    provider.use(routeRecorder);
    provider.use(async (ctx, next) => {
      // As the request normalizer does: the body read and handed on as a fresh stream.
      const replacement = ctx.get('x-seam-replace-body');
      if (replacement) replaceRequestBody(ctx, Buffer.from(replacement), 'application/x-www-form-urlencoded');
      await next();
    });
    const app = new Koa({ keys: ['seam-cookie-key-0123456789-0123456789'] });
    app.use(mountProvider(provider, '/oidc/v1'));
    const callback = app.callback();
    server.on('request', (req, res) => void callback(req, res));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await store.close();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const json = async (response: Response): Promise<Record<string, unknown>> => (await response.json()) as Record<string, unknown>;
  const basic = `Basic ${Buffer.from(`seam-rp:${SECRET}`).toString('base64')}`;
  const since = <T>(list: T[], from: number): T[] => list.slice(from);

  it('runtime and type package are on the minors the seams were checked with (no @types/oidc-provider 9.13 exists)', () => {
    const version = (name: string): string => (JSON.parse(readFileSync(`node_modules/${name}/package.json`, 'utf8')) as { version: string }).version;
    const minor = (v: string): string => v.split('.').slice(0, 2).join('.');
    expect(minor(version('oidc-provider'))).toBe(OIDC_PROVIDER_VERSIONS.runtime);
    expect(minor(version('@types/oidc-provider'))).toBe(OIDC_PROVIDER_VERSIONS.types);
    const declared = (JSON.parse(readFileSync('package.json', 'utf8')) as { dependencies: Record<string, string> }).dependencies;
    expect(declared['oidc-provider']).toMatch(new RegExp(`^~${OIDC_PROVIDER_VERSIONS.runtime.replace('.', '\\.')}\\.`));
    expect(declared['@types/oidc-provider']).toMatch(new RegExp(`^~${OIDC_PROVIDER_VERSIONS.types.replace('.', '\\.')}\\.`));
  });

  it('provider.use puts middleware into provider.middleware before oidc-provider\'s router (what mountProvider composes), so it sees ctx.oidc.route', async () => {
    const at = provider.middleware.indexOf(routeRecorder as never);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(at).toBeLessThan(provider.middleware.length - 1);
    const from = routes.length;
    const served = await Promise.all([1, 2].map(async (): Promise<unknown> => (await fetch(`${issuer}/jwks`)).json()));
    expect(since(routes, from)).toEqual([ROUTE_NAMES.jwks, ROUTE_NAMES.jwks]);
    // What provider/published-keys filters: a `{ keys }` object of its own per answer, holding what is served.
    const [first, second] = jwksBodies.slice(-2) as [{ keys: unknown[] }, { keys: unknown[] }];
    expect([first, second]).toEqual(served);
    expect([first !== second, first.keys.length > 0]).toEqual([true, true]);
  });

  it('registration: route names, the policy hook, events, and the adapter order of single-use tokens (find before destroy)', async () => {
    const iat = new provider.InitialAccessToken({ policies: ['seam'] });
    const token = await iat.save();
    const fromCalls = calls.length;
    const fromEvents = events.length;
    const fromHooks = hooks.length;
    const fromRoutes = routes.length;
    const create = async (metadata: unknown): Promise<Response> =>
      fetch(`${issuer}/register`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(metadata) });

    expect((await create({ redirect_uris: 'not-a-list' })).status).toBe(400);
    const created = await json(await create({ redirect_uris: [REDIRECT] }));
    const clientUri = created.registration_client_uri as string;
    const clientId = created.client_id as string;
    let rat = created.registration_access_token as string;
    // Registration policies run for an adapter-stored initial access token that names them.
    expect(since(hooks, fromHooks)).toEqual([{ hook: 'registration policy', route: ROUTE_NAMES.registration }, { hook: 'registration policy', route: ROUTE_NAMES.registration }]);
    // oidc-provider only finds an initial access token: it never consumes or deletes it (we do).
    expect(since(calls, fromCalls).filter((c) => c.model === MODEL_NAMES.initialAccessToken).map((c) => c.method)).toEqual(['find', 'find']);

    const manage = async (method: string, body?: unknown): Promise<Response> =>
      fetch(clientUri, { method, headers: { authorization: `Bearer ${rat}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) });
    const ratCalls = (from: number): string[] => since(calls, from).filter((c) => c.model === MODEL_NAMES.registrationAccessToken).map((c) => `${c.method} ${c.id === rat ? 'presented' : 'other'} ${c.route}`);

    let from = calls.length;
    const read = await manage('GET');
    expect(read.status).toBe(200);
    expect(ratCalls(from)).toEqual([`find presented ${ROUTE_NAMES.clientRead}`]);
    // A read does not rotate: the settling middleware replaces ctx.body's token itself.
    expect((await json(read)).registration_access_token).toBe(rat);

    from = calls.length;
    expect((await manage('PUT', { client_id: clientId, redirect_uris: 'x' })).status).toBe(400);
    expect(ratCalls(from)).toEqual([`find presented ${ROUTE_NAMES.clientUpdate}`]);

    from = calls.length;
    const updated = await json(await manage('PUT', { client_id: clientId, redirect_uris: [REDIRECT] }));
    expect(ratCalls(from).slice(0, 2)).toEqual([`find presented ${ROUTE_NAMES.clientUpdate}`, `destroy presented ${ROUTE_NAMES.clientUpdate}`]);
    expect(since(calls, from).filter((c) => c.model === MODEL_NAMES.registrationAccessToken && c.method === 'upsert')).toEqual([expect.objectContaining({ id: updated.registration_access_token, route: ROUTE_NAMES.clientUpdate })]);
    rat = updated.registration_access_token as string;

    from = calls.length;
    expect((await manage('DELETE')).status).toBe(204);
    expect(ratCalls(from)).toEqual([`find presented ${ROUTE_NAMES.clientDelete}`, `destroy presented ${ROUTE_NAMES.clientDelete}`]);

    expect(since(routes, fromRoutes)).toEqual([ROUTE_NAMES.registration, ROUTE_NAMES.registration, ROUTE_NAMES.clientRead, ROUTE_NAMES.clientUpdate, ROUTE_NAMES.clientUpdate, ROUTE_NAMES.clientDelete]);
    const byName = (name: string) => since(events, fromEvents).filter((e) => e.name === name);
    expect(byName(PROVIDER_EVENTS.registrationCreateFailed)).toEqual([{ name: PROVIDER_EVENTS.registrationCreateFailed, args: 2, ctx: true, route: ROUTE_NAMES.registration }]);
    expect(byName(PROVIDER_EVENTS.registrationCreated)).toEqual([{ name: PROVIDER_EVENTS.registrationCreated, args: 2, ctx: true, route: ROUTE_NAMES.registration }]);
    expect(byName(PROVIDER_EVENTS.registrationUpdateFailed)).toEqual([{ name: PROVIDER_EVENTS.registrationUpdateFailed, args: 2, ctx: true, route: ROUTE_NAMES.clientUpdate }]);
    expect(byName(PROVIDER_EVENTS.registrationUpdated)).toEqual([{ name: PROVIDER_EVENTS.registrationUpdated, args: 2, ctx: true, route: ROUTE_NAMES.clientUpdate }]);
    expect(byName(PROVIDER_EVENTS.registrationDeleted)).toEqual([{ name: PROVIDER_EVENTS.registrationDeleted, args: 2, ctx: true, route: ROUTE_NAMES.clientDelete }]);
  });

  it('PAR and request objects: /par stores with a 60 s lifetime in its route; /authorize finds it in its route, and the request-object hook sees it as an entity', async () => {
    const { challenge } = pkcePair();
    const fromCalls = calls.length;
    const fromHooks = hooks.length;
    const pushed = await fetch(`${issuer}/par`, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'seam-rp', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256', probe: '1', claims: '{"userinfo":{"sub":null}}' }).toString(),
    });
    const body = await json(pushed);
    expect([pushed.status, body.expires_in]).toEqual([201, PUSHED_REQUEST_TTL_SECONDS]);
    const stored = since(calls, fromCalls).filter((c) => c.model === MODEL_NAMES.pushedAuthorizationRequest);
    expect(stored).toEqual([{ model: MODEL_NAMES.pushedAuthorizationRequest, method: 'upsert', id: expect.any(String), route: ROUTE_NAMES.pushedAuthorizationRequest, expiresIn: PUSHED_REQUEST_TTL_SECONDS }]);

    const fromAuthorize = calls.length;
    const authorize = await fetch(`${issuer}/authorize?${new URLSearchParams({ client_id: 'seam-rp', request_uri: body.request_uri as string })}`, { redirect: 'manual' });
    expect(authorize.status).toBe(303);
    expect(since(calls, fromAuthorize).filter((c) => c.model === MODEL_NAMES.pushedAuthorizationRequest)[0]).toEqual({ model: MODEL_NAMES.pushedAuthorizationRequest, method: 'find', id: stored[0]?.id, route: ROUTE_NAMES.authorization });
    expect(since(hooks, fromHooks)).toEqual(expect.arrayContaining([
      // At /par: the extra parameter's validator and the claims check run with the client.
      { hook: 'extraParams validator', route: ROUTE_NAMES.pushedAuthorizationRequest, client: 'seam-rp' },
      { hook: 'assertClaimsParameter', route: ROUTE_NAMES.pushedAuthorizationRequest, client: 'seam-rp' },
      // At /authorize the stored request is a request object: the hook sees the pushed entity and mutable params.
      { hook: 'assertJwtClaimsAndHeader', route: ROUTE_NAMES.authorization, pushed: true, client: 'seam-rp', params: true },
      { hook: 'extraParams validator', route: ROUTE_NAMES.authorization, client: 'seam-rp' },
    ]));
  });

  it('an interaction shown by interactionDetails is finished by interactionResult (merged with the last submission), whose returnTo resumes the flow, as the interaction pages do', async () => {
    const { challenge } = pkcePair();
    const cookies = new Map<string, string>();
    const keep = (response: Response): void => {
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const [name, value] = (pair ?? '').split('=');
        if (name) cookies.set(name, value ?? '');
      }
    };
    const cookieHeader = (): string => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const start = await fetch(`${issuer}/authorize?${new URLSearchParams({ client_id: 'seam-rp', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' })}`, { redirect: 'manual' });
    keep(start);
    const uid = (start.headers.get('location') ?? '').split('/').pop() ?? '';
    expect(uid).not.toBe('');
    // The interaction pages call interactionDetails with the request's req/res (cookies carried).
    const req = (): Readable => Object.assign(Readable.from([]), { headers: { cookie: cookieHeader(), host: new URL(origin).host }, url: `/interaction/${uid}`, method: 'POST', socket: { encrypted: false } });
    const res = { getHeader: () => undefined, setHeader: () => undefined };
    const details = await provider.interactionDetails(req() as never, res as never);
    expect([details.prompt.name, details.returnTo]).toEqual(['login', `${issuer}/authorize/${uid}`]);
    const returnTo = await provider.interactionResult(req() as never, res as never, { login: { accountId: 'seam-person' } });
    expect(returnTo).toBe(details.returnTo);
    const fromRoutes = routes.length;
    const resumed = await fetch(returnTo, { headers: { cookie: cookieHeader() }, redirect: 'manual' });
    expect(since(routes, fromRoutes)).toEqual([ROUTE_NAMES.resume]);
    // The login result was taken: the flow moves on to consent.
    expect(resumed.status).toBe(303);
    expect(resumed.headers.get('location')).toMatch(/^\/interaction\//);
    // The consent interaction carries her session's id, her cookie's value, in the member we leave out of the store.
    keep(resumed);
    const consentUid = (resumed.headers.get('location') ?? '').split('/').pop() ?? '';
    expect(cookies.get('_session')).toMatch(/^[\w-]{21,}$/);
    expect((await store.adapter('Interaction').find(consentUid))?.session).toMatchObject({ [INTERACTION_SESSION_ID]: cookies.get('_session') });
    // interactionPolicy: the base policy has a login prompt (first: it runs at every resume) and a consent prompt
    // whose checks we add to.
    expect(interactionPolicy.base().map((prompt) => prompt.name).slice(0, 2)).toEqual(['login', 'consent']);
    const consent = interactionPolicy.base().get('consent');
    expect(consent?.checks).toBeDefined();
    expect(typeof consent?.checks.add).toBe('function');
    const fromToken = routes.length;
    await fetch(`${issuer}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=unknown' });
    expect(since(routes, fromToken)).toEqual([ROUTE_NAMES.token]);
    expect([typeof interactionPolicy.Check.REQUEST_PROMPT, typeof interactionPolicy.Check.NO_NEED_TO_PROMPT]).toEqual(['boolean', 'boolean']);
  });

  it('the fetch option: called as fetch(url, { method, headers, signal }) inside the request of the client whose jwks_uri it is; a set is fetched again only once 60 s old, whatever its caching headers say', async () => {
    const assertion = async (key: KeyObject, kid: string): Promise<string> =>
      new SignJWT({ jti: randomUUID() }).setProtectedHeader({ alg: 'RS256', kid }).setIssuer('seam-jwt').setSubject('seam-jwt').setAudience(issuer).setIssuedAt().setExpirationTime('5m').sign(key);
    const token = async (key: KeyObject, kid: string): Promise<number> =>
      (await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: await assertion(key, kid) }).toString(),
      })).status;
    const fromEvents = events.length;
    // The set is fetched between these two readings of the clock.
    const beforeFetch = Date.now();
    expect(await token(rpKeys.privateKey, 'rp-sig')).toBe(200);
    const afterFetch = Date.now();
    expect(fetches).toEqual([{ url: JWKS_URI, method: 'GET', accept: 'application/json', signal: true, client: 'seam-jwt', route: 'token' }]);
    expect(since(events, fromEvents).find((e) => e.name === PROVIDER_EVENTS.grantSucceeded)).toEqual({ name: PROVIDER_EVENTS.grantSucceeded, args: 1, ctx: true, route: 'token' });

    // The client rotates to a new key. The set was served with `Cache-Control: no-store`, and still
    // oidc-provider does not fetch it again before the minimum: the new key is unknown until then.
    const rotated = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rotatedJwk = { ...(rotated.publicKey.export({ format: 'jwk' }) as JWK), kid: 'rp-sig-2', use: 'sig', alg: 'RS256' };
    jwksResponse = () => new Response(JSON.stringify({ keys: [rpJwk, rotatedJwk] }), { headers: { 'content-type': 'application/json', 'cache-control': 'no-store' } });
    jest.spyOn(Date, 'now').mockReturnValue(beforeFetch + (CLIENT_JWKS_MIN_FRESH_SECONDS - 2) * 1000);
    expect(await token(rotated.privateKey, 'rp-sig-2')).toBe(401);
    expect(fetches).toHaveLength(1);
    jest.spyOn(Date, 'now').mockReturnValue(afterFetch + (CLIENT_JWKS_MIN_FRESH_SECONDS + 2) * 1000);
    expect(await token(rotated.privateKey, 'rp-sig-2')).toBe(200);
    expect(fetches).toHaveLength(2);
  });

  it('error events carry (ctx, err); a store failure is server_error; errors it cannot redirect go to renderError', async () => {
    const fromEvents = events.length;
    expect((await fetch(`${issuer}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=nope&redirect_uri=https%3A%2F%2Frp.example%2Fcb&code_verifier=x' })).status).toBe(400);
    expect((await fetch(`${issuer}/userinfo`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    const unknownClient = await fetch(`${issuer}/authorize?client_id=nobody&response_type=code&scope=openid`, { redirect: 'manual' });
    expect(unknownClient.status).toBe(400);
    expect(rendered.at(-1)).toEqual({ error: 'invalid_client' });
    failNext = 'AuthorizationCode';
    expect((await fetch(`${issuer}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=nope&redirect_uri=https%3A%2F%2Frp.example%2Fcb&code_verifier=x' })).status).toBe(500);
    const seen = since(events, fromEvents);
    for (const name of [PROVIDER_EVENTS.grantFailed, PROVIDER_EVENTS.userinfoFailed, PROVIDER_EVENTS.authorizationFailed, PROVIDER_EVENTS.serverError]) {
      expect(seen).toContainEqual(expect.objectContaining({ name, args: 2, ctx: true }));
    }
  });

  it('the form_post answer of /authorize opens its form as formPostOpening says, posting to the redirect URI escaped as escapeHtml does', async () => {
    const answer = await fetch(`${issuer}/authorize?${new URLSearchParams({ client_id: 'seam-rp', response_type: 'code', scope: 'openid', redirect_uri: REDIRECT_WITH_QUERY, prompt: 'none', response_mode: 'form_post', state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })}`);
    expect({ status: answer.status, opening: (await answer.text()).includes(formPostOpening(escapeHtml(REDIRECT_WITH_QUERY))) }).toEqual({ status: 400, opening: true });
  });

  it('oidc-provider parses the body from ctx.req while it is readable: a replaced stream is what it reads; it reads at most 56 KiB', async () => {
    const post = (body: string, replacement?: string): Promise<Response> =>
      fetch(`${issuer}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', ...(replacement ? { 'x-seam-replace-body': replacement } : {}) }, body });
    expect((await post('grant_type=nonsense')).status).toBe(400);
    expect((await post('grant_type=nonsense', 'grant_type=client_credentials')).status).toBe(200);
    const exactly = `grant_type=client_credentials&pad=`;
    expect((await post(`${exactly}${'x'.repeat(PROVIDER_BODY_LIMIT_BYTES - exactly.length)}`)).status).toBe(200);
    const over = await post(`${exactly}${'x'.repeat(PROVIDER_BODY_LIMIT_BYTES - exactly.length + 1)}`);
    expect([over.status, (await json(over)).error]).toEqual([400, 'invalid_request']);
  });

  it('urlFor builds from ctx.mountPath: mounted at /oidc/v1 and told /base/oidc/v1, every URL it prints carries /base', async () => {
    const app = new Koa();
    app.use(mountProvider(provider, '/base/oidc/v1'));
    const callback = app.callback();
    const other = createServer((req, res) => void callback(req, res));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      const discovery = await json(await fetch(`${base}/oidc/v1/.well-known/openid-configuration`));
      expect(discovery.token_endpoint).toBe(`${base}/base/oidc/v1/token`);
      expect(discovery.registration_endpoint).toBe(`${base}/base/oidc/v1/register`);
      // The issuer is fixed by the constructor, not by the mount.
      expect(discovery.issuer).toBe(issuer);
    } finally {
      other.closeAllConnections();
      await new Promise<void>((resolve) => other.close(() => resolve()));
    }
  });

  it(`a stored token past its exp is still accepted for ${PROVIDER_CLOCK_TOLERANCE_SECONDS} s: ending on time is the store's TTL`, async () => {
    const id = `seam-iat-${randomUUID()}`;
    const real = Date.now();
    const now = Math.floor(real / 1000);
    // Written with a long TTL, so only oidc-provider's own check of `exp` can refuse it.
    await store.adapter(MODEL_NAMES.initialAccessToken).upsert(id, { jti: id, kind: MODEL_NAMES.initialAccessToken, iat: now, exp: now + 1 }, 3600);
    jest.spyOn(Date, 'now').mockReturnValue(real + (PROVIDER_CLOCK_TOLERANCE_SECONDS - 3) * 1000);
    expect(await provider.InitialAccessToken.find(id)).toBeDefined();
    jest.spyOn(Date, 'now').mockReturnValue(real + (PROVIDER_CLOCK_TOLERANCE_SECONDS + 3) * 1000);
    expect(await provider.InitialAccessToken.find(id)).toBeUndefined();
  });

  it("a client's keys oidc-provider would encrypt to with an algorithm: its key store's selection, by type, use and alg", async () => {
    const metadata = { client_id: 'seam-enc', client_secret: SECRET, redirect_uris: [REDIRECT], id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [rpEncJwk, rpJwk] } };
    // As registration stores a client (a static one is structuredClone'd into Node's realm, which oidc-provider refuses under Jest).
    await store.adapter('Client').upsert('seam-enc', JSON.parse(JSON.stringify(metadata)) as AdapterPayload, 3600);
    const client = await provider.Client.find('seam-enc');
    if (!client) throw new Error('no seam-enc client');
    expect((encryptionKeysFor(client, 'RSA-OAEP-256') as JWK[]).map((k) => k.kid)).toEqual(['rp-enc']);
    expect(encryptionKeysFor(client, 'ECDH-ES')).toEqual([]);
  });

  it('outside a request there is no request context', () => {
    expect(currentRequest()).toBeUndefined();
  });

  it('the error classes we throw and match on keep their OAuth error and status', () => {
    const cases: [Error & { status?: number; error?: string; expose?: boolean }, number, string][] = [
      [new errors.InvalidRequest('x', 405), 405, 'invalid_request'],
      [new errors.InvalidRequestObject('x'), 400, 'invalid_request_object'],
      [new errors.InvalidRequestUri('x'), 400, 'invalid_request_uri'],
      [new errors.InvalidGrant('x'), 400, 'invalid_grant'],
      [new errors.InvalidToken('x'), 401, 'invalid_token'],
      [new errors.InvalidClientMetadata('jwks: x'), 400, 'invalid_client_metadata'],
      // A description starting with redirect_uris becomes invalid_redirect_uri.
      [new errors.InvalidClientMetadata('redirect_uris: x'), 400, 'invalid_redirect_uri'],
      [new errors.OIDCProviderError(503, 'server_error'), 503, 'server_error'],
    ];
    for (const [err, status, error] of cases) expect([err.status, err.error]).toEqual([status, error]);
    expect(new errors.OIDCProviderError(503, 'server_error').expose).toBe(false);
    expect(new errors.InvalidRequest('x').expose).toBe(true);
  });
});

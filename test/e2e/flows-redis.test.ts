import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { CompactEncrypt, createLocalJWKSet, importJWK, jwtVerify, type JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { refOf } from '../../adapters/inventory.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { STORED_PARAMETERS_MAX_BYTES } from '../../lib/claims/request-size.js';
import { generateProviderKeys, issueInitialAccessToken } from '../../lib/index.js';
import { rotateKeysFile, type RotationStep } from '../../lib/provider/key-rotation.js';
import type { StatefulJwk } from '../../lib/provider/key-states.js';
import { throttleAddressKey } from '../../lib/web/client-address.js';
import { CookieKeyring } from '../../lib/web/cookie-keyring.js';
import { bracketFlood, bytesOf, countingModules, everySvcName, namesAcrossChannels, paddedTo, valuedFlood, type ClaimsObject } from '../helpers/claims-requests.js';
import { confidentialClient, pairwiseSubOf, startApp, type RunningApp } from '../helpers/app.js';
import { capturingLogger } from '../helpers/logs.js';
import { registerClient, type RegisteredClient, registeredClientParams, registeredClientUrl } from '../helpers/clients.js';
import { authorizationUrl, codeFlowUrl, FormBrowser, loginAttempts, pkcePair, redeemCode, redirectParams, runCodeFlow, signIn, userData } from '../helpers/flow.js';
import { deletePrefix, dumpPrefix, recordBytes, SHARED_REDIS_URL, testPrefix, TEST_STORE_TIMEOUT_MS } from '../helpers/redis.js';
import { managementCalls } from '../helpers/management-calls.js';
import { encryptionKey, manage, register, startKeySetServer, type KeySetServer } from '../helpers/registration.js';
import { outcomeOf, registerSigningClient, signRequestObject, type Outcome, type SigningClient } from '../helpers/request-objects.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { describeEachStore } from '../helpers/stores.js';
import { clientCacheFlows } from './flows/client-cache.js';
import { codeFlows } from './flows/code-flow.js';
import { races } from './flows/races.js';
import { tokenRaces } from './flows/token-races.js';
import { twoProcessFlows } from './flows/two-processes.js';

/**
 * Whole flows on Redis standalone (the feature suites run on the memory store; the adapter
 * contract suites, test/adapters/, run on every store; test/e2e/flows-cluster.test.ts is the
 * Cluster's file): the flows every store must carry, and what only Redis can show — record sizes
 * in Redis, nothing identifying in clear in its keys and values, a second process on the same store.
 */
for (const flows of [codeFlows, tokenRaces, races, clientCacheFlows, twoProcessFlows]) describeEachStore('on Redis', flows, ['redis standalone']);

/** Store properties for a fresh prefix of the shared test Redis. */
const onRedis = (prefix: string): Record<string, string | number> => ({ 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS });

/** Keys under `prefix` (`Model:hash`), optionally only one model's. */
async function keysOf(prefix: string, model = ''): Promise<string[]> {
  const redis = new Redis(SHARED_REDIS_URL);
  try {
    return await redis.keys(`${prefix}${model}*`);
  } finally {
    redis.disconnect();
  }
}

/** Bytes of every stored record under `prefix` but the `old` ones, by model (largest of each). */
async function largestRecords(prefix: string, old: ReadonlySet<string>): Promise<Record<string, number>> {
  const redis = new Redis(SHARED_REDIS_URL);
  const out: Record<string, number> = {};
  try {
    for (const key of await redis.keys(`${prefix}*`)) {
      const model = key.slice(prefix.length).split(':')[0] as string;
      // Records only: index keys (sessionUid, grant) hold references, not requests.
      const bytes = old.has(key) || model === 'sessionUid' ? undefined : await recordBytes(redis, key);
      if (bytes === undefined) continue;
      out[model] = Math.max(out[model] ?? 0, bytes);
    }
  } finally {
    redis.disconnect();
  }
  return out;
}

/** C5: what a request stores stays small. */
const RECORD_LIMIT = 16 * 1024;

describe('what one authorization request stores in Redis is bounded (C5: an interaction record stays within 16 KiB)', () => {
  const prefix = testPrefix('request-size');
  let running: RunningApp;
  let rp: RegisteredClient;

  beforeAll(async () => {
    // Modules that make every svc.* vocabulary name deliverable: the widest stored claims form.
    running = await startApp({ properties: onRedis(prefix), claimModules: [...createDemoClaimModules(), everySvcName] });
    rp = await registerClient(running, 'rsa');
  });
  afterAll(async () => {
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  const authorize = async (extra: Record<string, string>): Promise<string> => {
    const body = new URLSearchParams(registeredClientParams(rp, { state: 'st-size', ...extra }));
    const response = await fetch(`${running.issuer}/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() });
    return response.headers.get('location') ?? '';
  };
  const refusedSize = (location: string): number => {
    const redirect = redirectParams(location);
    expect([redirect.get('error'), redirect.get('state')]).toEqual(['invalid_request', 'st-size']);
    const match = /^the authorization request would store (\d+) bytes of parameters; at most 14336 are allowed$/.exec(redirect.get('error_description') ?? '');
    expect(match).not.toBeNull();
    return Number(match?.[1]);
  };

  it('accepts a request of exactly the limit, and its interaction record in Redis stays within 16 KiB', async () => {
    const probe = 'n'.repeat(20_000);
    const over = refusedSize(await authorize({ nonce: probe }));
    const nonce = 'n'.repeat(probe.length - (over - STORED_PARAMETERS_MAX_BYTES));
    expect(await authorize({ nonce })).toMatch(/^\/oidc\/v1\/interaction\/[\w-]+$/);
    expect(refusedSize(await authorize({ nonce: `${nonce}n` }))).toBe(STORED_PARAMETERS_MAX_BYTES + 1);
    const redis = new Redis(SHARED_REDIS_URL);
    try {
      const sizes: number[] = [];
      for (const key of await redis.keys(`${prefix}Interaction:*`)) sizes.push((await recordBytes(redis, key)) ?? 0);
      expect(Math.max(...sizes)).toBeGreaterThan(STORED_PARAMETERS_MAX_BYTES - 100);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(16 * 1024);
    } finally {
      redis.disconnect();
    }
  });
});

describe('the claims budget on Redis (C5, issue 14): a refused request stores nothing in Redis, the largest accepted ones at most 16 KiB a record', () => {
  const prefix = testPrefix('budget');
  let running: RunningApp;
  let rsa: RegisteredClient;

  beforeAll(async () => {
    running = await startApp({ properties: onRedis(prefix), claimModules: createDemoClaimModules() });
    rsa = await registerClient(running, 'rsa');
  });
  afterAll(async () => {
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  const params = (claims: ClaimsObject): Record<string, string> => registeredClientParams(rsa, { state: 'st-budget', claims: JSON.stringify(claims) });
  const authorize = async (claims: ClaimsObject, method: 'GET' | 'POST'): Promise<string> => {
    const response =
      method === 'GET'
        ? await fetch(authorizationUrl(running.issuer, params(claims)), { redirect: 'manual' })
        : await fetch(`${running.issuer}/authorize`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params(claims)).toString() });
    return response.headers.get('location') ?? '';
  };
  const nested = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`);
  const ISSUE_14_ATTACK = { userinfo: bracketFlood(96, 'verification-procedure-variant-with-a-long-descriptive-segment-name-and-more-') };

  it.each<[string, 'GET' | 'POST', () => ClaimsObject, string]>([
    ['the 14.8 KB attack request of issue 14', 'POST', () => ISSUE_14_ATTACK, `the claims parameter is ${bytesOf(ISSUE_14_ATTACK)} bytes; at most 8192 are allowed`],
    ['96 bracketed names × 129 expansions', 'GET', () => ({ userinfo: bracketFlood(96) }), 'the claims parameter expands to 12384 claim names; at most 256 are allowed'],
    ['96 bracketed names × 129 expansions', 'POST', () => ({ userinfo: bracketFlood(96) }), 'the claims parameter expands to 12384 claim names; at most 256 are allowed'],
    ['257 names split over id_token and userinfo', 'GET', () => namesAcrossChannels(257), 'the claims parameter expands to 257 claim names; at most 256 are allowed'],
    ['8193 bytes, 4096 of its characters two-byte', 'POST', () => paddedTo({ id_token: { email: null } }, 8193, 'ä'), 'the claims parameter is 8193 bytes; at most 8192 are allowed'],
    ['8193 bytes', 'GET', () => paddedTo({ id_token: { email: null } }, 8193), 'the claims parameter is 8193 bytes; at most 8192 are allowed'],
    ['a value nested 17 levels deep', 'GET', () => ({ id_token: { email: { value: nested(17) } } }), 'claims.id_token.email: value is nested more than 16 levels deep'],
    ['a value nested 2500 levels deep', 'POST', () => ({ userinfo: { email: { value: nested(2500) } } }), 'claims.userinfo.email: value is nested more than 16 levels deep'],
    ['a sub value nested 2500 levels deep', 'POST', () => ({ id_token: { sub: { value: { a: nested(2500) } } } }), 'claims.id_token.sub: value is nested more than 16 levels deep'],
  ])('refuses %s (%s), redirected with state, no interaction stored in Redis', async (_name, method, claims, description) => {
    const before = (await keysOf(prefix, 'Interaction:')).length;
    const redirect = redirectParams(await authorize(claims(), method));
    expect({ error: redirect.get('error'), description: redirect.get('error_description'), state: redirect.get('state') }).toEqual({ error: 'invalid_request', description, state: 'st-budget' });
    expect((await keysOf(prefix, 'Interaction:')).length).toBe(before);
  });

  it('refuses 20 concurrent attack requests alike, storing nothing in Redis', async () => {
    const before = (await keysOf(prefix, 'Interaction:')).length;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => authorize({ userinfo: bracketFlood(96, `c${i}-`) }, i % 2 ? 'GET' : 'POST')));
    for (const location of results) expect(redirectParams(location).get('error_description')).toBe('the claims parameter expands to 12384 claim names; at most 256 are allowed');
    expect((await keysOf(prefix, 'Interaction:')).length).toBe(before);
  });

  // The request that grows most when stored is the one of short names each asking for a value
  // (a MAC replaces `0`); `minimum` shows each case really stored what it is about.
  it.each<[string, () => ClaimsObject, string, number]>([
    ['256 names over both channels', () => namesAcrossChannels(256), 'code', 2000],
    ['8 KiB of short names each asking for a value', () => valuedFlood(), 'code', 14000],
    ['8 KiB of essential names asking for values the account lacks', () => valuedFlood({ essential: true, value: 'not-the-value' }), 'access_denied', 9000],
    ['8 KiB exactly, in one long value', () => paddedTo(namesAcrossChannels(255), 8192), 'code', 2000],
  ])('stores at most 16 KiB per record for the largest accepted requests: %s', async (_name, claims, outcome, minimum) => {
    const old = new Set(await keysOf(prefix));
    const request = claims();
    expect(bytesOf(request)).toBeLessThanOrEqual(8192);
    const { verifier, challenge } = pkcePair();
    const browser = new FormBrowser();
    const largest: Record<string, number> = {};
    const note = async (): Promise<void> => {
      for (const [model, bytes] of Object.entries(await largestRecords(prefix, old))) largest[model] = Math.max(largest[model] ?? 0, bytes);
    };
    let step = await browser.follow(authorizationUrl(running.issuer, { ...params(request), code_challenge: challenge }), running.baseUrl);
    await note();
    step = await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    await note();
    if (!step.leftTo) {
      step = await browser.submit('consent-allow', {}, running.baseUrl);
      await note();
    }
    const redirect = redirectParams(step.leftTo as string);
    if (outcome === 'code') {
      const code = redirect.get('code') as string;
      expect((await redeemCode(running.issuer, rsa.metadata, code, verifier)).status).toBe(200);
      await note();
    } else {
      expect(redirect.get('error')).toBe(outcome);
    }
    expect(largest.Interaction).toBeGreaterThan(minimum);
    for (const [model, bytes] of Object.entries(largest)) expect({ model, bytes, within: bytes <= RECORD_LIMIT }).toEqual({ model, bytes, within: true });
  }, 30_000);
});

/**
 * Counts the round trips the store's client sends (a pipeline or MULTI is one), leaving out its memory looks (INFO) and
 * the walks of a deletion (SCAN: as many as the whole keyspace of the shared test Redis asks).
 */
function countTrips(client: Redis): { trips: number } {
  const counted = { trips: 0 };
  const pipelines = new WeakSet<object>();
  const original = client.sendCommand.bind(client) as (command: { name: string }, stream?: { isPipeline?: boolean }) => unknown;
  (client as { sendCommand: unknown }).sendCommand = (command: { name: string }, stream?: { isPipeline?: boolean }): unknown => {
    if (command.name !== 'info' && command.name !== 'scan' && (!stream?.isPipeline || !pipelines.has(stream))) counted.trips += 1;
    if (stream?.isPipeline) pipelines.add(stream);
    return original(command, stream);
  };
  return counted;
}

describe('what one code flow costs Redis (docs/performance.md): round trips per request', () => {
  const prefix = testPrefix('flow-trips');
  const rp = confidentialClient({ client_id: 'trips-rp' });
  const running = appPerSuite({ clients: [rp], properties: onRedis(prefix) });
  afterAll(async () => deletePrefix(SHARED_REDIS_URL, prefix));

  /** One code flow of a browser, its round trips by request: authorization, pages, forms, resumes, token, UserInfo. */
  async function flowTrips(counted: { trips: number }): Promise<[string, number][]> {
    const steps: [string, number][] = [];
    const browser = new FormBrowser();
    const request = browser.request.bind(browser);
    const step = async <T>(name: string, send: () => Promise<T>): Promise<T> => {
      const before = counted.trips;
      const answer = await send();
      steps.push([name, counted.trips - before]);
      return answer;
    };
    browser.request = (url, init) => {
      const { pathname } = new URL(url);
      const name = init?.method === 'POST' ? pathname.split('/').pop() ?? '' : pathname.includes('/interaction/') ? 'page' : /\/authorize\/./.test(pathname) ? 'resume' : 'authorize';
      return step(name, () => request(url, init));
    };
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, rp, { code_challenge: challenge }), { browser });
    const tokens = await step('token', () => redeemCode(running.issuer, rp, callbackUrl.searchParams.get('code') as string, verifier));
    const userinfo = await step('userinfo', () => fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${String(tokens.body.access_token)}` } }));
    expect([tokens.status, userinfo.status]).toEqual([200, 200]);
    return steps;
  }

  let counter: { trips: number } | undefined;
  const counted = (): { trips: number } => (counter ??= countTrips((running.app.svc.store as unknown as { client: Redis }).client));

  it('honest: the reads a request names together go in one round trip, and a mark checked after a write in the write\'s', async () => {
    // The first flow fills the process's caches (the client's disabling and deletion marks).
    await flowTrips(counted());
    expect(await flowTrips(counted())).toEqual([
      ['authorize', 1],
      ['page', 1],
      ['login', 4],
      ['resume', 2],
      // Her interaction and session together (both named by cookies), then her session's revocation mark.
      ['page', 2],
      // Her interaction and session together; her grant's write and its revocation mark; the interaction's result.
      ['confirm', 3],
      // Her session and interaction together, the grant, the request's writes.
      ['resume', 3],
      // The code; its grant and session; the consume; the token's writes and its grant's revocation mark.
      ['token', 4],
      ['userinfo', 3],
    ]);
  });

  it('honest: her sign-out ends her session and its uid index, in as many round trips as it ended her session alone', async () => {
    const browser = new FormBrowser();
    await signIn(codeFlowUrl(running.issuer, rp), { browser });
    const stored = async (): Promise<[number, number]> => [(await keysOf(prefix, 'Session:')).length, (await keysOf(prefix, 'sessionUid:')).length];
    const [sessions, indexed] = await stored();
    await browser.follow(`${running.issuer}/logout`, running.baseUrl);
    const body = new URLSearchParams({ ...browser.hiddenFields('op.logoutForm'), logout: 'yes' }).toString();
    const before = counted().trips;
    await browser.request(browser.formAction('op.logoutForm', running.baseUrl), { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', origin: running.baseUrl }, body });
    // As many as before the index was removed with her session (in its deletion's round trip).
    expect(counted().trips - before).toBe(10);
    expect(await stored()).toEqual([sessions - 1, indexed - 1]);
  });

  it('attack: an interaction cookie whose signature does not verify reads nothing ahead (the page costs Redis nothing); honest: signed, it and her session are read in one round trip', async () => {
    const browser = new FormBrowser();
    await signIn(codeFlowUrl(running.issuer, rp), { browser });
    await browser.follow(codeFlowUrl(running.issuer, rp, { prompt: 'login' }), running.baseUrl);
    expect(browser.lastPage).toContain('id="login-form"');
    const page = browser.formAction('login-form', running.baseUrl).replace(/\/login$/, '');
    const [value, signature] = [browser.cookie('_interaction') as string, browser.cookie('_interaction.sig') as string];
    const ring = new CookieKeyring(running.app.svc.cookieKeys);
    // A browser sends the resume cookie only to the resume's path (this jar knows no paths).
    browser.setCookie('_interaction_resume', '');
    const tripsOf = async (cookies: [string, string | undefined][]): Promise<number> => {
      for (const [name, v] of cookies) if (v !== undefined) browser.setCookie(name, v);
      const before = counted().trips;
      await browser.request(page);
      browser.setCookie('_interaction', value);
      browser.setCookie('_interaction.sig', signature);
      return counted().trips - before;
    };
    const forged: [string, string | undefined][][] = [
      [['_interaction', `${value}x`]],
      [['_interaction.sig', new CookieKeyring(['another key of at least thirty-two characters']).sign(`_interaction=${value}`)]],
      [['_interaction.sig', ring.sign(`_session=${value}`)]],
      [['_interaction.sig', '']],
    ];
    for (const cookies of forged) expect({ cookies, trips: await tripsOf(cookies) }).toEqual({ cookies, trips: 0 });
    expect(await tripsOf([])).toBe(1);
  });
});

describe('what a client\'s own registration requests cost Redis: round trips per request', () => {
  const prefix = testPrefix('registration-trips');
  const running = appPerSuite({ properties: onRedis(prefix) });
  afterAll(async () => deletePrefix(SHARED_REDIS_URL, prefix));

  it('honest: a client that was never issued a new registration access token reads, updates and deletes its registration at the cost it had before the reissue existed, but one read of its (absent) reissue mark a minute', async () => {
    const metadata = { redirect_uris: ['https://rp.example/cb'], token_endpoint_auth_method: 'none' };
    const registered = await register(running, metadata, (await issueInitialAccessToken(running.app.svc.provider)).token);
    const uri = String(registered.body.registration_client_uri);
    let token = String(registered.body.registration_access_token);
    const counter = countTrips((running.app.svc.store as unknown as { client: Redis }).client);
    const steps: [string, number, number][] = [];
    for (const [name, method] of [['read', 'GET'], ['update', 'PUT'], ['read', 'GET'], ['delete', 'DELETE']] as const) {
      const before = counter.trips;
      const answer = await manage(uri, method, token, method === 'PUT' ? { client_id: registered.body.client_id, ...metadata } : undefined);
      steps.push([name, answer.status, counter.trips - before]);
      if (typeof answer.body.registration_access_token === 'string') token = answer.body.registration_access_token;
    }
    // As before the reissue existed (6, 5, 6, 8), but the first read: its mark, not yet in this process's cache.
    expect(steps).toEqual([['read', 200, 7], ['update', 200, 5], ['read', 200, 6], ['delete', 204, 8]]);
  });
});

describe('the operator toolbox with two processes on one Redis', () => {
  const prefix = testPrefix('toolbox');
  const PASSWORD = 'toolbox-password-123';
  const AUTH = `Basic ${Buffer.from(`operator:${PASSWORD}`).toString('base64')}`;
  const M = '/oidc/v1/management';
  const running = appPerSuite({ properties: { ...onRedis(prefix), 'svc.management.user': 'operator', 'svc.management.password': PASSWORD, 'svc.proxy': true, 'svc.management.lockout-threshold': 3 } });
  afterAll(async () => deletePrefix(SHARED_REDIS_URL, prefix));
  const call = managementCalls(running, AUTH);

  it('disables a client in every process at once: the other process refuses it at token and UserInfo; enable restores it there too', async () => {
    const client = await registerClient(running, 'plain');
    const basicOf = `Basic ${Buffer.from(`${client.metadata.client_id}:${String(client.metadata.client_secret)}`).toString('base64')}`;
    const flow = await runCodeFlow(running.issuer, client.metadata, { skipUserinfo: true });
    // A second process on the same store: it serves the client until it is disabled.
    const other = await startApp({ properties: { ...onRedis(prefix), 'svc.base-url': running.baseUrl, 'svc.management.password': PASSWORD } });
    const userinfoAtOther = async (): Promise<number> => (await fetch(`${other.issuer}/userinfo`, { headers: { authorization: `Bearer ${flow.tokens.access_token}` } })).status;
    try {
      expect(await userinfoAtOther()).toBe(200);
      const disabled = await call('POST', `${M}/clients/${client.metadata.client_id}/disable`);
      expect([disabled.status, disabled.body]).toEqual([200, { client_id: client.metadata.client_id, disabled: true, changed: true }]);
      const elsewhere = await fetch(`${other.issuer}/token`, {
        method: 'POST',
        headers: { authorization: basicOf, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code&code=nope&redirect_uri=https%3A%2F%2Frp.example%2Fcb',
      });
      expect([elsewhere.status, ((await elsewhere.json()) as { error?: string }).error]).toEqual([401, 'invalid_client']);
      expect(await userinfoAtOther()).toBe(401);
      expect((await call('POST', `${M}/clients/${client.metadata.client_id}/enable`)).body).toEqual({ client_id: client.metadata.client_id, disabled: false, changed: true });
      expect(await userinfoAtOther()).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('attack: a disabled client whose mark was overwritten with a value the store cannot read (an operator\'s edit) stays refused, at UserInfo and token (500 server_error, no token stored), logged with the mark\'s reference; honest: the key deleted, she is disabled and enabled as meant', async () => {
    // An app of its own, of another issuer than the suite's: on a key prefix of its own.
    const ownPrefix = `${prefix}own-${randomUUID().slice(0, 8)}:`;
    const { logger, lines } = capturingLogger();
    const own = await startApp({ logger, properties: { ...onRedis(ownPrefix), 'svc.management.user': 'operator', 'svc.management.password': PASSWORD, 'svc.proxy': true } });
    const redis = new Redis(SHARED_REDIS_URL);
    try {
      const toolbox = managementCalls(own, AUTH);
      const client = await registerClient(own, 'plain');
      const id = String(client.metadata.client_id);
      const flow = await runCodeFlow(own.issuer, client.metadata, { skipUserinfo: true });
      const answer = async (response: Response): Promise<[number, unknown]> => [response.status, ((await response.json()) as { error?: unknown }).error];
      const userinfo = async (): Promise<[number, unknown]> => answer(await fetch(`${own.issuer}/userinfo`, { headers: { authorization: `Bearer ${flow.tokens.access_token}` } }));
      const token = async (): Promise<[number, unknown]> =>
        answer(await fetch(`${own.issuer}/token`, {
          method: 'POST',
          headers: { authorization: `Basic ${Buffer.from(`${id}:${String(client.metadata.client_secret)}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=authorization_code&code=nope&redirect_uri=https%3A%2F%2Frp.example%2Fcb',
        }));
      const mark = `${ownPrefix}ClientSuspension:${refOf(id)}`;
      const overwrite = async (value: string | null): Promise<void> => {
        await (value === null ? redis.del(mark) : redis.set(mark, value));
        await redis.publish(`${ownPrefix}invalidate`, `ClientSuspension:${refOf(id)}`);
      };
      expect((await toolbox('POST', `${M}/clients/${id}/disable`)).status).toBe(200);
      const tokensBefore = await keysOf(ownPrefix, 'AccessToken');
      for (const value of ['1', '-|null', '-|not json']) {
        await overwrite(value);
        expect(await userinfo()).toEqual([500, 'server_error']);
        expect(await token()).toEqual([500, 'server_error']);
      }
      expect(await keysOf(ownPrefix, 'AccessToken')).toEqual(tokensBefore);
      const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.e === 'store_record_unreadable');
      expect(logged.length).toBeGreaterThanOrEqual(6);
      expect(new Set(logged.map((line) => JSON.stringify(line)))).toEqual(new Set([JSON.stringify({ e: 'store_record_unreadable', store: 'redis', model: 'ClientSuspension', ref: refOf(id) })]));
      await overwrite(null);
      expect(await userinfo()).toEqual([200, undefined]);
      expect((await toolbox('POST', `${M}/clients/${id}/disable`)).body).toMatchObject({ disabled: true, changed: true });
      expect(await userinfo()).toEqual([401, 'invalid_token']);
      expect((await toolbox('POST', `${M}/clients/${id}/enable`)).body).toMatchObject({ disabled: false, changed: true });
      expect(await userinfo()).toEqual([200, undefined]);
    } finally {
      redis.disconnect();
      await own.close();
    }
  });

  it('honest: while other keys hold values the store did not write (a damaged restore), the toolbox still revokes her and deletes a client, those records skipped and logged: each signs nobody in, as every read of it fails', async () => {
    // An app of its own, of another issuer than the suite's: on a key prefix of its own.
    const ownPrefix = `${prefix}own-${randomUUID().slice(0, 8)}:`;
    const { logger, lines } = capturingLogger();
    const own = await startApp({ logger, properties: { ...onRedis(ownPrefix), 'svc.management.user': 'operator', 'svc.management.password': PASSWORD, 'svc.proxy': true } });
    const redis = new Redis(SHARED_REDIS_URL);
    const damaged = ['Session', 'Grant', 'RegistrationAccessToken'].map((model) => ({ model, ref: refOf(`damaged-${model}`) }));
    try {
      const toolbox = managementCalls(own, AUTH);
      const [client, other] = await Promise.all([registerClient(own, 'plain'), registerClient(own, 'plain')]);
      const flow = await runCodeFlow(own.issuer, client.metadata, { skipUserinfo: true });
      const userinfo = async (): Promise<number> => (await fetch(`${own.issuer}/userinfo`, { headers: { authorization: `Bearer ${flow.tokens.access_token}` } })).status;
      expect(await userinfo()).toBe(200);
      for (const { model, ref } of damaged) await redis.set(`${ownPrefix}${model}:${ref}`, '-|not json');

      const revoked = await toolbox('POST', `${M}/subjects/revoke`, { body: 'sub=demo-0001', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect([revoked.status, revoked.body]).toEqual([200, expect.objectContaining({ revoked_sessions: expect.any(Number), revoked_grants: expect.any(Number) })]);
      expect((revoked.body as { revoked_grants: number }).revoked_grants).toBeGreaterThan(0);
      expect(await userinfo()).toBe(401);
      expect((await toolbox('DELETE', `${M}/clients/${String(other.metadata.client_id)}`)).body).toMatchObject({ deleted: true });
      const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.e === 'store_record_unreadable');
      expect(new Set(logged.map((line) => `${String(line.model)}:${String(line.ref)}`))).toEqual(new Set(damaged.map(({ model, ref }) => `${model}:${ref}`)));
      // Skipped, not removed: the operator deletes each key the log names.
      for (const { model, ref } of damaged) expect(await redis.get(`${ownPrefix}${model}:${ref}`)).toBe('-|not json');
    } finally {
      for (const { model, ref } of damaged) await redis.del(`${ownPrefix}${model}:${ref}`);
      redis.disconnect();
      await own.close();
    }
  });

  it('refuses a cursor of ours whose SCAN position is pushed past what Redis accepts (2^64 - 1) as a bad cursor, not an outage (503)', async () => {
    for (let i = 0; i < 3; i += 1) await issueInitialAccessToken(running.app.svc.provider);
    const first = await call('GET', `${M}/invitations?limit=1`);
    const handed = first.body.next_cursor as string;
    expect(typeof handed).toBe('string');
    const state = JSON.parse(Buffer.from(handed, 'base64url').toString('utf8')) as Record<string, unknown>;
    for (const c of ['18446744073709551616', '99999999999999999999']) {
      const tampered = Buffer.from(JSON.stringify({ ...state, c })).toString('base64url');
      const answer = await call('GET', `${M}/invitations?cursor=${tampered}`);
      expect([answer.status, answer.body.error]).toEqual([400, 'invalid_request']);
    }
    const after = await call('GET', `${M}/invitations?limit=1`);
    expect([after.status, Array.isArray(after.body.invitations)]).toEqual([200, true]);
  });
});

describe('login throttling on Redis (C8): counters under keys that say nothing', () => {
  const prefix = testPrefix('throttle');
  const client: ClientMetadata = confidentialClient();
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ clients: [client], properties: { ...onRedis(prefix), 'svc.proxy': true, 'svc.login.lockout-seconds': 600, 'svc.login.lockout-max-seconds': 1200, 'svc.login.address-threshold': 5 } });
  });
  afterAll(async () => {
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });



  it('counts one client once whatever port the trusted proxy appended, and keeps neither its address, a device id nor a plain hash of them in the store', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await (await loginAttempts(running, client)).attempt(`port-user-${i}`, 'wrong', `evil, 203.0.113.177:5${i}`)).status);
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429, 429]);
    const device = await loginAttempts(running, client);
    await device.attempt('demo', 'demo', '198.51.100.200');
    const deviceId = (device.browser.cookie('svc.device') ?? '').split('.')[0] ?? '';
    const dump = await dumpPrefix(SHARED_REDIS_URL, prefix);
    const text = [...dump].flat().join('\n');
    const plain = createHash('sha256').update(`login-address:${throttleAddressKey('203.0.113.177')}`).digest('base64url');
    for (const needle of ['203.0.113.177', plain, deviceId, createHash('sha256').update('203.0.113.177').digest('hex'), createHash('sha256').update('203.0.113.177').digest('base64url')]) {
      expect(text).not.toContain(needle);
    }
    expect([...dump.keys()].some((k) => k.includes('attempts:'))).toBe(true); // the counter is there, under a key that says nothing
  });
});

/**
 * Issue 22's attacks as whole flows on Redis (the feature suites run on the memory store:
 * test/integration/consent-first.test.ts, consent-delivery.test.ts; the stored hints:
 * test/e2e/privacy-sentinels.test.ts).
 */
describe('consent first, consent covers delivery, each claim once: whole flows on Redis', () => {
  const prefix = testPrefix('privacy');
  let running: RunningApp;
  let calls = { count: 0 };

  beforeAll(async () => {
    const counted = countingModules(createDemoClaimModules());
    calls = counted.calls;
    running = await startApp({ claimModules: counted.modules, properties: { 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix } });
  });
  afterAll(async () => {
    await running.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  it('tells an unapproved client nothing, asks again after its delivery weakened, and sends each claim once', async () => {
    const [friend, attacker] = await Promise.all([registerClient(running, 'rsa'), registerClient(running, 'rsa')]);
    const urlFor = (client_id: unknown, params: Record<string, string>): string =>
      authorizationUrl(running.issuer, { client_id: String(client_id), response_type: 'code', redirect_uri: 'https://rp.example/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', scope: 'openid', ...params });
    const guess = (value: string): string => JSON.stringify({ id_token: { email: { essential: true, value } } });
    const browser = new FormBrowser();
    await signIn(urlFor(friend.metadata.client_id, { scope: 'openid email' }), { browser });

    // 1. Before consent: the same page for a wrong and a right guess, and no module asked.
    const before = calls.count;
    for (const value of ['someone.else@example.com', 'erika.mustermann@example.com']) {
      await browser.follow(urlFor(attacker.metadata.client_id, { claims: guess(value) }), running.baseUrl);
      expect(browser.lastPage).toContain('id="consent-allow"');
      const silent = await browser.follow(urlFor(attacker.metadata.client_id, { claims: guess(value), prompt: 'none' }), running.baseUrl);
      expect(redirectParams(silent.leftTo as string).get('error')).toBe('consent_required');
    }
    expect(calls.count).toBe(before);
    expect((await signIn(urlFor(attacker.metadata.client_id, { claims: guess('someone.else@example.com') }), { browser })).callbackUrl.searchParams.get('error')).toBe('access_denied');

    // 4. Each claim once: the scope's claims in the ID token, UserInfo holds sub only.
    const flow = await runCodeFlow(running.issuer, friend.metadata, { scope: 'openid email', configure: friend.configure, browser });
    expect(userData(flow.claims)).toEqual({ email: 'erika.mustermann@example.com', email_verified: true });
    expect(userData(flow.userinfo)).toEqual({});

    // 2. The client drops encryption and opts out: asked again; the earlier token delivers nothing in plaintext.
    const { registration_access_token: token, registration_client_uri: uri } = friend.metadata as Record<string, unknown>;
    const weakened = await manage(uri as string, 'PUT', token as string, { client_id: friend.metadata.client_id, redirect_uris: ['https://rp.example/cb'], allow_unencrypted_userinfo: true });
    expect(weakened.status).toBe(200);
    const silent = await browser.follow(urlFor(friend.metadata.client_id, { scope: 'openid email', prompt: 'none' }), running.baseUrl);
    expect(redirectParams(silent.leftTo as string).get('error')).toBe('consent_required');
    const earlier = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${flow.tokens.access_token}` } });
    expect(earlier.headers.get('content-type')).toContain('application/json');
    expect(userData((await earlier.json()) as Record<string, unknown>)).toEqual({});
  });

  it('verified_claims on Redis: nothing asked before consent, the decrypted answer after, the consent page again for one more verified claim', async () => {
    const client = await registerClient(running, 'rsa');
    const verified = (claims: Record<string, null>): string =>
      JSON.stringify({ userinfo: { verified_claims: { verification: { trust_framework: null, evidence: [{ type: { value: 'document' }, document_details: null }] }, claims } } });
    const urlFor = (params: Record<string, string>): string =>
      authorizationUrl(running.issuer, { client_id: String(client.metadata.client_id), response_type: 'code', redirect_uri: 'https://rp.example/cb', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', scope: 'openid', ...params });
    const browser = new FormBrowser();
    await signIn(urlFor({}), { browser });

    const before = calls.count;
    const silent = await browser.follow(urlFor({ claims: verified({ given_name: null, family_name: null }), prompt: 'none' }), running.baseUrl);
    expect(redirectParams(silent.leftTo as string).get('error')).toBe('consent_required');
    expect(calls.count).toBe(before);

    const flow = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params: { claims: verified({ given_name: null, family_name: null }) } });
    expect(userData(flow.userinfo)).toEqual({
      verified_claims: {
        verification: { trust_framework: 'https://svc-connect.example/trust-frameworks/demo', evidence: [{ type: 'document', document_details: { type: 'idcard' } }] },
        claims: { given_name: 'Erika', family_name: 'Mustermann' },
      },
    });

    const more = await browser.follow(urlFor({ claims: verified({ given_name: null, birthdate: null }) }), running.baseUrl);
    expect(more.leftTo).toBeUndefined();
    expect(browser.lastPage).toContain('id="consent-allow"');
  });
});

/**
 * Two provider instances on one Redis behind a load balancer without stickiness (docs/operations/production.md): what
 * the operator does through A, B does on the very next request; a single-use thing used at both at once is used once;
 * a flow hops between them. B serves A's issuer (one public origin), with the same cookie and pairwise keys.
 */
describe('two provider instances on one Redis act as one provider', () => {
  const prefix = testPrefix('two-apps');
  const PASSWORD = 'two-apps-password-123';
  const AUTH = `Basic ${Buffer.from(`operator:${PASSWORD}`).toString('base64')}`;
  const M = '/oidc/v1/management';
  const REDIRECT = 'https://rp.example/cb';
  const shared = {
    ...onRedis(prefix),
    'svc.management.user': 'operator',
    'svc.management.password': PASSWORD,
    'svc.proxy': true,
    'svc.cookies.keys': 'two-apps-cookie-key-0123456789abcdef',
    'svc.login.lockout-threshold': 3,
    'svc.fetch.allow-private-network': true,
  };
  const a = appPerSuite({ properties: shared });
  const b = appPerSuite(() => ({ properties: { ...shared, 'svc.base-url': a.baseUrl } }));
  afterAll(async () => deletePrefix(SHARED_REDIS_URL, prefix));
  const callA = managementCalls(a, AUTH);

  /** A code of `client` for `login` (signed in at A in `browser`), with its verifier. */
  const codeOf = async (client: RegisteredClient, options: { browser?: FormBrowser; login?: string } = {}): Promise<{ code: string; verifier: string; browser: FormBrowser }> => {
    const { verifier, challenge } = pkcePair();
    const { callbackUrl, browser } = await signIn(registeredClientUrl(a.issuer, client, { code_challenge: challenge }), { browser: options.browser, login: options.login, password: options.login });
    return { code: callbackUrl.searchParams.get('code') as string, verifier, browser };
  };
  /** Tokens of `client` for `login`, the code redeemed at A. */
  const tokensOf = async (client: RegisteredClient, options: { browser?: FormBrowser; login?: string } = {}): Promise<{ access: string; browser: FormBrowser }> => {
    const issued = await codeOf(client, options);
    const redeemed = await redeemCode(a.issuer, client.metadata, issued.code, issued.verifier);
    expect(redeemed.status).toBe(200);
    return { access: redeemed.body.access_token as string, browser: issued.browser };
  };
  const userinfoAt = async (app: RunningApp, access: string): Promise<number> => (await fetch(`${app.issuer}/userinfo`, { headers: { authorization: `Bearer ${access}` } })).status;
  /** The outcome of an authorization request of `client` at `app` (with `browser`'s cookies): its error, `code`, or `interaction`. */
  const authorizeAt = async (app: RunningApp, client: RegisteredClient, params: Record<string, string> = {}, browser = new FormBrowser()): Promise<string> => {
    const response = await browser.request(registeredClientUrl(app.issuer, client, params));
    const location = response.headers.get('location');
    if (location?.startsWith(REDIRECT)) return redirectParams(location).get('error') ?? 'code';
    if (location) return /\/interaction\/[\w-]+$/.test(location) ? 'interaction' : location;
    // An error that cannot go back to the client: oidc-provider's page names it.
    return `${response.status} ${/<code>(\w+)<\/code>/.exec(await response.text())?.[1]}`;
  };
  /** The token endpoint's answer at `app` to `issued`: its status and error. */
  const redeemAt = async (app: RunningApp, client: RegisteredClient, issued: { code: string; verifier: string }): Promise<[number, unknown]> => {
    const answer = await redeemCode(app.issuer, client.metadata, issued.code, issued.verifier);
    return [answer.status, answer.body.error];
  };

  it('attack: a client disabled through A is refused at B on the very next request (authorize, token with her issued code, UserInfo); honest: enabled again at A, it works at B', async () => {
    const client = await registerClient(a, 'plain');
    const id = String(client.metadata.client_id);
    const { access } = await tokensOf(client);
    const issued = await codeOf(client);
    // B has the client in its cache.
    expect([await authorizeAt(b, client), await userinfoAt(b, access)]).toEqual(['interaction', 200]);

    expect((await callA('POST', `${M}/clients/${id}/disable`)).body).toEqual({ client_id: id, disabled: true, changed: true });
    expect([await authorizeAt(b, client), await redeemAt(b, client, issued), await userinfoAt(b, access)]).toEqual(['400 invalid_client', [401, 'invalid_client'], 401]);

    expect((await callA('POST', `${M}/clients/${id}/enable`)).body).toEqual({ client_id: id, disabled: false, changed: true });
    expect([await authorizeAt(b, client), await redeemAt(b, client, issued), await userinfoAt(b, access)]).toEqual(['interaction', [200, undefined], 200]);
  });

  /** Key sets the relying parties serve, by path; a fetch can be held until the test answers it. */
  let docs: KeySetServer;
  beforeAll(async () => (docs = await startKeySetServer()));
  afterAll(async () => docs?.close());

  /** A token request at B of a client whose ID token is encrypted to its `jwks_uri`, held at that fetch (B loads the keys then). */
  const redeemingHeldAtB = async (): Promise<{ client: RegisteredClient; issued: { code: string; verifier: string }; release: () => void; redeeming: Promise<[number, unknown]> }> => {
    const where = `/two-apps-${docs.sets.size}/jwks`;
    docs.sets.set(where, [(await encryptionKey('RSA-OAEP-256', { kid: 'rp-enc' })).jwk]);
    const client = await registerClient(a, 'plain', { jwks_uri: `${docs.url}${where}`, id_token_encrypted_response_alg: 'RSA-OAEP-256' });
    const issued = await codeOf(client);
    const { arrived, release } = docs.hold(where);
    const redeeming = redeemAt(b, client, issued);
    expect(await Promise.race([arrived.then(() => 'held'), redeeming.then(() => 'not held')])).toBe('held');
    return { client, issued, release, redeeming };
  };

  it('attack: a token request held at B while the client is disabled through A is answered 401 invalid_client and keeps no token; the code redeems at B once enabled', async () => {
    const { client, issued, release, redeeming } = await redeemingHeldAtB();
    const id = String(client.metadata.client_id);
    const tokens = (await keysOf(prefix, 'AccessToken:')).length;
    expect((await callA('POST', `${M}/clients/${id}/disable`)).status).toBe(200);
    release();
    expect(await redeeming).toEqual([401, 'invalid_client']);
    expect((await keysOf(prefix, 'AccessToken:')).length).toBe(tokens);
    expect((await callA('POST', `${M}/clients/${id}/enable`)).status).toBe(200);
    expect(await redeemAt(b, client, issued)).toEqual([200, undefined]);
  });

  it('honest: a token request held at B while the client is disabled and enabled again through A gets its tokens', async () => {
    const { client, release, redeeming } = await redeemingHeldAtB();
    const id = String(client.metadata.client_id);
    expect((await callA('POST', `${M}/clients/${id}/disable`)).status).toBe(200);
    expect((await callA('POST', `${M}/clients/${id}/enable`)).status).toBe(200);
    release();
    expect(await redeeming).toEqual([200, undefined]);
  });

  it('attack: a client deleted through A is refused at B on the very next request; honest: her other client works on at B', async () => {
    const [client, other] = await Promise.all([registerClient(a, 'plain'), registerClient(a, 'plain')]);
    const id = String(client.metadata.client_id);
    const [{ access }, kept] = await Promise.all([tokensOf(client), tokensOf(other)]);
    const issued = await codeOf(client);
    expect([await authorizeAt(b, client), await userinfoAt(b, access)]).toEqual(['interaction', 200]);

    expect((await callA('DELETE', `${M}/clients/${id}`)).body).toMatchObject({ client_id: id, deleted: true });
    expect([await authorizeAt(b, client), await redeemAt(b, client, issued), await userinfoAt(b, access)]).toEqual(['400 invalid_client', [401, 'invalid_client'], 401]);
    expect([await authorizeAt(b, other), await userinfoAt(b, kept.access)]).toEqual(['interaction', 200]);
  });

  /** Revokes a person through A: `sub` as `client` received it, in the form body. */
  const revokeAtA = async (client: RegisteredClient, login = 'demo-0001'): Promise<Record<string, unknown>> => {
    const body = new URLSearchParams({ sub: pairwiseSubOf(REDIRECT, login), client_id: String(client.metadata.client_id) }).toString();
    const answer = await callA('POST', `${M}/subjects/revoke`, { body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(answer.status).toBe(200);
    return answer.body;
  };

  it('attack: a person revoked through A is signed out and her grants end at B at once (session, issued code, UserInfo); honest: another person is untouched', async () => {
    const client = await registerClient(a, 'plain');
    const { access, browser } = await tokensOf(client);
    const issued = await codeOf(client, { browser });
    const other = await tokensOf(client, { login: 'demo-basic' });
    expect([await authorizeAt(b, client, { prompt: 'none' }, browser), await userinfoAt(b, access)]).toEqual(['code', 200]);

    expect((await revokeAtA(client)).revoked_sessions).toBeGreaterThan(0);
    expect([await authorizeAt(b, client, { prompt: 'none' }, browser), await redeemAt(b, client, issued), await userinfoAt(b, access)]).toEqual(['login_required', [400, 'invalid_grant'], 401]);
    expect([await userinfoAt(b, other.access), await authorizeAt(b, client, { prompt: 'none' }, other.browser)]).toEqual([200, 'code']);
  });

  it('attack: her consent page open at A when she is revoked through A, answered Allow at B, stores no grant and leads to no code: her session is gone at B', async () => {
    const client = await registerClient(a, 'plain');
    const browser = new FormBrowser();
    await browser.follow(registeredClientUrl(a.issuer, client), a.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, a.baseUrl);
    expect(browser.lastPage).toContain('id="consent-allow"');
    await revokeAtA(client);
    const grants = (await keysOf(prefix, 'Grant:')).length;
    const action = new URL(browser.formAction('consent-allow', a.baseUrl));
    const answered = await browser.request(`${b.baseUrl}${action.pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: a.baseUrl },
      body: new URLSearchParams(browser.hiddenFields('consent-allow')).toString(),
    });
    expect([answered.status, await answered.json()]).toEqual([400, { error: 'invalid_request', error_description: 'session not found' }]);
    expect((await keysOf(prefix, 'Grant:')).length).toBe(grants);
    expect(await authorizeAt(b, client, { prompt: 'none' }, browser)).toBe('login_required');
  });

  it("attack: a client's grants (her consent) revoked through A are gone at B at once (issued code, UserInfo, silent authorization); honest: her session and her consent to another client stay", async () => {
    const [client, other] = await Promise.all([registerClient(a, 'plain'), registerClient(a, 'plain')]);
    const { access, browser } = await tokensOf(client);
    const issued = await codeOf(client, { browser });
    const kept = await tokensOf(other, { browser });
    expect(await authorizeAt(b, client, { prompt: 'none' }, browser)).toBe('code');

    expect((await callA('POST', `${M}/clients/${String(client.metadata.client_id)}/revoke-grants`)).status).toBe(200);
    expect([await authorizeAt(b, client, { prompt: 'none' }, browser), await redeemAt(b, client, issued), await userinfoAt(b, access)]).toEqual(['consent_required', [400, 'invalid_grant'], 401]);
    expect([await authorizeAt(b, other, { prompt: 'none' }, browser), await userinfoAt(b, kept.access)]).toEqual(['code', 200]);
  });

  it('attack: one initial access token sent to A and B at once (10 each, 5 rounds) registers exactly one client', async () => {
    for (let round = 0; round < 5; round += 1) {
      const before = (await keysOf(prefix, 'Client:')).length;
      const { token } = await issueInitialAccessToken(a.app.svc.provider);
      const answers = await Promise.all(Array.from({ length: 20 }, (_v, i) => register(i % 2 ? b : a, { redirect_uris: [REDIRECT] }, token)));
      const created = answers.filter((r) => r.status === 201).length;
      const refused = answers.filter((r) => r.status === 401 && r.body.error === 'invalid_token').length;
      expect({ round, created, refused, stored: (await keysOf(prefix, 'Client:')).length - before }).toEqual({ round, created: 1, refused: 19, stored: 1 });
    }
  });

  it('attack: one code redeemed at A and B at once (10 each, 5 rounds) yields one token answer; replayed after, the grant is revoked at both', async () => {
    const client = await registerClient(a, 'plain');
    for (let round = 0; round < 5; round += 1) {
      const issued = await codeOf(client);
      const answers = await Promise.all(Array.from({ length: 20 }, (_v, i) => redeemCode((i % 2 ? b : a).issuer, client.metadata, issued.code, issued.verifier)));
      const won = answers.filter((r) => r.status === 200);
      expect({ round, won: won.length, invalidGrant: answers.filter((r) => r.status === 400 && r.body.error === 'invalid_grant').length }).toEqual({ round, won: 1, invalidGrant: 19 });
      const access = won[0]?.body.access_token as string;
      expect(await userinfoAt(a, access)).toBe(await userinfoAt(b, access));
      expect([await redeemAt(b, client, issued), await userinfoAt(a, access), await userinfoAt(b, access)]).toEqual([[400, 'invalid_grant'], 401, 401]);
    }
  });

  it('attack: one pushed request_uri used at A and B at once (4 each) starts one interaction; honest: each push works once at either', async () => {
    const client = await registerClient(a, 'plain');
    const push = async (): Promise<string> => {
      const response = await fetch(`${a.issuer}/par`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${String(client.metadata.client_id)}:${String(client.metadata.client_secret)}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(registeredClientParams(client)).toString(),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { request_uri: string }).request_uri;
    };
    const useAt = (app: RunningApp, requestUri: string): Promise<Outcome> => outcomeOf(authorizationUrl(app.issuer, { client_id: String(client.metadata.client_id), request_uri: requestUri }));
    const requestUri = await push();
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_v, i) => useAt(i % 2 ? b : a, requestUri)));
    expect({ started: outcomes.filter((o) => o.interaction).length, refused: outcomes.filter((o) => o.error === 'invalid_request_uri').length }).toEqual({ started: 1, refused: 7 });
    const [first, second] = [await push(), await push()];
    expect([(await useAt(b, first)).interaction, (await useAt(a, second)).interaction]).toEqual([expect.any(String), expect.any(String)]);
  });

  /**
   * A sign-in page of `client` served by `app`, each answer posted back to `app` from the public origin (A's): the status
   * of that answer, or, when it sent the browser back to the page (a failure, C8), of the page as the other instance shows it.
   */
  const signInPageAt = async (app: RunningApp, client: RegisteredClient, browser = new FormBrowser()): Promise<(login: string, password: string, from: string) => Promise<number>> => {
    await loginAttempts(app, client.metadata, browser);
    const action = browser.formAction('login-form', app.baseUrl);
    const page = new URL(action).pathname.replace(/\/login$/, '');
    return async (login, password, from) => {
      const answer = await browser.post(action, { login, password }, a.baseUrl, { 'x-forwarded-for': from });
      if (answer.status !== 303 || answer.headers.get('location') !== page) return answer.status;
      return (await browser.request(`${(app === a ? b : a).baseUrl}${page}`)).status;
    };
  };

  it('attack: wrong passwords for one name at A and B at once count together (threshold 3), and lock the right one out at both; honest: her own device signed in at A gets in at B, and a reset through A lets anyone in at B', async () => {
    const client = await registerClient(a, 'plain');
    const device = new FormBrowser();
    expect(await (await signInPageAt(a, client, device))('demo-basic', 'demo-basic', '198.51.100.40')).toBe(303);
    const pages = await Promise.all(Array.from({ length: 8 }, (_v, i) => signInPageAt(i % 2 ? b : a, client)));
    const statuses = await Promise.all(pages.map((attempt, i) => attempt('demo-basic', `wrong-${i}`, `198.51.100.${i + 1}`)));
    expect({ refused: statuses.filter((s) => s === 403).length, locked: statuses.filter((s) => s === 429).length }).toEqual({ refused: 3, locked: 5 });
    const late = await Promise.all([a, b].map(async (app, i) => (await signInPageAt(app, client))('demo-basic', 'demo-basic', `198.51.100.${50 + i}`)));
    expect(late).toEqual([429, 429]);
    expect(await (await signInPageAt(b, client, device))('demo-basic', 'demo-basic', '198.51.100.40')).toBe(303);
    const reset = await callA('POST', `${M}/logins/reset`, { body: 'login=demo-basic', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(reset.body).toEqual({ reset: true });
    expect(await (await signInPageAt(b, client))('demo-basic', 'demo-basic', '198.51.100.60')).toBe(303);
  });

  it('honest: 10 right sign-ins of one person at A and B at once, from one address, are all let in', async () => {
    const client = await registerClient(a, 'plain');
    const pages = await Promise.all(Array.from({ length: 10 }, (_v, i) => signInPageAt(i % 2 ? b : a, client)));
    expect(await Promise.all(pages.map((attempt) => attempt('demo', 'demo', '203.0.113.80')))).toEqual(Array.from({ length: 10 }, () => 303));
  });

  it('honest: an interaction started at A whose every step goes to the other instance (no sticky sessions) completes, and its code is redeemed at B', async () => {
    const client = await registerClient(a, 'plain');
    const { verifier, challenge } = pkcePair();
    const browser = new FormBrowser();
    const served: string[] = [];
    let url = registeredClientUrl(a.issuer, client, { code_challenge: challenge });
    let init: RequestInit | undefined;
    let code: string | null = null;
    for (let hop = 0; hop < 12 && !code; hop += 1) {
      const app = hop % 2 ? b : a;
      const target = new URL(url, a.baseUrl);
      const response = await browser.request(`${app.baseUrl}${target.pathname}${target.search}`, init);
      served.push(`${app === a ? 'A' : 'B'} ${init?.method ?? 'GET'} ${response.status}`);
      init = undefined;
      const location = response.headers.get('location');
      if (location?.startsWith(REDIRECT)) code = new URL(location).searchParams.get('code');
      else if (location) url = location;
      else {
        browser.lastPage = await response.text();
        const form = browser.lastPage.includes('id="login-form"') ? 'login-form' : 'consent-allow';
        url = browser.formAction(form, a.baseUrl);
        const fields: Record<string, string> = form === 'login-form' ? { login: 'demo-basic', password: 'demo-basic' } : {};
        init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: a.baseUrl }, body: new URLSearchParams({ ...browser.hiddenFields(form), ...fields }).toString() };
      }
    }
    // The sign-in page from B posted to A, the consent page from A posted to B, each resume at the other.
    expect(served).toEqual(['A GET 303', 'B GET 200', 'A POST 303', 'B GET 303', 'A GET 200', 'B POST 303', 'A GET 303']);
    expect(await redeemAt(b, client, { code: code as string, verifier })).toEqual([200, undefined]);
  });
});

describe('two provider instances on one Redis, reloaded one after the other at each step of a key rotation', () => {
  const prefix = testPrefix('two-rotating');
  const dir = mkdtempSync(join(tmpdir(), 'svc-two-rotating-'));
  const keysFile = join(dir, 'keys.json');
  const rp = confidentialClient({ client_id: 'rotating-rp' });
  const REDIRECT = 'https://rp.example/cb';
  const shared = { ...onRedis(prefix), 'svc.keys.file': keysFile, 'svc.cookies.keys': 'two-rotating-cookie-key-0123456789ab' };
  const a = appPerSuite(async () => {
    writeFileSync(keysFile, JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    return { clients: [rp], properties: shared };
  });
  const b = appPerSuite(() => ({ clients: [rp], properties: { ...shared, 'svc.base-url': a.baseUrl } }));
  afterAll(async () => {
    await deletePrefix(SHARED_REDIS_URL, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  const jwksOf = async (app: RunningApp): Promise<JWK[]> => ((await (await fetch(`${app.issuer}/jwks`)).json()) as { keys: JWK[] }).keys;
  /** Moves the rotation timestamps back by `seconds`: the wait of a real rotation, without waiting. */
  const age = (seconds: number): void => {
    const jwks = JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: StatefulJwk[] };
    for (const k of jwks.keys) if (typeof k.svc_since === 'number') k.svc_since -= seconds;
    writeFileSync(keysFile, JSON.stringify(jwks), { mode: 0o600 });
  };
  const name = (app: RunningApp): string => (app === a ? 'A' : 'B');

  /** What fails at this moment: an ID token of A or B that a JWKS served by A or B does not verify. */
  const unverifiable = async (): Promise<string[]> => {
    const failed: string[] = [];
    for (const signer of [a, b]) {
      const { tokens } = await runCodeFlow(a.issuer, rp, { skipUserinfo: true, tokenOrigin: signer.baseUrl });
      for (const server of [a, b]) {
        const verified = await jwtVerify(String(tokens.id_token), createLocalJWKSet({ keys: await jwksOf(server) }), { issuer: a.issuer, audience: rp.client_id }).then(() => true, () => false);
        if (!verified) failed.push(`ID token of ${name(signer)} against the JWKS of ${name(server)}`);
      }
    }
    return failed;
  };

  /** Where an authorization request at `app` ends whose signed request object is encrypted to `key`: `interaction`, or its error. */
  const sealedTo = async (client: SigningClient, key: JWK, app: RunningApp): Promise<string> => {
    const jws = await signRequestObject(client, a.issuer, { response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'st' });
    const jwe = await new CompactEncrypt(new TextEncoder().encode(jws)).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', cty: 'JWT', kid: String(key.kid) }).encrypt(await importJWK(key, 'RSA-OAEP-256'));
    const outcome = await outcomeOf(authorizationUrl(app.issuer, { client_id: client.metadata.client_id, request: jwe }));
    return outcome.interaction ? 'interaction' : String(outcome.error);
  };
  /** What fails at this moment: a request object encrypted to a key the JWKS of A or B lists, sent to A or B. */
  const undecryptable = async (client: SigningClient): Promise<string[]> => {
    const failed: string[] = [];
    for (const server of [a, b]) {
      for (const key of (await jwksOf(server)).filter((k) => k.use === 'enc' && k.kty === 'RSA')) {
        for (const app of [a, b]) if ((await sealedTo(client, key, app)) !== 'interaction') failed.push(`${String(key.kid)} of the JWKS of ${name(server)} sent to ${name(app)}`);
      }
    }
    return failed;
  };

  it('honest: whichever instance a relying party fetches the JWKS from, it verifies every ID token and every instance decrypts the request objects it encrypts to a listed key; the key it cached before the rotation decrypts until the retiring keys are dropped', async () => {
    const client = await registerSigningClient(a, { request_object_signing_alg: 'PS256', request_object_encryption_alg: 'RSA-OAEP-256', request_object_encryption_enc: 'A256GCM' });
    const [cached] = (await jwksOf(a)).filter((k) => k.use === 'enc' && k.kty === 'RSA');
    const failed: Record<string, string[]> = {};
    const step = async (label: string, expected: RotationStep['step']): Promise<void> => {
      expect((await rotateKeysFile(keysFile)).step).toBe(expected);
      for (const app of [a, b]) {
        expect((await app.app.svc.reloadKeys()).reloaded).toBe(true);
        const moment = `${label}, ${app === a ? 'A reloaded' : 'both reloaded'}`;
        failed[moment] = [...(await unverifiable()), ...(await undecryptable(client))];
        failed[`${moment}: the key cached before`] = await Promise.all([a, b].map((at) => sealedTo(client, cached as JWK, at)));
      }
    };
    await step('1 add', 'added');
    age(3600);
    await step('2 promote', 'promoted');
    age(86_400);
    await step('3 retire', 'retired');
    const decrypted = ['interaction', 'interaction'];
    expect(failed).toEqual({
      '1 add, A reloaded': [],
      '1 add, A reloaded: the key cached before': decrypted,
      '1 add, both reloaded': [],
      '1 add, both reloaded: the key cached before': decrypted,
      '2 promote, A reloaded': [],
      '2 promote, A reloaded: the key cached before': decrypted,
      '2 promote, both reloaded': [],
      '2 promote, both reloaded: the key cached before': decrypted,
      '3 retire, A reloaded': [],
      '3 retire, A reloaded: the key cached before': ['invalid_request_object', 'interaction'],
      '3 retire, both reloaded': [],
      '3 retire, both reloaded: the key cached before': ['invalid_request_object', 'invalid_request_object'],
    });
  });
});

describe('two provider instances on one Redis while a new cookie key is rolled out to one after the other', () => {
  const prefix = testPrefix('two-cookie-keys');
  const rp = confidentialClient({ client_id: 'cookie-keys-rp' });
  const [OLD, NEW] = [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')];
  const instances: RunningApp[] = [];
  /** The public origin every instance serves (the first one's address). */
  let origin = '';
  afterAll(async () => {
    await Promise.all(instances.map((app) => app.close()));
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });
  /** An instance on the store with the cookie keys `keys` (newest first): a process started, or restarted, with them. */
  const instance = async (keys: string[]): Promise<RunningApp> => {
    const app = await startApp({ clients: [rp], properties: { ...onRedis(prefix), 'svc.cookies.keys': keys.join(','), ...(origin ? { 'svc.base-url': origin } : {}) } });
    origin ||= app.baseUrl;
    instances.push(app);
    return app;
  };
  /** `url` of the public origin as served by `app`. */
  const at = (app: RunningApp, url: string): string => {
    const target = new URL(url, origin);
    return `${app.baseUrl}${target.pathname}${target.search}`;
  };
  /** A browser signed in, and consented, with every step served by `app`. */
  const signedInAt = async (app: RunningApp): Promise<FormBrowser> => {
    const browser = new FormBrowser();
    let url = codeFlowUrl(`${origin}/oidc/v1`, rp);
    let init: RequestInit | undefined;
    for (let hop = 0; hop < 10; hop += 1) {
      const response = await browser.request(at(app, url), init);
      init = undefined;
      const location = response.headers.get('location');
      if (location?.startsWith(String(rp.redirect_uris?.[0]))) return browser;
      if (location) {
        url = location;
        continue;
      }
      browser.lastPage = await response.text();
      const form = browser.lastPage.includes('id="login-form"') ? 'login-form' : 'consent-allow';
      url = browser.formAction(form, origin);
      const fields: Record<string, string> = form === 'login-form' ? { login: 'demo', password: 'demo' } : {};
      init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin }, body: new URLSearchParams({ ...browser.hiddenFields(form), ...fields }).toString() };
    }
    throw new Error('the sign-in never reached the client');
  };
  /** Where a silent authorization at `app` ends with the session cookies of `browser` (a copy: what it answers stays out of hers). */
  const silentAt = async (app: RunningApp, browser: FormBrowser): Promise<string> => {
    const copy = new FormBrowser();
    for (const name of ['_session', '_session.sig']) if (browser.cookie(name)) copy.setCookie(name, browser.cookie(name) as string);
    const location = (await copy.request(at(app, codeFlowUrl(`${origin}/oidc/v1`, rp, { prompt: 'none' })))).headers.get('location') ?? '';
    return redirectParams(location).get('error') ?? 'code';
  };

  it('honest: added last on every instance, then moved first on every instance, the new key keeps her signed in wherever she lands; moved first at once, an instance not yet restarted cannot read the sessions a restarted one signs', async () => {
    const [a, b] = [await instance([OLD]), await instance([OLD])];
    const seen: Record<string, string[]> = {};
    const signedIn = async (label: string, signer: RunningApp, servers: RunningApp[]): Promise<void> => {
      const browser = await signedInAt(signer);
      seen[label] = await Promise.all(servers.map((server) => silentAt(server, browser)));
    };
    await signedIn('before: both old', a, [a, b]);
    const a1 = await instance([OLD, NEW]);
    await signedIn('first rollout: A with the new key last, B not yet', a1, [a1, b]);
    const b1 = await instance([OLD, NEW]);
    await signedIn('first rollout done', b1, [a1, b1]);
    const a2 = await instance([NEW, OLD]);
    await signedIn('second rollout: A with the new key first, B with it last', a2, [a2, b1]);
    const b2 = await instance([NEW, OLD]);
    await signedIn('second rollout done', b2, [a2, b2]);
    await signedIn('in one rollout: A with the new key first, B without it', a2, [a2, b]);
    const everywhere = ['code', 'code'];
    expect(seen).toEqual({
      'before: both old': everywhere,
      'first rollout: A with the new key last, B not yet': everywhere,
      'first rollout done': everywhere,
      'second rollout: A with the new key first, B with it last': everywhere,
      'second rollout done': everywhere,
      'in one rollout: A with the new key first, B without it': ['code', 'login_required'],
    });
  });
});

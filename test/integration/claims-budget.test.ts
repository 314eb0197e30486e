import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createStore, loadSettings } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, FormBrowser, pkcePair, redeemCode, redirectParams } from '../helpers/flow.js';
import { bracketFlood, bytesOf, namesAcrossChannels, paddedTo, valuedFlood, type ClaimsObject } from '../helpers/claims-requests.js';
import { registerClient, type RegisteredClient } from '../helpers/clients.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { recordBytes, SHARED_REDIS_URL, TEST_STORE_TIMEOUT_MS } from '../helpers/redis.js';
import { describeEachStore } from '../helpers/stores.js';

const REDIRECT = 'https://rp.example/cb';
/** C5: what a request stores stays small. */
const RECORD_LIMIT = 16 * 1024;

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

describeEachStore(
  'the claims budget (C5, issue 14): refused early, redirected with state, nothing stored',
  (kind, properties) => {
    let running: RunningApp;
    let store: CountingStore;
    let rsa: RegisteredClient;

    beforeAll(async () => {
      const props = { ...properties(), 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS };
      store = countingStore(createStore(loadSettings({ env: {}, properties: props })));
      running = await startApp({ store, properties: props, claimModules: createDemoClaimModules() });
      rsa = await registerClient(running, 'rsa');
    });
    afterAll(async () => running.close());

    const params = (claims: ClaimsObject): Record<string, string> => ({
      client_id: rsa.metadata.client_id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      state: 'st-budget',
      scope: 'openid',
      claims: JSON.stringify(claims),
    });

    /** Sends an authorization request; returns the redirect's parameters (or the interaction path). */
    const authorize = async (claims: ClaimsObject, method: 'GET' | 'POST' = 'GET'): Promise<{ status: number; location: string }> => {
      const response =
        method === 'GET'
          ? await fetch(authorizationUrl(running.issuer, params(claims)), { redirect: 'manual' })
          : await fetch(`${running.issuer}/authorize`, {
              method: 'POST',
              redirect: 'manual',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams(params(claims)).toString(),
            });
      return { status: response.status, location: response.headers.get('location') ?? '' };
    };

    /** Expects `claims` refused with `description`, redirected to the client with state, nothing stored. */
    const expectRefused = async (claims: ClaimsObject, description: string, method: 'GET' | 'POST' = 'GET'): Promise<void> => {
      const prefix = properties()['svc.redis.key-prefix'];
      const storedInteractions = async (): Promise<number> => (prefix ? (await keysOf(prefix, 'Interaction:')).length : 0);
      const interactions = store.writes('Interaction');
      const inRedis = await storedInteractions();
      const { status, location } = await authorize(claims, method);
      expect(status).toBe(303);
      expect(location.startsWith(REDIRECT)).toBe(true);
      const redirect = redirectParams(location);
      expect({ error: redirect.get('error'), description: redirect.get('error_description'), state: redirect.get('state') }).toEqual({
        error: 'invalid_request',
        description,
        state: 'st-budget',
      });
      expect(store.writes('Interaction')).toBe(interactions);
      expect(await storedInteractions()).toBe(inRedis);
    };

    it('refuses the 14.8 KB attack request of issue 14 on its size (a form POST: too long for a URL)', async () => {
      const attack = { userinfo: bracketFlood(96, 'verification-procedure-variant-with-a-long-descriptive-segment-name-and-more-') };
      expect(bytesOf(attack)).toBeGreaterThan(14_000);
      await expectRefused(attack, `the claims parameter is ${bytesOf(attack)} bytes; at most 8192 are allowed`, 'POST');
    });

    it.each(['GET', 'POST'] as const)('refuses 96 bracketed names × 129 expansions under 8 KiB by counting them (%s)', async (method) => {
      const attack = { userinfo: bracketFlood(96) };
      expect(bytesOf(attack)).toBeLessThan(8192);
      await expectRefused(attack, 'the claims parameter expands to 12384 claim names; at most 256 are allowed', method);
    });

    it('refuses 20 concurrent attack requests alike, storing nothing', async () => {
      const interactions = store.writes('Interaction');
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => authorize({ userinfo: bracketFlood(96, `c${i}-`) }, i % 2 ? 'GET' : 'POST')));
      for (const { location } of results) expect(redirectParams(location).get('error_description')).toBe('the claims parameter expands to 12384 claim names; at most 256 are allowed');
      expect(store.writes('Interaction')).toBe(interactions);
    });

    it('refuses a requested value nested deeper than 16 levels (2500 levels would overflow the stack), in either channel, by GET and POST; accepts 16', async () => {
      const nested = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`);
      for (const channel of ['userinfo', 'id_token']) {
        for (const method of ['GET', 'POST'] as const) {
          if (method === 'GET') await expectRefused({ [channel]: { email: { value: nested(17) } } }, `claims.${channel}.email: value is nested more than 16 levels deep`, method);
          await expectRefused({ [channel]: { email: { value: nested(2500) } } }, `claims.${channel}.email: value is nested more than 16 levels deep`, 'POST');
          await expectRefused({ [channel]: { sub: { value: { a: nested(2500) } } } }, `claims.${channel}.sub: value is nested more than 16 levels deep`, 'POST');
        }
      }
      expect((await authorize({ userinfo: { email: { value: nested(16) } } })).location).toMatch(/^\/oidc\/v1\/interaction\//);
    });

    it('refuses 257 names split over id_token and userinfo, and accepts exactly 256', async () => {
      await expectRefused(namesAcrossChannels(257), 'the claims parameter expands to 257 claim names; at most 256 are allowed');
      const accepted = await authorize(namesAcrossChannels(256));
      expect(accepted.location).toMatch(/^\/oidc\/v1\/interaction\/[\w-]+$/);
    });

    it('refuses 8193 bytes (also when 4096 of its characters are two-byte) and accepts 8192', async () => {
      const base = { id_token: { email: null } };
      await expectRefused(paddedTo(base, 8193), 'the claims parameter is 8193 bytes; at most 8192 are allowed');
      await expectRefused(paddedTo(base, 8193, 'ä'), 'the claims parameter is 8193 bytes; at most 8192 are allowed', 'POST');
      expect((await authorize(paddedTo(base, 8192))).location).toMatch(/^\/oidc\/v1\/interaction\//);
    });

    if (kind === 'redis standalone') {
      // The request that grows most when stored is the one of short names each asking for a value
      // (a MAC replaces `0`); `minimum` shows each case really stored what it is about.
      it.each<[string, () => ClaimsObject, string, number]>([
        ['256 names over both channels', () => namesAcrossChannels(256), 'code', 2000],
        ['8 KiB of short names each asking for a value', () => valuedFlood(), 'code', 14000],
        ['8 KiB of essential names asking for values the account lacks', () => valuedFlood({ essential: true, value: 'not-the-value' }), 'access_denied', 9000],
        ['8 KiB exactly, in one long value', () => paddedTo(namesAcrossChannels(255), 8192), 'code', 2000],
      ])('stores at most 16 KiB per record for the largest accepted requests: %s', async (_name, claims, outcome, minimum) => {
        const prefix = properties()['svc.redis.key-prefix'] as string;
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
    }
  },
  ['memory', 'redis standalone'],
);

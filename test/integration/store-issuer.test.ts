import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';

import { refOf } from '../../adapters/inventory.js';
import { createMemoryStore } from '../../adapters/memory.js';
import { createProvider, createRedisStore, issueInitialAccessToken, loadSettings, silentLogger } from '../../lib/index.js';
import { confidentialClient, startApp, type RunningApp, type StartOptions } from '../helpers/app.js';
import { registerClient, registeredClientUrl } from '../helpers/clients.js';
import { pkcePair, redeemCode, signIn } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';
import { tokenAttempt } from '../helpers/redis-fault-app.js';
import { deletePrefix, SHARED_REDIS_URL, startOwnRedis, TEST_STORE_TIMEOUT_MS, testPrefix, type OwnRedis } from '../helpers/redis.js';
import { describeEachStore } from '../helpers/stores.js';

/** The client of {@link tokenAttempt}: a made-up code is `invalid_grant` while the store answers, 503 while not. */
const client = confidentialClient();
const running: RunningApp[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((app) => app.close()));
});

/** Starts an app, closed after the test. */
async function start(options: StartOptions): Promise<RunningApp> {
  const app = await startApp(options);
  running.push(app);
  return app;
}

/**
 * Removes the record `id` of `running`'s key prefix naming an issuer (by default the prefix's own), as an operator's
 * `DEL` or `FLUSHDB` does, or a Redis restarted without persistence.
 */
async function dropIssuerRecord(running: RunningApp, id = 'issuer'): Promise<void> {
  const { client } = running.app.svc.store as unknown as { client: { del(key: string): Promise<number> } };
  expect(await client.del(`${running.settings.redis.keyPrefix}StoreIssuer:${refOf(id)}`)).toBe(1);
}

/** `/readyz` of `running`: its status. */
const readiness = async (running: RunningApp): Promise<number> => (await fetch(`${running.baseUrl}/readyz`)).status;

/** What a start refused for its store's issuer is rejected with. */
const refused = (issuer: string) => expect.objectContaining({ name: 'SettingsError', properties: ['svc.redis.key-prefix', 'svc.base-url'], message: expect.stringContaining(`belongs to the issuer ${issuer}, not to this provider's`) });

describeEachStore('two issuers on one key prefix', (kind, storeProperties) => {
  const prefixes: string[] = [];
  afterEach(async () => {
    if (kind === 'redis standalone') await Promise.all(prefixes.splice(0).map((prefix) => deletePrefix(SHARED_REDIS_URL, prefix)));
  });
  /** The store's properties with a key prefix of the test's own. */
  const fresh = (): Record<string, string> => {
    const prefix = testPrefix('issuer');
    prefixes.push(prefix);
    return { ...storeProperties(), 'svc.redis.key-prefix': prefix };
  };

  it('attack: a provider of another issuer on the key prefix is refused at start, naming svc.redis.key-prefix; the first keeps serving', async () => {
    const properties = fresh();
    const first = await start({ properties });
    const client = await registerClient(first, 'optout');
    await expect(start({ properties })).rejects.toEqual(refused(first.issuer));
    await expect(start({ properties })).rejects.toThrow(`svc.redis.key-prefix ${JSON.stringify(properties['svc.redis.key-prefix'])}`);
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(registeredClientUrl(first.issuer, client, { code_challenge: challenge }));
    const token = await redeemCode(first.issuer, client.metadata, callbackUrl.searchParams.get('code') as string, verifier);
    expect([token.status, typeof token.body.access_token]).toEqual([200, 'string']);
  });

  it('attack: two issuers starting at once on an empty key prefix: exactly one starts', async () => {
    const properties = fresh();
    const starts = await Promise.allSettled(['https://one.example', 'https://two.example'].map((base) => start({ properties: { ...properties, 'svc.base-url': base } })));
    expect(starts.map((s) => s.status).sort()).toEqual(['fulfilled', 'rejected']);
    const won = (starts.find((s) => s.status === 'fulfilled') as PromiseFulfilledResult<RunningApp>).value.settings.baseUrl;
    expect(starts.find((s) => s.status === 'rejected')).toEqual({ status: 'rejected', reason: refused(`${won}/oidc/v1`) });
  });

  it('honest: eight processes of one issuer starting at once on an empty key prefix all start; one restarted starts again', async () => {
    const properties = { ...fresh(), 'svc.base-url': 'https://one.example' };
    const starts = await Promise.allSettled(Array.from({ length: 8 }, () => start({ properties })));
    expect(starts.map((s) => s.status)).toEqual(Array(8).fill('fulfilled'));
    await running.shift()?.close();
    await expect(start({ properties })).resolves.toBeDefined();
    // The same base URL spelled otherwise (letter case of the host, default port, trailing slash) is the same issuer.
    await expect(start({ properties: { ...properties, 'svc.base-url': 'https://ONE.example:443/' } })).resolves.toBeDefined();
  });

  it('honest: svc.redis.previous-base-url moves the key prefix to a new base URL, keeping what it holds; the old base URL, or another moving from it, is refused then', async () => {
    const properties = fresh();
    const old = await start({ properties: { ...properties, 'svc.base-url': 'https://old.example' } });
    const { token } = await issueInitialAccessToken(old.app.svc.provider);
    const moved = await start({ properties: { ...properties, 'svc.base-url': 'https://new.example', 'svc.redis.previous-base-url': 'https://old.example/' } });
    expect(await moved.app.svc.store.adapter('InitialAccessToken').find(token)).toBeDefined();
    await expect(start({ properties: { ...properties, 'svc.base-url': 'https://old.example' } })).rejects.toEqual(refused('https://new.example/oidc/v1'));
    await expect(start({ properties: { ...properties, 'svc.base-url': 'https://other.example', 'svc.redis.previous-base-url': 'https://old.example' } })).rejects.toEqual(refused('https://new.example/oidc/v1'));
    // Restarts of the new base URL, with the setting left in place or removed.
    await expect(start({ properties: { ...properties, 'svc.base-url': 'https://new.example', 'svc.redis.previous-base-url': 'https://old.example' } })).resolves.toBeDefined();
    await expect(start({ properties: { ...properties, 'svc.base-url': 'https://new.example' } })).resolves.toBeDefined();
  });

  it("attack: the record gone while a provider serves (an operator's DEL or FLUSHDB, a Redis restarted empty): its /readyz claims the prefix again, so a provider of another issuer is refused; one that claimed it first leaves the first answering 503 until the prefix is its own again", async () => {
    const properties = fresh();
    const { logger, lines } = capturingLogger();
    const first = await start({ logger, clients: [client], properties });
    await dropIssuerRecord(first);
    expect(await readiness(first)).toBe(200);
    await expect(start({ properties })).rejects.toEqual(refused(first.issuer));
    await dropIssuerRecord(first);
    const other = await start({ clients: [client], properties });
    expect(await readiness(first)).toBe(503);
    for (let i = 0; i < 3; i += 1) expect(await tokenAttempt(first.issuer)).toMatchObject({ status: 503, error: 'server_error' });
    expect(await readiness(first)).toBe(503);
    expect(lines.filter((line) => line.includes('store_claim_refused'))).toEqual([expect.stringContaining(`belongs to the issuer ${other.issuer}`)]);
    expect((await tokenAttempt(other.issuer)).error).toBe('invalid_grant');
    await other.close();
    await dropIssuerRecord(first);
    expect(await readiness(first)).toBe(200);
    expect((await tokenAttempt(first.issuer)).error).toBe('invalid_grant');
  });

  it('honest: processes of the old base URL running when the prefix moved go on serving, ready, and so does one of the new base URL', async () => {
    const properties = { ...fresh(), 'svc.base-url': 'https://old.example' };
    const old = await start({ clients: [client], properties });
    const moved = await start({ clients: [client], properties: { ...properties, 'svc.base-url': 'https://new.example', 'svc.redis.previous-base-url': 'https://old.example' } });
    for (const running of [old, moved, old]) {
      expect(await readiness(running)).toBe(200);
      expect((await tokenAttempt(running.issuer)).error).toBe('invalid_grant');
    }
    // Past the hour the move is marked for, until it stops.
    await dropIssuerRecord(old, 'moved-from:https://old.example/oidc/v1');
    expect(await readiness(old)).toBe(200);
    expect((await tokenAttempt(old.issuer)).error).toBe('invalid_grant');
  });

  it('attack: two new base URLs moving from one issuer at once: one takes the key prefix, the other is refused', async () => {
    const properties = fresh();
    await start({ properties: { ...properties, 'svc.base-url': 'https://old.example' } });
    const starts = await Promise.allSettled(['https://two.example', 'https://three.example'].map((base) => start({ properties: { ...properties, 'svc.base-url': base, 'svc.redis.previous-base-url': 'https://old.example' } })));
    expect(starts.map((s) => s.status).sort()).toEqual(['fulfilled', 'rejected']);
    const won = (starts.find((s) => s.status === 'fulfilled') as PromiseFulfilledResult<RunningApp>).value.settings.baseUrl;
    expect(starts.find((s) => s.status === 'rejected')).toEqual({ status: 'rejected', reason: refused(`${won}/oidc/v1`) });
  });
}, ['redis standalone', 'redis cluster']);

describe('two issuers on one store passed in code', () => {
  it('attack: a second provider of another issuer on the store is refused, naming the store passed in code; honest: one of the same issuer starts', async () => {
    const store = createMemoryStore();
    const properties = { 'svc.base-url': 'https://one.example' };
    await start({ store, properties });
    await expect(start({ store, properties: { 'svc.base-url': 'https://two.example' } })).rejects.toThrow('the store (passed in code) belongs to the issuer https://one.example/oidc/v1');
    await expect(start({ store, properties })).resolves.toBeDefined();
  });

  it('attack: createProvider of another issuer on a Redis store a running provider was built with is refused, and leaves the store open: the first keeps serving', async () => {
    const prefix = testPrefix('issuer-code');
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    const settings = (base: string) => loadSettings({ env: {}, properties: { 'svc.base-url': base } });
    try {
      const first = await createProvider(settings('https://one.example'), { store, logger: silentLogger });
      await expect(createProvider(settings('https://two.example'), { store, logger: silentLogger })).rejects.toThrow('belongs to the issuer https://one.example/oidc/v1');
      const { token } = await issueInitialAccessToken(first);
      expect(await first.InitialAccessToken.find(token)).toBeDefined();
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await store.close();
    }
  });
});

describe('two issuers on one key prefix, the store away when the second starts', () => {
  let redis: OwnRedis;
  beforeAll(async () => {
    redis = await startOwnRedis();
  });
  afterAll(() => redis.dispose());

  it('attack: a provider of another issuer started while Redis was away serves nothing once Redis answers that the prefix is the first one\'s (503, logged once); honest: one of the same issuer serves as soon as Redis is back', async () => {
    const properties = { 'svc.redis.url': redis.url, 'svc.redis.key-prefix': 'svc:' };
    redis.stop();
    const { logger, lines } = capturingLogger();
    const other = await start({ logger, clients: [client], properties: { ...properties, 'svc.base-url': 'https://other.example' } });
    const same = await start({ clients: [client], properties: { ...properties, 'svc.base-url': 'https://one.example' } });
    redis.start();
    const first = await start({ clients: [client], properties: { ...properties, 'svc.base-url': 'https://one.example' } });
    expect((await tokenAttempt(first.issuer)).error).toBe('invalid_grant');
    // Polled until the other process's store answers; only the test timeout bounds the wait.
    while (!lines.some((line) => line.includes('store_claim_refused'))) {
      expect(await tokenAttempt(other.issuer)).toMatchObject({ status: 503, error: 'server_error' });
      await new Promise((resolve) => setTimeout(resolve, 50)); // a poll interval, not a bound
    }
    for (let i = 0; i < 3; i += 1) expect(await tokenAttempt(other.issuer)).toMatchObject({ status: 503, error: 'server_error' });
    expect((await fetch(`${other.baseUrl}/readyz`)).status).toBe(503);
    expect(lines.filter((line) => line.includes('store_claim_refused'))).toEqual([expect.stringContaining('belongs to the issuer https://one.example/oidc/v1')]);
    let answer = await tokenAttempt(same.issuer);
    while (answer.status === 503) {
      await new Promise((resolve) => setTimeout(resolve, 50)); // a poll interval, not a bound
      answer = await tokenAttempt(same.issuer);
    }
    expect(answer).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect((await fetch(`${same.baseUrl}/readyz`)).status).toBe(200);
  });
});

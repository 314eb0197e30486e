import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { createStore, loadSettings, silentLogger } from '../../lib/index.js';
import { storeClaimOf } from '../../lib/provider/create-provider.js';
import { claimedStore } from '../../lib/provider/store-issuer.js';
import { runCli } from '../helpers/cli.js';
import { startOwnRedis, testPrefix, type OwnRedis } from '../helpers/redis.js';

describe('config check --connect reads whose the key prefix is, writing nothing', () => {
  let redis: OwnRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startOwnRedis();
    client = new Redis(redis.url);
  });
  afterAll(() => {
    client.disconnect();
    redis.dispose();
  });

  /** The environment of a provider of `baseUrl` on `prefix` of the test's Redis. */
  const envOf = (prefix: string, baseUrl: string, previous?: string): Record<string, string> => ({
    SVC_REDIS_URL: redis.url,
    SVC_REDIS_KEY_PREFIX: prefix,
    SVC_BASE_URL: baseUrl,
    ...(previous ? { SVC_REDIS_PREVIOUS_BASE_URL: previous } : {}),
  });

  /** A key prefix of the test's own, claimed as a start of `baseUrl` on it claims it. */
  async function claimedBy(baseUrl: string): Promise<string> {
    const prefix = testPrefix('check');
    const settings = loadSettings({ env: envOf(prefix, baseUrl) });
    const store = await claimedStore(createStore(settings.redis, silentLogger), storeClaimOf(settings, false), silentLogger);
    await store.close();
    return prefix;
  }

  /** `config check --connect` with `env`, and every key and value of the Redis before and after it. */
  async function check(env: Record<string, string>): Promise<{ code: number; store: string; stderr: string }> {
    const dump = async (): Promise<string[]> => Promise.all((await client.keys('*')).sort().map(async (key) => `${key}=${await client.get(key)}`));
    const before = await dump();
    const { code, stdout, stderr } = await runCli(['config', 'check', '--connect'], env);
    expect(await dump()).toEqual(before);
    return { code, store: stdout.split('\n').find((line) => line.startsWith('store: ')) ?? '', stderr };
  }

  it('attack: a prefix recorded for another issuer fails, naming both issuers and the fix; the record stays', async () => {
    const prefix = await claimedBy('https://one.example');
    const result = await check(envOf(prefix, 'https://two.example'));
    expect(result.code).toBe(1);
    expect(result.store).toMatch(/^store: FAILED: /);
    expect(result.store).toContain(`belongs to the issuer https://one.example/oidc/v1, not to this provider's https://two.example/oidc/v1`);
    expect(result.store).toContain('key prefix of its own');
    expect(result.store).toContain('svc.redis.previous-base-url');
    expect(result.stderr).toContain('svc-connect config: cannot connect: store');
  });

  it('attack: previous-base-url naming an issuer that does not own the prefix does not pass', async () => {
    const prefix = await claimedBy('https://one.example');
    const result = await check(envOf(prefix, 'https://two.example', 'https://three.example'));
    expect([result.code, result.store]).toEqual([1, expect.stringContaining('belongs to the issuer https://one.example/oidc/v1')]);
  });

  it('honest: an unclaimed prefix passes, saying the first start records it; nothing is written', async () => {
    const prefix = testPrefix('check');
    const result = await check(envOf(prefix, 'https://one.example'));
    expect(result.code).toBe(0);
    expect(result.store).toMatch(/^store: OK: Redis at 127\.0\.0\.1:\d+ answers PING; /);
    expect(result.store).toContain(`svc.redis.key-prefix "${prefix}" is unclaimed: the first start records it for https://one.example/oidc/v1`);
    expect(await client.keys(`${prefix}*`)).toEqual([]);
  });

  it('honest: the prefix of this issuer passes, its base URL spelled with a trailing slash and an upper-case host', async () => {
    const prefix = await claimedBy('https://one.example/id');
    const result = await check(envOf(prefix, 'https://ONE.Example/id/'));
    expect([result.code, result.store]).toEqual([0, expect.stringContaining(`svc.redis.key-prefix "${prefix}" belongs to this issuer, https://one.example/id/oidc/v1`)]);
  });

  it('honest: a move in progress passes: previous-base-url names the owner, spelled otherwise', async () => {
    const prefix = await claimedBy('https://one.example');
    const result = await check(envOf(prefix, 'https://two.example', 'HTTPS://ONE.EXAMPLE/'));
    expect(result.code).toBe(0);
    expect(result.store).toContain(`svc.redis.key-prefix "${prefix}" belongs to https://one.example/oidc/v1 (svc.redis.previous-base-url): the first start moves it to https://two.example/oidc/v1`);
  });
});

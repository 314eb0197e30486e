import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { createRedisStore } from '../../adapters/redis.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { loginAttempts } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';
import { startOwnRedis, testPrefix, TEST_STORE_TIMEOUT_MS, type OwnRedis } from '../helpers/redis.js';

/**
 * A success forgets the name's (or device's, or the operator address's) failures with the request's writes on
 * Redis, one round trip fewer. When only that forgetting fails (an ACL refusing DEL and UNLINK on the attempt
 * keys here; on a Cluster, the master of the attempt key away), the success stands and the failure is logged;
 * the operator's reset, whose forgetting is the action itself, fails as a failure.
 */
describe('a success whose forgetting of failures fails on Redis (C8)', () => {
  const client = confidentialClient();
  const COOKIE_KEY = 'forget-faults-cookie-key-0123456789abcdef';
  const PASSWORD = 'forget-faults-management-password';
  const AUTH = `Basic ${Buffer.from(`operator:${PASSWORD}`).toString('base64')}`;
  const user = 'svc-app';
  const secret = 'forget-faults-redis-password';
  const prefix = testPrefix('forget-faults');
  let server: OwnRedis;
  let admin: Redis;
  let running: RunningApp;
  const { logger, lines } = capturingLogger();
  const acl = (...rules: string[]): Promise<unknown> => admin.call('ACL', 'SETUSER', user, ...rules);
  const healthy = (): Promise<unknown> => acl('on', `>${secret}`, 'clearselectors', '+@all', 'resetkeys', '~*', '&*');
  // DEL and UNLINK refused on the attempt counters only (`<prefix>attempts:…`); every other key, and every script, works.
  const failAttemptDeletes = (): Promise<unknown> => acl('-del', '-unlink', `(+del +unlink ~${prefix}[^a]*)`);

  beforeAll(async () => {
    server = await startOwnRedis();
    admin = new Redis(server.url);
    await healthy();
    const store = createRedisStore({ url: `redis://${user}:${secret}@127.0.0.1:${server.port}`, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS, logger });
    running = await startApp({
      logger,
      store,
      clients: [client],
      properties: { 'svc.proxy': true, 'svc.cookies.keys': COOKIE_KEY, 'svc.management.user': 'operator', 'svc.management.password': PASSWORD },
    });
  });
  afterAll(async () => {
    await running?.close();
    admin?.disconnect();
    server?.dispose();
  });

  const signIn = async (login: string, password: string, address: string): Promise<number> => {
    const response = await (await loginAttempts(running, client)).attempt(login, password, address);
    await response.arrayBuffer();
    return response.status;
  };

  it('the right password still gets in (303), and attempt_settle_failed is logged', async () => {
    expect(await signIn('demo', 'demo', '192.0.2.1')).toBe(303);
    await failAttemptDeletes();
    const from = lines.length;
    let status: number;
    try {
      status = await signIn('demo', 'demo', '192.0.2.2');
    } finally {
      await healthy();
    }
    expect({ status, logged: lines.slice(from).some((l) => l.includes('attempt_settle_failed')) }).toEqual({ status: 303, logged: true });
  });

  it('a management call with the right credentials is answered as done, not 503 after the action ran', async () => {
    const call = async (): Promise<number> => {
      const response = await fetch(`${running.baseUrl}/oidc/v1/management/clients`, { headers: { authorization: AUTH, 'x-forwarded-for': '198.18.0.9' } });
      await response.arrayBuffer();
      return response.status;
    };
    expect(await call()).toBe(200);
    await failAttemptDeletes();
    let status: number;
    try {
      status = await call();
    } finally {
      await healthy();
    }
    expect(status).toBe(200);
  });

  it("the operator's reset whose deletion did not land is not audited as done", async () => {
    await failAttemptDeletes();
    const from = lines.length;
    let status: number;
    try {
      const response = await fetch(`${running.baseUrl}/oidc/v1/management/logins/reset?login=demo`, { method: 'POST', headers: { authorization: AUTH, 'x-forwarded-for': '198.18.0.10' } });
      await response.arrayBuffer();
      status = response.status;
    } finally {
      await healthy();
    }
    const audit = lines.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.e === 'management_audit' && l.action === 'logins.reset');
    expect({ status, outcome: audit?.outcome }).toEqual({ status: 503, outcome: expect.not.stringMatching(/^done$/) });
  });
});

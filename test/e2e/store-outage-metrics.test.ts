import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { capturingLogger } from '../helpers/logs.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { startOwnRedis, TEST_STORE_TIMEOUT_MS, type OwnRedis } from '../helpers/redis.js';
import { tokenAttempt } from '../helpers/redis-fault-app.js';

const REDIS_PASSWORD = 'ops-redis-password-7c1e';
const basic = `Basic ${Buffer.from('ops-admin:ops-password-0123456789').toString('base64')}`;

const storeErrors = async (running: RunningApp): Promise<number> => {
  const text = await (await fetch(`${running.baseUrl}/metrics`)).text();
  return Number(/^svc_store_errors_total (\d+)/m.exec(text)?.[1]);
};

describe('Redis away: what the operator reads', () => {
  let redis: OwnRedis;
  let running: RunningApp;
  const { logger, lines } = capturingLogger();

  beforeAll(async () => {
    redis = await startOwnRedis({ password: REDIS_PASSWORD });
    running = await startApp({
      logger,
      clients: [confidentialClient()],
      properties: {
        'svc.redis.url': `redis://:${REDIS_PASSWORD}@127.0.0.1:${redis.port}`,
        'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS,
        'svc.metrics.enabled': true,
        'svc.management.user': 'ops-admin',
        'svc.management.password': 'ops-password-0123456789',
      },
    });
  });
  afterAll(async () => {
    await running.close();
    redis.dispose();
  });

  it('counts a request of our own routes that failed because the store did not answer in svc_store_errors_total, as it counts one of the provider', async () => {
    expect(await storeErrors(running)).toBe(0);
    redis.stop();
    try {
      // The honest case: a provider request failing on the store is counted.
      expect(await tokenAttempt(running.issuer)).toMatchObject({ status: 503, error: 'server_error' });
      expect(await storeErrors(running)).toBe(1);
      // The operator API, failing on the same store, must be counted too.
      const managed = await fetch(`${running.issuer}/management/clients`, { headers: { authorization: basic } });
      expect(managed.status).toBe(503);
      expect(await storeErrors(running)).toBe(2);
      expect((await fetch(`${running.baseUrl}/readyz`)).status).toBe(503);
    } finally {
      redis.start();
    }
    expect(lines.join('\n')).not.toContain(REDIS_PASSWORD);
  });
});

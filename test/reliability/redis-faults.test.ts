import { describe, expect, it } from '@jest/globals';

import { tokenAttempt, useRedisFaultApp } from '../helpers/redis-fault-app.js';

describe('Redis going away and coming back', () => {
  const fault = useRedisFaultApp();

  it('answers normally, fails with 503 server_error while Redis is down, and recovers by itself without a restart', async () => {
    expect(await tokenAttempt(fault.running.issuer)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect((await fetch(`${fault.running.baseUrl}/readyz`)).status).toBe(200);

    fault.redis.stop();
    for (let i = 0; i < 5; i += 1) {
      expect(await tokenAttempt(fault.running.issuer)).toMatchObject({ status: 503, error: 'server_error' });
    }
    const ready = await fetch(`${fault.running.baseUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { error: string }).error).toBe('store_unavailable');
    expect((await fetch(`${fault.running.baseUrl}/healthz`)).status).toBe(200);

    fault.redis.start();
    // Poll until the store answers again; only the test timeout bounds the wait (timing bounds live
    // in redis-faults.long.test.ts, in the reliability tier).
    let last = await tokenAttempt(fault.running.issuer);
    while (last.status !== 400) {
      await new Promise((resolve) => setTimeout(resolve, 50)); // a poll interval, not a bound
      last = await tokenAttempt(fault.running.issuer);
    }
    expect(last).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect((await fetch(`${fault.running.baseUrl}/readyz`)).status).toBe(200);
    expect(fault.unhandled).toEqual([]);
  });
});

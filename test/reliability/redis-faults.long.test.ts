import { describe, expect, it } from '@jest/globals';

import { tokenAttempt, useRedisFaultApp } from '../helpers/redis-fault-app.js';

describe('Redis going away: answer and recovery times', () => {
  const fault = useRedisFaultApp(800);

  it('answers each request within 2 s while Redis is down and recovers within 5 s once it is back', async () => {
    expect(await tokenAttempt(fault.running.issuer)).toMatchObject({ status: 400, error: 'invalid_grant' });
    fault.redis.stop();
    for (let i = 0; i < 5; i += 1) {
      const attempt = await tokenAttempt(fault.running.issuer);
      expect(attempt).toMatchObject({ status: 503, error: 'server_error' });
      expect(attempt.ms).toBeLessThan(2000);
    }
    fault.redis.start();
    const deadline = Date.now() + 5000;
    let last = await tokenAttempt(fault.running.issuer);
    while (last.status !== 400 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      last = await tokenAttempt(fault.running.issuer);
    }
    expect(last).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(fault.unhandled).toEqual([]);
  });
});

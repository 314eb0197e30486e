import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';

const client = confidentialClient();

async function tokenAttempt(issuer: string): Promise<{ status: number; error: string; ms: number }> {
  const started = Date.now();
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret as string}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=authorization_code&code=not-a-real-code&code_verifier=' + 'v'.repeat(43) + '&redirect_uri=' + encodeURIComponent((client.redirect_uris as string[])[0] as string),
  });
  const body = (await response.json()) as { error: string };
  return { status: response.status, error: body.error, ms: Date.now() - started };
}

describe('Redis going away and coming back (issue 3, item 6)', () => {
  let redis: OwnRedis;
  let running: RunningApp;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    redis = await startOwnRedis();
    running = await startApp({ clients: [client], properties: { 'svc.redis.url': redis.url } });
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await running.close();
    redis.dispose();
  });

  it('answers normally while Redis is up', async () => {
    expect(await tokenAttempt(running.issuer)).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect((await fetch(`${running.baseUrl}/readyz`)).status).toBe(200);
  });

  it('fails fast with 503 server_error while Redis is down, and /readyz says 503', async () => {
    redis.stop();
    for (let i = 0; i < 5; i += 1) {
      const attempt = await tokenAttempt(running.issuer);
      expect(attempt.status).toBe(503);
      expect(attempt.error).toBe('server_error');
      expect(attempt.ms).toBeLessThan(2000);
    }
    const ready = await fetch(`${running.baseUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { error: string }).error).toBe('store_unavailable');
    expect((await fetch(`${running.baseUrl}/healthz`)).status).toBe(200);
  });

  it('recovers by itself within 5 s once Redis is back, without a restart', async () => {
    redis.start();
    const deadline = Date.now() + 5000;
    let last = await tokenAttempt(running.issuer);
    while (last.status !== 400 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      last = await tokenAttempt(running.issuer);
    }
    expect(last).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect((await fetch(`${running.baseUrl}/readyz`)).status).toBe(200);
  });

  it('left no unhandled rejection behind', () => {
    expect(unhandled).toEqual([]);
  });
});

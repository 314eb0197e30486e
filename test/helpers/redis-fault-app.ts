import { afterAll, beforeAll } from '@jest/globals';

import { confidentialClient, startApp, type RunningApp } from './app.js';
import { startOwnRedis, TEST_STORE_TIMEOUT_MS, type OwnRedis } from './redis.js';

const client = confidentialClient();

/** One token request with a made-up code: 400 `invalid_grant` while the store answers, 503 while not. */
export async function tokenAttempt(issuer: string): Promise<{ status: number; error: string; ms: number }> {
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

/** What {@link useRedisFaultApp} gives a suite (read it inside tests). */
export interface RedisFaultApp {
  redis: OwnRedis;
  running: RunningApp;
  /** Unhandled rejections seen while the suite ran. */
  unhandled: unknown[];
}

/**
 * Registers hooks that start a private `redis-server` and an app on it, and collect unhandled rejections. A
 * stopped server refuses connections, so requests fail at once whatever the timeout: the test timeout by default,
 * the production 0.8 s where the answer times are what is tested (the reliability tier).
 */
export function useRedisFaultApp(operationTimeoutMs = TEST_STORE_TIMEOUT_MS): RedisFaultApp {
  const state = { unhandled: [] as unknown[] } as RedisFaultApp;
  const onUnhandled = (reason: unknown): void => {
    state.unhandled.push(reason);
  };
  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    state.redis = await startOwnRedis();
    state.running = await startApp({ clients: [client], properties: { 'svc.redis.url': state.redis.url, 'svc.redis.operation-timeout-ms': operationTimeoutMs } });
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await state.running.close();
    state.redis.dispose();
  });
  return state;
}

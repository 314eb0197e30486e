import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser } from '../helpers/flow.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';

const client = confidentialClient();
const PREFIX = 'batch:';

/**
 * A request's writes go to Redis together when it ends (issue 16). When they fail there, the answer
 * it had prepared (a redirect with a code, a session cookie) must not go out: 503 `server_error`,
 * no `Location`, no `Set-Cookie`, and a person can continue once the store takes writes again.
 */
describe('a request whose writes fail when it ends (one unit of store work)', () => {
  let redis: OwnRedis;
  let admin: Redis;
  let running: RunningApp;
  const acl = (...rules: string[]): Promise<unknown> => admin.call('ACL', 'SETUSER', 'app', 'on', '>pw', ...rules);

  beforeAll(async () => {
    redis = await startOwnRedis();
    admin = new Redis(redis.url);
    await acl('+@all', '~*', '&*');
    running = await startApp({ clients: [client], properties: { 'svc.redis.url': `redis://app:pw@127.0.0.1:${redis.port}`, 'svc.redis.key-prefix': PREFIX } });
  });
  afterAll(async () => {
    await running.close();
    admin.disconnect();
    redis.dispose();
  });

  const authorize = (): string => codeFlowUrl(running.issuer, client, { state: 'st' });

  it('answers 503 server_error without the redirect and cookies it had prepared, stores nothing, and serves again once writes land', async () => {
    // The interaction record cannot be written: SET is allowed on no key of the provider.
    await acl('resetkeys', '~*', '&*', '-set');
    try {
      const refused = await fetch(authorize(), { redirect: 'manual', headers: { accept: 'application/json' } });
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({ error: 'server_error', error_description: 'the provider store is temporarily unavailable, try again shortly' });
      expect(refused.headers.get('location')).toBeNull();
      expect(refused.headers.getSetCookie()).toEqual([]);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
      expect(refused.headers.get('x-request-id')).toEqual(expect.any(String));
      expect(await admin.keys(`${PREFIX}Interaction:*`)).toEqual([]);

      const page = await fetch(authorize(), { redirect: 'manual', headers: { accept: 'text/html' } });
      expect(page.status).toBe(503);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain('server_error');
    } finally {
      await acl('+@all', '~*', '&*');
    }
    await running.app.svc.store.ping().catch(() => undefined);
    const browser = new FormBrowser();
    const step = await browser.follow(authorize(), running.baseUrl);
    expect(step.response?.status).toBe(200);
    expect(await admin.keys(`${PREFIX}Interaction:*`)).toHaveLength(1);
  });
});

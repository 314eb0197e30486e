import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Koa, { type Context } from 'koa';

import { createMemoryStore, type SvcStore } from '../../lib/index.js';
import { logUnhandledErrors } from '../../lib/http/error-handler.js';
import type { ClaimModule } from '../../lib/claims/modules.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow, userData } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';

const SECRET = 'do-not-log-this-0123456789';
const PASSWORD = 'management-password-for-error-tests-0123456789';

type Line = Record<string, unknown>;

describe('error answers: one rendering, no-store, every one logged', () => {
  let running: RunningApp;
  const logs = capturingLogger();
  const parsed = (from: number): Line[] => logs.lines.slice(from).map((l) => JSON.parse(l) as Line);

  beforeAll(async () => {
    running = await startApp({ logger: logs.logger, properties: { 'svc.management.password': PASSWORD } });
  });
  afterAll(async () => running.close());

  /** Sends a request; returns status, body, Cache-Control and the log lines it caused. */
  const send = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: Line; cacheControl: string | null; lines: Line[] }> => {
    const before = logs.lines.length;
    const response = await fetch(`${running.baseUrl}${path}`, init);
    const body = (await response.json()) as Line;
    return { status: response.status, body, cacheControl: response.headers.get('cache-control'), lines: parsed(before).filter((l) => l.e !== 'request') };
  };

  it('an unknown path, below the provider too and in any spelling of a route: 404 not_found, no-store, logged as a refusal', async () => {
    for (const path of ['/nope', '/oidc/v1/nope', '/oidc/v1/', '/oidc/v1/.well-known/nope', '/oidc/v1/management', '/oidc/v1/MANAGEMENT/invite_client']) {
      const r = await send(`${path}?token=${SECRET}`, { headers: { accept: 'text/html' } });
      expect([path, r.status, r.body, r.cacheControl]).toEqual([path, 404, { error: 'not_found', error_description: 'no such endpoint' }, 'no-store']);
      expect(r.lines).toEqual([expect.objectContaining({ e: 'request_refused', status: 404, error: 'not_found' })]);
    }
  });

  it('honest: a path below the provider that the host app serves is its own, not a 404', async () => {
    const host = new Koa();
    host.use(running.app.svc.middleware);
    host.use((ctx) => {
      if (ctx.path === '/oidc/v1/host-page') ctx.body = { host: true };
    });
    const server = host.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const { port } = server.address() as AddressInfo;
      const [served, missing] = [await fetch(`http://127.0.0.1:${port}/oidc/v1/host-page`), await fetch(`http://127.0.0.1:${port}/oidc/v1/nope`)];
      expect([served.status, await served.json()]).toEqual([200, { host: true }]);
      expect([missing.status, ((await missing.json()) as Line).error]).toEqual([404, 'not_found']);
    } finally {
      server.close();
    }
  });

  it('another method on a page or health route: 405 method_not_allowed (501 for a method no route knows), no-store, logged as a refusal', async () => {
    for (const [path, method, status, error] of [
      ['/oidc/v1/interaction/some-uid/login', 'GET', 405, 'method_not_allowed'],
      ['/oidc/v1/interaction/some-uid/confirm', 'GET', 405, 'method_not_allowed'],
      ['/readyz', 'POST', 405, 'method_not_allowed'],
      ['/healthz', 'PROPFIND', 501, 'invalid_request'],
    ] as const) {
      const r = await send(path, { method, headers: { accept: 'text/html' } });
      expect([path, r.status, r.body.error, r.cacheControl]).toEqual([path, status, error, 'no-store']);
      expect(r.lines).toEqual([expect.objectContaining({ e: 'request_refused', status, error })]);
    }
    // Honest: the right method is served.
    expect((await send('/readyz')).status).toBe(200);
  });

  it('the management guard\'s refusals (405, 401) are logged with their error code', async () => {
    const wrongMethod = await send('/oidc/v1/management/invite_client', { method: 'PATCH' });
    expect([wrongMethod.status, wrongMethod.body.error, wrongMethod.cacheControl]).toEqual([405, 'method_not_allowed', 'no-store']);
    expect(wrongMethod.lines).toEqual([expect.objectContaining({ e: 'request_refused', status: 405, error: 'method_not_allowed' })]);

    const wrongPassword = await send(`/oidc/v1/management/invite_client?email=a%40example.com`, { headers: { authorization: `Basic ${Buffer.from(`admin:${SECRET}`).toString('base64')}` } });
    expect([wrongPassword.status, wrongPassword.body.error, wrongPassword.cacheControl]).toEqual([401, 'unauthorized', 'no-store']);
    expect(wrongPassword.lines.map((l) => l.e)).toEqual(['management_login_failed', 'request_refused']);
    expect(wrongPassword.lines[1]).toEqual(expect.objectContaining({ status: 401, error: 'unauthorized' }));
  });

  it('a thrown refusal in our routes (an unknown interaction) is logged by name, never by its message', async () => {
    const r = await send('/oidc/v1/interaction/does-not-exist', { headers: { accept: 'application/json' } });
    expect([r.status, r.cacheControl]).toEqual([400, 'no-store']);
    expect(r.lines).toEqual([expect.objectContaining({ e: 'request_refused', status: 400, error: r.body.error, name: expect.any(String) })]);
  });

  it('a provider request whose body cannot be read is answered by the request normalizer as JSON, no-store, and logged', async () => {
    const r = await send('/oidc/v1/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded; charset=x-unknown-charset' },
      body: `grant_type=client_credentials&client_secret=${SECRET}`,
    });
    expect([r.status, r.body.error, r.cacheControl]).toEqual([400, 'invalid_request', 'no-store']);
    expect(r.body.error_description).toBe('failed to parse the request body (unsupported charset)');
    expect(r.lines).toEqual([expect.objectContaining({ e: 'request_refused', status: 400, error: 'invalid_request', name: 'InvalidRequest' })]);
  });

  it('/readyz without a store: 503 with status "unavailable", no-store, logged at warn', async () => {
    const memory = createMemoryStore();
    const failing: SvcStore = { ...memory, ping: () => Promise.reject(new Error(SECRET)) };
    const other = capturingLogger();
    const app = await startApp({ store: failing, logger: other.logger });
    try {
      const response = await fetch(`${app.baseUrl}/readyz`);
      expect([response.status, response.headers.get('cache-control')]).toEqual([503, 'no-store']);
      expect(await response.json()).toEqual({ status: 'unavailable', error: 'store_unavailable', error_description: 'the provider store does not answer' });
      expect(other.lines.map((l) => JSON.parse(l) as Line).filter((l) => l.e === 'request_refused')).toEqual([expect.objectContaining({ status: 503, error: 'store_unavailable' })]);
    } finally {
      await app.close();
    }
  });

  it('nothing logged here carries the secret the requests sent', () => {
    expect(logs.lines.join('\n')).not.toContain(SECRET);
  });
});

describe('errors that escape every handler (Koa\'s error event)', () => {
  const ctxOf = (path: string): Context => ({ path, state: { requestId: 'req-12345678' } }) as unknown as Context;

  it('createApp listens: an unexpected error is logged as request_failed by name and code, never its message', async () => {
    const logs = capturingLogger();
    const running = await startApp({ logger: logs.logger });
    try {
      expect(running.app.listenerCount('error')).toBe(1);
      running.app.emit('error', Object.assign(new Error(`stream broke ${SECRET}`), { code: 'ERR_STREAM_PREMATURE_CLOSE' }), ctxOf('/healthz'));
      expect(logs.lines.map((l) => JSON.parse(l) as Line)).toContainEqual({ e: 'request_failed', request_id: 'req-12345678', status: 500, name: 'Error', code: 'ERR_STREAM_PREMATURE_CLOSE' });
      expect(logs.lines.join('\n')).not.toContain(SECRET);
    } finally {
      await running.close();
    }
  });

  it('an exposed client error that escaped is a refusal (info), not a failure', () => {
    const logs = capturingLogger();
    logUnhandledErrors(logs.logger)(Object.assign(new Error(SECRET), { status: 400, expose: true }), ctxOf('/x'));
    logUnhandledErrors(logs.logger)(new Error(SECRET));
    expect(logs.lines.map((l) => JSON.parse(l) as Line)).toEqual([
      expect.objectContaining({ e: 'request_refused', status: 400, error: 'invalid_request' }),
      { e: 'request_failed', name: 'Error' },
    ]);
    expect(logs.lines.join('\n')).not.toContain(SECRET);
  });
});

/**
 * C2: every JSON error carries `error_description`, filled in where oidc-provider gives none. An answer that is no error
 * is never touched: a claim module may provide a claim named `error`, and her UserInfo answer is her claims alone.
 */
describe('error_description is filled in on errors only, never on a person\'s answer', () => {
  const client = confidentialClient({ allow_unencrypted_userinfo: true });
  const status: ClaimModule = { name: 'account-status', provides: ['error'], resolve: () => ({ error: 'password_expired' }) };
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ clients: [client], claimModules: [status] });
  });
  afterAll(async () => running.close());

  it('honest: her claim named error reaches the relying party as it is, no error_description beside it', async () => {
    const flow = await runCodeFlow(running.issuer, client, { params: { claims: JSON.stringify({ userinfo: { error: null } }) } });
    expect(userData(flow.userinfo)).toEqual({ error: 'password_expired' });
  });

  it('honest: a refused UserInfo request still carries its error_description', async () => {
    const response = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: 'Bearer not-a-token' } });
    expect([response.status, await response.json()]).toEqual([401, { error: 'invalid_token', error_description: expect.any(String) }]);
  });
});

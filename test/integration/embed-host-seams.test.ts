import { randomBytes } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Router from '@koa/router';
import Koa, { type Context, type Middleware } from 'koa';
import mount from 'koa-mount';

import { createStore, createSvcConnect, loadSettings, type Mailer, type SvcConnect } from '../../lib/index.js';
import { confidentialClient, TEST_PAIRWISE_KEY } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, runCodeFlow } from '../helpers/flow.js';
import { startHostServer, type HostServer } from '../helpers/host-server.js';
import { capturingLogger } from '../helpers/logs.js';
import { deletePrefix, SHARED_REDIS_URL, TEST_STORE_TIMEOUT_MS, testPrefix } from '../helpers/redis.js';

/** What a host's error handler (the first middleware of a typical Koa app) caught, and what its `error` event heard. */
interface HostErrors {
  caught: unknown[];
  emitted: unknown[];
}

/**
 * A typical host app: an error handler first (it renders what it catches as its own JSON and emits `error` for its
 * monitoring), then `svc.middleware`, then host routes after it (one throws an exposed 422, one a plain error).
 */
function hostApp(svc: SvcConnect, errors: HostErrors): Koa {
  const app = new Koa({ keys: ['the host app keeps its own cookie key, not ours'] });
  app.on('error', (err: unknown) => errors.emitted.push(err));
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      errors.caught.push(err);
      const { status, expose, message } = err as { status?: number; expose?: boolean; message?: string };
      ctx.status = status ?? 500;
      ctx.body = { host_error: expose ? message : 'internal' };
      ctx.app.emit('error', err, ctx);
    }
  });
  app.use(svc.middleware);
  app.use(async (ctx: Context, next) => {
    if (!ctx.path.startsWith('/app/')) {
      await next();
      return;
    }
    if (ctx.path === '/app/invalid') ctx.throw(422, 'the host refuses this order');
    if (ctx.path === '/app/broken') throw new Error('host database down');
    ctx.body = { host: ctx.path };
  });
  return app;
}

describe('a host app with its own error handler before svc.middleware and routes after it', () => {
  let host: HostServer;
  let base = '';
  let svc: SvcConnect;
  const errors: HostErrors = { caught: [], emitted: [] };
  const { logger, lines } = capturingLogger();
  const client = confidentialClient({ subject_type: 'public' });

  beforeAll(async () => {
    host = await startHostServer();
    base = host.base;
    svc = await createSvcConnect(loadSettings({ env: {}, properties: { 'svc.base-url': base } }), { logger, clients: [client] });
    host.serve(hostApp(svc, errors));
  });
  afterAll(async () => {
    await host.close();
    await svc.close();
  });

  const logged = (from: number): { e: string }[] => lines.slice(from).map((line) => JSON.parse(line) as { e: string });

  it.each([
    { path: '/app/invalid', status: 422, body: { host_error: 'the host refuses this order' } },
    { path: '/app/broken', status: 500, body: { host_error: 'internal' } },
  ])("the error of a host route after svc.middleware ($path) reaches the host's error handler and its error event, not ours", async ({ path, status, body }) => {
    const before = { caught: errors.caught.length, emitted: errors.emitted.length, lines: lines.length };
    const answer = await fetch(`${base}${path}`, { headers: { accept: 'application/json' } });
    expect([answer.status, await answer.json()]).toEqual([status, body]);
    expect(errors.caught.length - before.caught).toBe(1);
    expect(errors.emitted.length - before.emitted).toBe(1);
    expect(logged(before.lines).filter((line) => line.e === 'request_failed' || line.e === 'request_refused')).toEqual([]);
  });

  it.each([
    { path: '/app/invalid', status: 422 },
    { path: '/app/broken', status: 500 },
  ])('our request line counts the error of a host route after svc.middleware ($path) with the status it is answered with, not 404', async ({ path, status }) => {
    const before = lines.length;
    const answer = await fetch(`${base}${path}`);
    expect(answer.status).toBe(status);
    const requestLines = logged(before).filter((line) => line.e === 'request') as { e: string; status?: number }[];
    expect(requestLines.map((line) => line.status)).toEqual([status]);
  });

  it('honest: a host route after svc.middleware that answers is logged with its own status', async () => {
    const before = lines.length;
    expect((await fetch(`${base}/app/fine`)).status).toBe(200);
    expect((logged(before).filter((line) => line.e === 'request') as { status?: number }[]).map((line) => line.status)).toEqual([200]);
  });

  it('honest: a host route after svc.middleware that answers is served as the host wrote it', async () => {
    const answer = await fetch(`${base}/app/fine`);
    expect([answer.status, await answer.json()]).toEqual([200, { host: '/app/fine' }]);
  });

  it.each<{ what: string; path: string; init: RequestInit; status: number; error: string }>([
    { what: 'a login form posted without its interaction', path: '/oidc/v1/interaction/unknown/login', init: { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: 'login=a&password=b' }, status: 400, error: 'invalid_request' },
    { what: 'a registration with a body that is not JSON', path: '/oidc/v1/register', init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }, status: 400, error: 'invalid_request' },
    { what: 'an unknown management call', path: '/oidc/v1/management/invite_client', init: { method: 'POST', headers: { authorization: 'Basic bm9ib2R5Om5vdGhpbmc=' } }, status: 401, error: 'unauthorized' },
    { what: 'a path below the provider no route answers', path: '/oidc/v1/nowhere', init: {}, status: 404, error: 'not_found' },
  ])('honest: svc-connect still answers its own refusals as OAuth JSON, never through the host handler: $what', async ({ path, init, status, error }) => {
    const before = errors.caught.length;
    const answer = await fetch(`${base}${path}`, init);
    expect([answer.status, ((await answer.json()) as { error: string }).error]).toEqual([status, error]);
    expect(errors.caught.length).toBe(before);
  });

  it('honest: a code flow through the host app works', async () => {
    const browser = new FormBrowser();
    const first = await browser.follow(codeFlowUrl(`${base}/oidc/v1`, client), base);
    expect(browser.lastPage).toContain('id="login-form"');
    expect(first.response?.status).toBe(200);
  });
});

describe("a host logger that writes ctx.state and the parsed body of every request (https base URL, TLS ending in front)", () => {
  let host: HostServer;
  let wire = '';
  let svc: SvcConnect;
  const client = confidentialClient({ subject_type: 'public' });
  const hostLog: string[] = [];
  /** What a host middleware before svc.middleware puts in ctx.state, when set. */
  let planted: string | undefined;

  beforeAll(async () => {
    host = await startHostServer();
    wire = host.base;
    svc = await createSvcConnect(loadSettings({ env: {}, properties: { 'svc.base-url': wire.replace(/^http:/, 'https:') } }), { logger: capturingLogger().logger, clients: [client] });
    const app = new Koa({ keys: ['the host app keeps its own cookie key, not ours'] });
    app.use(async (ctx, next) => {
      if (planted !== undefined) Object.assign(ctx.state, { svcBrowser: planted });
      await next();
      hostLog.push(JSON.stringify({ url: ctx.url, status: ctx.status, state: ctx.state as unknown, body: (ctx.request as { body?: unknown }).body }));
    });
    app.use(svc.middleware);
    host.serve(app);
  });
  afterAll(async () => {
    await host.close();
    await svc.close();
  });

  /** Signs in and consents over the wire, as the browser behind the TLS proxy does; returns the browser cookie it was given. */
  async function signInOverTheWire(): Promise<string> {
    const publicOrigin = wire.replace(/^http:/, 'https:');
    const onTheWire = (location: string): string => {
      const url = new URL(location, publicOrigin);
      return `${wire}${url.pathname}${url.search}`;
    };
    const browser = new FormBrowser();
    let answer = await browser.request(codeFlowUrl(`${wire}/oidc/v1`, client));
    for (let hops = 0; hops < 12; hops += 1) {
      const location = answer.headers.get('location');
      if (location && !new URL(location, publicOrigin).href.startsWith(publicOrigin)) break;
      if (location) {
        answer = await browser.request(onTheWire(location));
        continue;
      }
      browser.lastPage = await answer.text();
      const form = browser.lastPage.includes('id="login-form"') ? 'login-form' : 'consent-allow';
      answer = await browser.post(onTheWire(browser.formAction(form, publicOrigin)), { ...browser.hiddenFields(form), ...(form === 'login-form' ? { login: 'demo', password: 'demo' } : {}) }, publicOrigin);
    }
    expect(new URL(answer.headers.get('location') as string).searchParams.get('code')).toEqual(expect.any(String));
    const set = browser.seenSetCookies.filter((line) => line.startsWith('__Host-svc.browser='));
    expect(set.length).toBeGreaterThan(0);
    for (const line of set) expect(line).toMatch(/;\s*secure/i);
    return /^__Host-svc\.browser=([^;]+)/.exec(set[set.length - 1] as string)?.[1] as string;
  }

  it('never finds the secret of the browser cookie (which ties her session to her browser) in ctx.state, nor her password', async () => {
    const from = hostLog.length;
    const secret = await signInOverTheWire();
    const written = hostLog.slice(from).join('\n');
    expect(written).toContain('/interaction/');
    expect(written).not.toContain(secret);
    expect(written).not.toContain('password');
  });

  it('attack: a value a host middleware put in ctx.state (copied from a query, say) does not become her browser secret', async () => {
    planted = 'A'.repeat(43);
    try {
      expect(await signInOverTheWire()).not.toBe(planted);
    } finally {
      planted = undefined;
    }
  });
});

describe.each([
  { hostProxy: true, svcProxy: false, scheme: 'http' },
  { hostProxy: false, svcProxy: true, scheme: 'http' },
  { hostProxy: true, svcProxy: true, scheme: 'http' },
  { hostProxy: false, svcProxy: false, scheme: 'http' },
  { hostProxy: true, svcProxy: false, scheme: 'https' },
  { hostProxy: false, svcProxy: true, scheme: 'https' },
])('a host app with proxy=$hostProxy around svc-connect with svc.proxy=$svcProxy, $scheme base URL', ({ hostProxy, svcProxy, scheme }) => {
  let host: HostServer;
  let svc: SvcConnect;
  let publicOrigin = '';
  const { logger, lines } = capturingLogger();
  const client = confidentialClient({ subject_type: 'public' });

  beforeAll(async () => {
    host = await startHostServer();
    publicOrigin = host.base.replace(/^http:/, `${scheme}:`);
    svc = await createSvcConnect(loadSettings({ env: {}, properties: { 'svc.base-url': publicOrigin, 'svc.proxy': svcProxy } }), { logger, clients: [client] });
    host.serve(new Koa({ keys: svc.cookieKeys, proxy: hostProxy }).use(svc.middleware));
  });
  afterAll(async () => {
    await host.close();
    await svc.close();
  });

  const differ = hostProxy !== svcProxy;
  it(`${differ ? 'is told once that the two disagree (one of them is wrong: the throttles then count the proxy, or a client-written address)' : 'honest: the recipe (proxy: settings.proxy) is told nothing'}, and serves alike`, async () => {
    for (let i = 0; i < 3; i += 1) expect((await fetch(`${host.base}/oidc/v1/.well-known/openid-configuration`, { headers: { 'x-forwarded-for': '198.51.100.7' } })).status).toBe(200);
    const told = lines.map((line) => JSON.parse(line) as { e: string; host_proxy?: boolean; svc_proxy?: boolean }).filter((line) => line.e === 'proxy_settings_differ');
    expect(told).toEqual(differ ? [expect.objectContaining({ host_proxy: hostProxy, svc_proxy: svcProxy })] : []);
  });

  it('attack: forged X-Forwarded-Host and -Proto change neither the issuer nor the Secure flag of the cookies', async () => {
    const forged = { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': scheme === 'https' ? 'http' : 'https' };
    const discovery = (await (await fetch(`${host.base}/oidc/v1/.well-known/openid-configuration`, { headers: forged })).json()) as { issuer: string };
    expect(discovery.issuer).toBe(`${publicOrigin}/oidc/v1`);
    const authorization = await fetch(codeFlowUrl(`${host.base}/oidc/v1`, client), { headers: forged, redirect: 'manual' });
    expect(authorization.status).toBe(303);
    const cookies = authorization.headers.getSetCookie();
    expect(cookies.length).toBeGreaterThan(0);
    for (const cookie of cookies) expect({ cookie, secure: /;\s*secure/i.test(cookie) }).toEqual({ cookie, secure: scheme === 'https' });
  });
});

describe('a host that replaces its svc-connect by a new one on the same store and mailer (a settings reload), then closes the old one', () => {
  const prefix = testPrefix('swap');
  afterAll(async () => deletePrefix(SHARED_REDIS_URL, prefix));

  it('keeps serving with the new one: closing the old one leaves the store and mailer the new one uses open; closing the last one closes them', async () => {
    const host = await startHostServer();
    const settings = loadSettings({
      env: {},
      properties: {
        'svc.base-url': host.base,
        'svc.redis.url': SHARED_REDIS_URL,
        'svc.redis.key-prefix': `${prefix}host:`,
        'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS,
        'svc.cookies.keys': randomBytes(32).toString('base64url'),
        'svc.subject.pairwise-key': TEST_PAIRWISE_KEY,
      },
    });
    const { logger } = capturingLogger();
    const store = createStore(settings.redis, logger);
    const mailer = outboxMailer();
    const client = confidentialClient({ subject_type: 'public' });
    const options = { logger, store, mailer, clients: [client] };
    let current = await createSvcConnect(settings, options);
    const app = new Koa({ keys: current.cookieKeys });
    app.use(async (ctx, next) => {
      await current.middleware(ctx, next);
    });
    host.serve(app);
    try {
      const browser = new FormBrowser();
      await browser.follow(codeFlowUrl(`${host.base}/oidc/v1`, client), host.base);
      expect(browser.lastPage).toContain('id="login-form"');
      const old = current;
      current = await createSvcConnect(settings, options);
      await old.close();
      await old.close();
      expect((await fetch(`${host.base}/readyz`)).status).toBe(200);
      // The sign-in begun before the swap finishes after it, on the records the old one stored.
      const signedIn = await browser.submit('login-form', { login: 'demo', password: 'demo' }, host.base);
      expect(browser.lastPage).toContain('id="consent-allow"');
      expect(signedIn.response?.status).toBe(200);
      expect(mailer.closed).toBe(false);
    } finally {
      await host.close();
      await current.close();
    }
    await expect(store.ping()).rejects.toThrow();
    expect(mailer.closed).toBe(true);
  });

  it('attack: a replacement that fails to start (a static client oidc-provider refuses) leaves the store the running one uses open', async () => {
    const settings = loadSettings({ env: {}, properties: { 'svc.base-url': 'http://127.0.0.1:1', 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS } });
    const { logger } = capturingLogger();
    const store = createStore(settings.redis, logger);
    const running = await createSvcConnect(settings, { logger, store });
    try {
      const hybrid = { client_id: 'hybrid-rp', client_secret: 'x'.repeat(40), redirect_uris: ['https://rp.example/cb'], response_types: ['code' as const, 'code id_token' as const] };
      await expect(createSvcConnect(settings, { logger, store, clients: [hybrid] })).rejects.toThrow(/^static client "hybrid-rp"/);
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      await running.close();
    }
    await expect(store.ping()).rejects.toThrow();
  });

  it('honest: a first start that fails on a static client closes the store it was given, as before (nothing else uses it)', async () => {
    const settings = loadSettings({ env: {}, properties: { 'svc.base-url': 'http://127.0.0.1:1', 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS } });
    const store = createStore(settings.redis, capturingLogger().logger);
    const hybrid = { client_id: 'hybrid-rp', client_secret: 'x'.repeat(40), redirect_uris: ['https://rp.example/cb'], response_types: ['code' as const, 'code id_token' as const] };
    await expect(createSvcConnect(settings, { logger: capturingLogger().logger, store, clients: [hybrid] })).rejects.toThrow(/^static client "hybrid-rp"/);
    await expect(store.ping()).rejects.toThrow();
  });

  it('attack: a replacement that fails to start on its claim modules opens no store connection it would leave open for ever', async () => {
    const settings = loadSettings({ env: {}, properties: { 'svc.base-url': 'http://127.0.0.1:1', 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS } });
    const sockets = (): number => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length;
    const before = sockets();
    const card = { name: 'card', provides: ['svc.ver.idcard.*'], holds: { 'svc.ver.email.*': 'the address' }, resolve: () => ({}) };
    await expect(createSvcConnect(settings, { logger: capturingLogger().logger, claimModules: [card] })).rejects.toThrow('holds names svc.ver.email.*');
    // One turn of the event loop: a store created meanwhile has opened its connection by then.
    await new Promise((resolve) => setImmediate(resolve));
    expect(sockets()).toBe(before);
  });

  it('honest: one svc-connect given a store closes it when it closes, as before', async () => {
    const settings = loadSettings({ env: {}, properties: { 'svc.base-url': 'http://127.0.0.1:1', 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS } });
    const store = createStore(settings.redis, capturingLogger().logger);
    const svc = await createSvcConnect(settings, { logger: capturingLogger().logger, store });
    await svc.close();
    await expect(store.ping()).rejects.toThrow();
  });
});

/** A mailer that sends nothing and says whether it was closed. */
function outboxMailer(): Mailer & { closed: boolean } {
  const mailer = {
    kind: 'smtp' as const,
    closed: false,
    send: () => Promise.resolve(),
    close() {
      mailer.closed = true;
    },
  };
  return mailer;
}

describe.each([
  { how: "router.all('/auth/{*rest}', mount('/auth', svc.middleware))", strip: true },
  { how: "router.all('/auth/{*rest}', svc.middleware), which leaves /auth on the path", strip: false },
])('svc-connect under /auth behind a host router: $how', ({ strip }) => {
  let host: HostServer;
  let svc: SvcConnect;
  const client = confidentialClient({ subject_type: 'public' });

  beforeAll(async () => {
    host = await startHostServer();
    svc = await createSvcConnect(loadSettings({ env: {}, properties: { 'svc.base-url': `${host.base}/auth` } }), { logger: capturingLogger().logger, clients: [client] });
    const router = new Router();
    router.all('/auth/{*rest}', strip ? mount('/auth', svc.middleware) : svc.middleware);
    const app = new Koa({ keys: svc.cookieKeys });
    app.use(router.routes() as Middleware);
    host.serve(app);
  });
  afterAll(async () => {
    await host.close();
    await svc.close();
  });

  if (strip) {
    it('honest: runs the openid-client code flow under /auth', async () => {
      const { claims, userinfo } = await runCodeFlow(`${host.base}/auth/oidc/v1`, client);
      expect([claims.sub, userinfo.sub]).toEqual(['demo-0001', 'demo-0001']);
    });
  } else {
    it('answers every URL 404 not_found (docs/embedding.md: mount it with koa-mount)', async () => {
      const answer = await fetch(`${host.base}/auth/oidc/v1/.well-known/openid-configuration`);
      expect([answer.status, ((await answer.json()) as { error: string }).error]).toEqual([404, 'not_found']);
    });
  }
});

describe("a host app that sets helmet's Cross-Origin-Opener-Policy before svc.middleware and serves pages of its own after it", () => {
  let host: HostServer;
  let svc: SvcConnect;

  beforeAll(async () => {
    host = await startHostServer();
    svc = await createSvcConnect(loadSettings({ env: {}, properties: { 'svc.base-url': host.base } }), { logger: capturingLogger().logger });
    const app = new Koa({ keys: svc.cookieKeys });
    app.use(async (ctx, next) => {
      ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
      await next();
    });
    app.use(svc.middleware);
    app.use(async (ctx, next) => {
      if (ctx.path !== '/account') {
        await next();
        return;
      }
      ctx.type = 'html';
      ctx.body = '<p>the host app’s own account page</p>';
    });
    host.serve(app);
  });
  afterAll(async () => {
    await host.close();
    await svc.close();
  });

  it("attack: the host's own page after svc.middleware keeps the host's COOP (an opener of it gets no handle to it)", async () => {
    const answer = await fetch(`${host.base}/account`);
    expect([answer.status, answer.headers.get('cross-origin-opener-policy')]).toEqual([200, 'same-origin']);
  });

  it('honest: our pages and answers still carry none (a relying party signing her in within a popup keeps its opener)', async () => {
    for (const path of ['/oidc/v1/.well-known/openid-configuration', '/oidc/v1/interaction/unknown', '/healthz']) {
      expect((await fetch(`${host.base}${path}`, { redirect: 'manual' })).headers.get('cross-origin-opener-policy')).toBeNull();
    }
  });
});

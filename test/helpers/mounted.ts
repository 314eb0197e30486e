import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import Koa from 'koa';
import mount from 'koa-mount';

import { createApp, createSvcConnect, loadSettings, silentLogger, type SvcConnect } from '../../lib/index.js';
import type { RuntimeOptions } from '../../lib/provider/runtime.js';
import type { Settings } from '../../lib/settings/types.js';
import { TEST_PAIRWISE_KEY, type RunningApp } from './app.js';
import { testProviderKeys } from './provider-keys.js';
import { TEST_STORE_TIMEOUT_MS } from './redis.js';

/**
 * How svc-connect is served:
 * - `root`: `createApp` with `svc.base-url` at the origin;
 * - `createApp /auth`: `createApp` with `svc.base-url` ending in `/auth` (it serves under that path);
 * - `koa-mount /auth`: a host Koa app with `mount('/auth', svc.middleware)` (docs/embedding.md).
 */
export type Mounting = 'root' | 'createApp /auth' | 'koa-mount /auth';

/** Every mounting, for `describe.each`. */
export const MOUNTINGS: readonly Mounting[] = ['root', 'createApp /auth', 'koa-mount /auth'];

/** A served svc-connect: {@link RunningApp} plus the origin it listens on. */
export interface MountedApp extends RunningApp {
  /** `http://127.0.0.1:port`, without the base path. */
  origin: string;
  svc: SvcConnect;
}

/**
 * Serves svc-connect on 127.0.0.1:0 as `mounting` says. The host app of `koa-mount /auth` answers
 * its own `/` route and 404s everything else outside `/auth`.
 */
export async function startMounted(
  mounting: Mounting,
  options: RuntimeOptions & { properties?: Record<string, string | number | boolean> } = {},
): Promise<MountedApp> {
  let handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const baseUrl = mounting === 'root' ? origin : `${origin}/auth`;
  const { properties, ...runtime } = options;
  const settings: Settings = loadSettings({
    env: {},
    properties: { 'svc.base-url': baseUrl, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS, 'svc.subject.pairwise-key': TEST_PAIRWISE_KEY, ...properties },
  });
  let svc: SvcConnect;
  let app: Koa;
  if (mounting === 'koa-mount /auth') {
    svc = await createSvcConnect(settings, { logger: silentLogger, jwks: await testProviderKeys(), ...runtime });
    app = new Koa({ keys: svc.cookieKeys, proxy: settings.proxy });
    app.use(async (ctx, next) => {
      if (ctx.path === '/') {
        ctx.body = { service: 'host app' };
        return;
      }
      await next();
    });
    app.use(mount('/auth', svc.middleware));
  } else {
    const created = await createApp(settings, { logger: silentLogger, jwks: await testProviderKeys(), ...runtime });
    svc = created.svc;
    app = created;
  }
  const callback = app.callback();
  handler = (req, res) => void callback(req, res);
  return {
    origin,
    baseUrl,
    issuer: `${baseUrl}/oidc/v1`,
    // A Koa app with its svc-connect at hand, like createApp's result.
    app: Object.assign(app, { svc }),
    svc,
    settings,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await svc.close();
    },
  };
}

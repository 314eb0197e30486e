/**
 * Embedding svc-connect in an existing Koa app: the host keeps its own routes and middleware and
 * mounts the svc-connect pieces beside them; svc-connect signs its cookies with its own keys, whatever the host's `keys`.
 */
import Koa from 'koa';

import { createSvcConnect, type RuntimeOptions, type Settings, type SvcConnect } from '../lib/index.js';

/** Builds a host Koa app with its own `/` route and svc-connect mounted at the root. */
export async function createHostApp(settings: Settings, options: RuntimeOptions = {}): Promise<{ app: Koa; svc: SvcConnect }> {
  const svc = await createSvcConnect(settings, options);
  const app = new Koa({ proxy: settings.proxy, keys: svc.cookieKeys });
  app.use(async (ctx, next) => {
    if (ctx.path === '/') {
      ctx.body = { service: 'host app', issuer: svc.provider.issuer };
      return;
    }
    await next();
  });
  app.use(svc.middleware);
  return { app, svc };
}

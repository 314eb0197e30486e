import type { Middleware } from 'koa';
import compose from 'koa-compose';
import mount from 'koa-mount';
import type Provider from 'oidc-provider';

import { PROVIDER_PATH } from '../settings/paths.js';

/**
 * Mounts oidc-provider at {@link PROVIDER_PATH} (`koa-mount`'s prefix rule) and makes every URL it
 * prints (discovery, redirects, cookie paths, form actions) start with `publicPath`: oidc-provider
 * takes it from `ctx.mountPath`, which `koa-mount` sets to its own prefix only (no `/auth` of an outer
 * mount). It comes from `svc.base-url`, not the request: a proxy may serve another path than Koa sees.
 */
export function mountProvider(provider: Provider, publicPath: string): Middleware {
  const publicMount: Middleware = async (ctx, next) => {
    const previous: unknown = ctx.mountPath;
    ctx.mountPath = publicPath;
    try {
      await next();
    } finally {
      ctx.mountPath = previous as string | undefined;
    }
  };
  // provider.use() adds to provider.middleware; koa-mount reads the array once, at mount time, too.
  return mount(PROVIDER_PATH, compose([publicMount, ...provider.middleware]));
}

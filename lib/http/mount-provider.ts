import type { Middleware } from 'koa';
import compose from 'koa-compose';
import mount from 'koa-mount';
import type Provider from 'oidc-provider';

import { PROVIDER_PATH } from '../settings/paths.js';

/**
 * Mounts oidc-provider at {@link PROVIDER_PATH} below wherever this middleware runs, and makes it
 * build every URL it prints (discovery, `registration_client_uri`, redirects to our pages, the
 * interaction and resume cookie paths, form actions of the logout pages) under `publicPath`: the
 * path of `svc.base-url` followed by `/oidc/v1`.
 *
 * oidc-provider's `urlFor` takes its mount path from `ctx.mountPath`, which `koa-mount` sets to its
 * own prefix only: mounted as `mount('/auth', svc.middleware)` the provider would see `/oidc/v1`
 * and print URLs without `/auth`. The public path comes from `svc.base-url` (like the issuer and
 * the pinned `Host`), not from the request: a proxy in front may serve the provider under another
 * path than the one the Koa app sees.
 *
 * Routing is `koa-mount`'s prefix rule. `ctx.mountPath` is restored when the request leaves the
 * provider.
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

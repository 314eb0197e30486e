import type { Context } from 'koa';

import { PROVIDER_PATH } from '../settings/paths.js';

/**
 * The route template the router resolved, for logs and metric labels: `ctx.routerPath`, which
 * @koa/router and oidc-provider's router set on a match (the provider's below {@link PROVIDER_PATH});
 * `other` when no route matched. Never the request's own path, so no id or spelling reaches a label.
 */
export function routeOf(ctx: Context): string {
  const template: unknown = (ctx as Context & { routerPath?: unknown }).routerPath;
  if (typeof template !== 'string') return 'other';
  return 'oidc' in ctx ? `${PROVIDER_PATH}${template}` : template;
}

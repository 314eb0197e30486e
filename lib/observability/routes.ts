import type { Context } from 'koa';

import { PROVIDER_PATH, ROUTES } from '../settings/paths.js';

/** The canonical paths of oidc-provider's endpoints (`/oidc/v1/token`, …). */
const PROVIDER_ROUTES: ReadonlySet<string> = new Set(Object.values(ROUTES).map((route) => `${PROVIDER_PATH}${route}`));

/**
 * The route template the router resolved (`ctx.routerPath`), for logs and metric labels; before a router
 * ran, the endpoint's canonical path when sent to exactly that, else `other`: no id or spelling reaches a label.
 */
export function routeOf(ctx: Context): string {
  const template: unknown = (ctx as Context & { routerPath?: unknown }).routerPath;
  if (typeof template === 'string') return 'oidc' in ctx ? `${PROVIDER_PATH}${template}` : template;
  return PROVIDER_ROUTES.has(ctx.path) ? ctx.path : 'other';
}

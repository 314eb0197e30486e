import type { Context } from 'koa';

import { PROVIDER_PATH, ROUTES } from '../settings/paths.js';

/** The canonical paths of oidc-provider's endpoints (`/oidc/v1/token`, …). */
const PROVIDER_ROUTES: ReadonlySet<string> = new Set(Object.values(ROUTES).map((route) => `${PROVIDER_PATH}${route}`));

/**
 * The route template the router resolved, for logs and metric labels: `ctx.routerPath`, which
 * @koa/router and oidc-provider's router set on a match (the provider's below {@link PROVIDER_PATH}).
 * A request answered before oidc-provider's router ran (a body over the limit, an unreadable body)
 * keeps the endpoint's canonical path when it was sent to exactly that; else `other`. Never a path
 * outside that fixed set, so no id or spelling reaches a label.
 */
export function routeOf(ctx: Context): string {
  const template: unknown = (ctx as Context & { routerPath?: unknown }).routerPath;
  if (typeof template === 'string') return 'oidc' in ctx ? `${PROVIDER_PATH}${template}` : template;
  return PROVIDER_ROUTES.has(ctx.path) ? ctx.path : 'other';
}

import type { Context, Middleware } from 'koa';

import { renderPage, sendPage } from './html.js';

/**
 * Whether a request was sent by another site: browsers that send `Sec-Fetch-Site` must say
 * `same-origin` (or `none`, typed by the user); otherwise an `Origin` other than `origin` counts as
 * cross-site. (`Origin: null`, which browsers send under our `Referrer-Policy: no-referrer`, is
 * judged by `Sec-Fetch-Site` when that is sent, and refused otherwise.) Requests with neither header
 * (curl, scripts) are not cross-site.
 */
export function isCrossSite(ctx: Context, origin: string): boolean {
  const sent = ctx.get('origin');
  const site = ctx.get('sec-fetch-site');
  if (site) return site !== 'same-origin' && site !== 'none';
  return Boolean(sent) && sent !== origin;
}

/**
 * Refuses cross-site form posts to our pages (login, consent, demo) with 403 ({@link isCrossSite}
 * against the public origin of `svc.base-url`). The interaction cookie is also `SameSite=Lax`, so a
 * cross-site POST carries no session either.
 */
export function sameOriginPosts(baseUrl: string): Middleware {
  const origin = new URL(baseUrl).origin;
  return async (ctx, next) => {
    if (ctx.method === 'POST' && isCrossSite(ctx, origin)) {
      sendPage(
        ctx,
        renderPage({
          title: 'Request refused',
          body: '<h1>Request refused</h1><p>This form can only be sent from this site. Go back to the application and start again.</p><p>Error: <code>cross_site_request</code></p>',
        }),
        403,
      );
      return;
    }
    await next();
  };
}

import type { Middleware } from 'koa';

import { isCrossSite } from '../web/same-origin.js';
import { renderPage, sendPage } from './html.js';

/** Refuses cross-site form posts to our pages (login, consent, demo) with 403 ({@link isCrossSite}). */
export function sameOriginPosts(origin: string): Middleware {
  return async (ctx, next) => {
    if (ctx.method === 'POST' && isCrossSite(ctx, origin, { allowNullOriginFromSameOrigin: true })) {
      const body = '<h1>Request refused</h1><p>This form can only be sent from this site. Go back to the application and start again.</p><p>Error: <code>cross_site_request</code></p>';
      sendPage(ctx, renderPage({ title: 'Request refused', body }), 403);
      return;
    }
    await next();
  };
}

import type { Middleware } from 'koa';

import { renderPage, sendPage } from './html.js';

/**
 * Refuses cross-site form posts to our pages (login, consent, demo) with 403. Browsers that send
 * `Sec-Fetch-Site` must say `same-origin` (or `none`); otherwise an `Origin` other than the public
 * origin of `svc.base-url` is refused. (`Origin: null`, which browsers send under our
 * `Referrer-Policy: no-referrer`, is judged by `Sec-Fetch-Site`.) The interaction cookie is also
 * `SameSite=Lax`, so a cross-site POST carries no session either.
 */
export function sameOriginPosts(baseUrl: string): Middleware {
  const origin = new URL(baseUrl).origin;
  return async (ctx, next) => {
    if (ctx.method === 'POST') {
      const sent = ctx.get('origin');
      const site = ctx.get('sec-fetch-site');
      const refused = site ? site !== 'same-origin' && site !== 'none' : Boolean(sent) && sent !== origin;
      if (refused) {
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
    }
    await next();
  };
}

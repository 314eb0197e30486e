import type { Context } from 'koa';

/**
 * Whether a request was sent by another site, by every signal a browser gives: a `Sec-Fetch-Site`
 * other than `same-origin` or `none`; an `Origin` other than `origin`, whatever `Sec-Fetch-Site`
 * says (a forged pair is refused); without both, a `Referer` from another origin (older browsers
 * on a GET navigation). Requests with none of these headers (curl, scripts) are not cross-site.
 * `allowNullOriginFromSameOrigin` accepts `Origin: null` with `Sec-Fetch-Site: same-origin`: form posts of our pages
 * by a browser that sends `Origin: null` all the same (a host app's `Referrer-Policy` header does not make it: the pages'
 * meta element wins, `test/browser/host-referrer-policy.test.ts`).
 */
export function isCrossSite(ctx: Context, origin: string, options: { allowNullOriginFromSameOrigin?: boolean } = {}): boolean {
  const site = ctx.get('sec-fetch-site').trim().toLowerCase();
  const sent = ctx.get('origin').trim();
  if (site && site !== 'same-origin' && site !== 'none') return true;
  if (sent) {
    if (sent === 'null') return !(options.allowNullOriginFromSameOrigin === true && site === 'same-origin');
    return sent !== origin;
  }
  const referer = ctx.get('referer');
  return !site && !!referer && (!URL.canParse(referer) || new URL(referer).origin !== origin);
}

import type { Context } from 'koa';

/** How {@link isCrossSite} judges `Origin: null`. */
export interface CrossSiteOptions {
  /** Accept `Origin: null` with `Sec-Fetch-Site: same-origin`: our pages' form posts under `Referrer-Policy: no-referrer`. */
  allowNullOriginFromSameOrigin?: boolean;
}

/**
 * Whether a request was sent by another site, by every signal a browser gives: a `Sec-Fetch-Site`
 * other than `same-origin` or `none`; an `Origin` other than `origin`, whatever `Sec-Fetch-Site`
 * says (a forged pair is refused); without both, a `Referer` from another origin (older browsers
 * on a GET navigation). Requests with none of these headers (curl, scripts) are not cross-site.
 */
export function isCrossSite(ctx: Context, origin: string, options: CrossSiteOptions = {}): boolean {
  const site = ctx.get('sec-fetch-site').trim().toLowerCase();
  const sent = ctx.get('origin').trim();
  if (site && site !== 'same-origin' && site !== 'none') return true;
  if (sent) {
    if (sent === 'null') return !(options.allowNullOriginFromSameOrigin === true && site === 'same-origin');
    return sent !== origin;
  }
  const referer = ctx.get('referer');
  if (!site && referer) {
    try {
      return new URL(referer).origin !== origin;
    } catch {
      return true;
    }
  }
  return false;
}

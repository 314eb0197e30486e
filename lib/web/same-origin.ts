import type { Context } from 'koa';

/** How {@link isCrossSite} judges `Origin: null`. */
export interface CrossSiteOptions {
  /**
   * Accept `Origin: null` when the browser also says `Sec-Fetch-Site: same-origin`: our own pages'
   * form posts carry `Origin: null` under our `Referrer-Policy: no-referrer`. APIs leave it off, so
   * `null` is refused there.
   */
  allowNullOriginFromSameOrigin?: boolean;
}

/**
 * Whether a request was sent by another site, by every signal a browser gives (C7, C8):
 * - `Sec-Fetch-Site` other than `same-origin` or `none` (typed by the user) → cross-site;
 * - an `Origin` that is not `origin` → cross-site, whatever `Sec-Fetch-Site` says (a browser never
 *   sends both; a forged pair is refused); `Origin: null` → cross-site unless
 *   {@link CrossSiteOptions.allowNullOriginFromSameOrigin} and `Sec-Fetch-Site: same-origin`;
 * - neither header (older browsers send neither on a cross-site GET navigation): a `Referer` from
 *   another origin → cross-site.
 * Requests with none of these headers (curl, scripts) are not cross-site.
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

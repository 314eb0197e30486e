import type { Middleware } from 'koa';

import type { SvcStore } from '../../adapters/store.js';
import { CookieKeyring } from '../web/cookie-keyring.js';

/** oidc-provider's cookies (its default names) naming an interaction: on its pages, and on its resume. */
const INTERACTION_COOKIES = ['_interaction', '_interaction_resume'];

/**
 * A request carrying an interaction's cookie (oidc-provider's, signed) has that interaction and the session its session
 * cookie names read ahead, together: oidc-provider reads them one after the other (on a resume the session, then the
 * interaction; on the pages the interaction, then its session by uid), each a round trip of its own on Redis. Only a
 * read ahead ({@link SvcStore.readAhead}): each is read where it is used, through every adapter rule. A cookie whose
 * signature does not verify reads nothing, nor one sent below a path that does not name its interaction, where a
 * browser never sends it (its cookie path ends in the uid) and nothing reads it: replayed at `/healthz` it would make
 * a request that costs the store nothing cost two reads. Without `readAhead` this is a pass-through.
 */
export function readCookieRecordsAhead(store: Pick<SvcStore, 'readAhead'>, cookieKeys: readonly string[]): Middleware {
  if (!store.readAhead || cookieKeys.length === 0) return (_ctx, next) => next();
  const keyring = new CookieKeyring(cookieKeys);
  return (ctx, next) => {
    const segments = ctx.path.split('/');
    // Read unsigned and verified here: Koa's signed read answers a signature it refuses with a Set-Cookie.
    const verified = (name: string, inPath = false): string | undefined => {
      const [value, signature] = [ctx.cookies.get(name, { signed: false }), ctx.cookies.get(`${name}.sig`, { signed: false })];
      return value && signature && (!inPath || segments.includes(value)) && keyring.verify(`${name}=${value}`, signature) ? value : undefined;
    };
    const interaction = INTERACTION_COOKIES.map((name) => verified(name, true)).find(Boolean);
    if (interaction) {
      store.readAhead?.('Interaction', interaction);
      const session = verified('_session');
      if (session) store.readAhead?.('Session', session);
    }
    return next();
  };
}

import type { Configuration } from 'oidc-provider';

import { ROUTE_NAMES } from '../seams.js';

/**
 * Which web origins may call the client-authenticated endpoints (token, PAR) and UserInfo from a page: only the
 * origins of the client's own redirect URIs, at the token endpoint only for a public client (a confidential client's
 * secret never belongs in a page), never the opaque origin `null` (a sandboxed frame or a `data:` page).
 * oidc-provider's default says the same but announces on the console that it should be replaced.
 */
export const clientBasedCors: NonNullable<Configuration['clientBasedCORS']> = (ctx, origin, client) => {
  if (origin === 'null') return false;
  if (ctx.oidc.route !== ROUTE_NAMES.userinfo && client.clientAuthMethod !== 'none') return false;
  return (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin);
};

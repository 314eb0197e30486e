import { errors, type ClaimsParameter, type Client, type KoaContextWithOIDC } from 'oidc-provider';

import type { ClaimRegistry } from './modules.js';
import { channelCarriesUserData, privacyFix, type Channel } from './privacy.js';
import { storedForm, validateChannel, type ChannelClaims } from './request.js';
import { SCOPE_CLAIMS } from './scopes.js';

const CHANNELS: Channel[] = ['userinfo', 'id_token'];

/**
 * oidc-provider's `features.claimsParameter.assertClaimsParameter`: validates the `claims`
 * parameter (C5), refuses essential claims a client cannot receive (C4), and stores the request
 * with the concrete expansions of bracketed names. Runs after the client and `redirect_uri` are
 * validated, so its `invalid_request` is redirected to the client with `state`.
 */
export function claimsParameterAssertion(registry: ClaimRegistry) {
  return async (ctx: KoaContextWithOIDC, claims: ClaimsParameter, client: Client): Promise<void> => {
    const rewritten: Record<string, unknown> = { ...claims };
    for (const channel of CHANNELS) {
      const members = claims[channel] as ChannelClaims | undefined;
      if (members === undefined) continue;
      const requests = validateChannel(channel, members, registry);
      const essential = requests.find((r) => r.essential);
      if (essential && !channelCarriesUserData(client, channel)) {
        throw new errors.InvalidRequest(`claim ${essential.requested} is essential, but ${privacyFix(channel)}`);
      }
      rewritten[channel] = storedForm(members, requests);
    }
    const params = ctx.oidc.params;
    if (!params) throw new TypeError('claims parameter asserted outside an authorization request');
    params.claims = JSON.stringify(rewritten);
  };
}

/**
 * The `scope` parameter check (an `extraParams` validator): `openid` is required (C3), and every
 * claim of a requested scope must be provided by a claim module (C5). Unknown scopes are ignored.
 */
export function scopeAssertion(registry: ClaimRegistry) {
  return (_ctx: KoaContextWithOIDC, value: string | undefined): void => {
    const scopes = typeof value === 'string' ? value.split(' ') : [];
    if (!scopes.includes('openid')) throw new errors.InvalidScope('the scope must contain openid', 'openid');
    for (const scope of scopes) {
      for (const claim of SCOPE_CLAIMS[scope] ?? []) {
        if (claim !== 'sub' && !registry.providerOf(claim)) {
          throw new errors.InvalidRequest(`claim ${claim} (scope ${scope}) is not provided by any claim module`);
        }
      }
    }
  };
}

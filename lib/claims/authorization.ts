import { errors, type ClaimsParameter, type Client, type KoaContextWithOIDC } from 'oidc-provider';

import { CLAIMS_BUDGET, CLAIMS_CHANNELS, decodeClaimsParameter } from './budget.js';
import type { ClaimRegistry } from './modules.js';
import { assertStoredRequestSize } from './request-size.js';
import { channelCarriesUserData, channelMode, encryptionFix, privacyFix, type Channel } from './privacy.js';
import { isObject, validateChannel, type ChannelClaims } from './request.js';
import { channelRequests, storedForm } from './stored-form.js';
import { deliverableClaims } from './supported.js';
import { ExpansionBudget } from './syntax.js';
import { oauthDescription } from '../web/error-response.js';
import type { ClaimValueMac } from './value-mac.js';
import { parseVerifiedClaims, storedVerified, VERIFIED_CLAIMS } from './verified-request.js';

/**
 * Checks a `claims` parameter (`text` as sent, `claims` as parsed) and returns its stored form: the
 * budget first, then every member (C5), essential claims the client cannot receive (C4), and
 * `verified_claims` (only on a channel encrypted to the client).
 * @throws `invalid_request` naming the limit or the member at fault.
 */
export function rewriteClaimsParameter(
  text: string,
  claims: Readonly<Record<string, unknown>>,
  client: Client,
  registry: ClaimRegistry,
  mac: ClaimValueMac,
  budget = new ExpansionBudget(CLAIMS_BUDGET.maxNames),
): Record<string, unknown> {
  const decoded = decodeClaimsParameter(text, claims);
  const values = mac.forClient(client.clientId);
  // Only the two channels are kept: oidc-provider reads nothing else, so nothing else is stored.
  const rewritten: Record<string, unknown> = {};
  for (const channel of CLAIMS_CHANNELS) {
    const all = decoded[channel];
    if (all === undefined) continue;
    const verifiedMember = all.find((m) => m.name === VERIFIED_CLAIMS);
    const members = all.filter((m) => m !== verifiedMember);
    const requests = validateChannel(channel, members, registry, values, budget);
    assertChannelReachesClient(client, channel, requests.find((r) => r.essential)?.requested, false);
    const stored = storedForm(members, requests, deliverableClaims(registry));
    if (verifiedMember) {
      const verified = parseVerifiedClaims(channel, verifiedMember.spec, registry.offer);
      assertChannelReachesClient(client, channel, undefined, true);
      stored[VERIFIED_CLAIMS] = storedVerified(verified);
    }
    rewritten[channel] = stored;
  }
  return rewritten;
}

/** The checks of a channel that depend on the client's registration (C4): an `essential` claim, `verified_claims`. */
function assertChannelReachesClient(client: Client, channel: Channel, essential: string | undefined, verified: boolean): void {
  if (essential !== undefined && !channelCarriesUserData(client, channel)) {
    throw new errors.InvalidRequest(`claim ${essential} is essential, but ${privacyFix(channel)}`);
  }
  if (verified && channelMode(client, channel) !== 'encrypted') {
    throw new errors.InvalidRequest(`claims.${channel}.${VERIFIED_CLAIMS}: verified claims travel encrypted only: ${encryptionFix(channel)}`);
  }
}

/**
 * The registration's checks of {@link rewriteClaimsParameter} again, on a stored form: a pushed request is loaded at
 * `/authorize` up to a minute after `/par` checked it, and the client may have changed its encryption meanwhile.
 */
export function assertStoredClaimsReachClient(stored: Readonly<Record<string, unknown>>, client: Client): void {
  for (const channel of CLAIMS_CHANNELS) {
    const form = stored[channel];
    if (!isObject(form)) continue;
    assertChannelReachesClient(client, channel, channelRequests(form as ChannelClaims).find((r) => r.essential)?.requested, VERIFIED_CLAIMS in form);
  }
}

/** `features.claimsParameter.assertClaimsParameter`: replaces the parameter with its stored form (errors redirect with `state`). */
export function claimsParameterAssertion(registry: ClaimRegistry, mac: ClaimValueMac) {
  return async (ctx: KoaContextWithOIDC, claims: ClaimsParameter, client: Client): Promise<void> => {
    const params = ctx.oidc.params;
    if (!params) throw new TypeError('claims parameter asserted outside an authorization request');
    const text = typeof params.claims === 'string' ? params.claims : JSON.stringify(claims);
    try {
      params.claims = JSON.stringify(rewriteClaimsParameter(text, claims as Record<string, unknown>, client, registry, mac));
    } catch (err) {
      // Claim names and members are quoted back as sent: only characters OAuth allows reach the client.
      if (err instanceof errors.OIDCProviderError && typeof err.error_description === 'string') err.error_description = oauthDescription(err.error_description);
      throw err;
    }
  };
}

/**
 * The `scope` check (an `extraParams` validator): `openid` is required (C3), then {@link assertStoredRequestSize}.
 * Other scopes need no check: oidc-provider knows only the offered ones (every claim provided, C5) and ignores the rest.
 */
export function assertScope(ctx: KoaContextWithOIDC, value: string | undefined): void {
  // No `scope` beside the error (oidc-provider adds a defined one): it would read as granted.
  if (typeof value !== 'string' || !value.split(' ').includes('openid')) throw Object.assign(new errors.InvalidScope('the scope must contain openid', ''), { scope: undefined });
  assertStoredRequestSize(ctx);
}

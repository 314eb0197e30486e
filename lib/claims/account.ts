import { errors, type Account, type Client, type FindAccount, type KoaContextWithOIDC } from 'oidc-provider';

import type { Authenticator } from './authenticator.js';
import { deliveryOf, deliveryText, parseDelivery, recordedDelivery, scopeClaimCovered, subjectShared, travelCovered, travelName, weakerThanConsented, type Delivery } from './delivery.js';
import { ROUTE_NAMES } from '../seams.js';
import type { ClaimRegistry } from './modules.js';
import { asAuthenticatorError } from './authenticator-guard.js';
import { opaqueFailure } from './plugin-failure.js';
import { channelCarriesUserData, channelMode, type Channel } from './privacy.js';
import type { ChannelClaims, ClaimRequest } from './request.js';
import { resolveRequests } from './resolve.js';
import { claimsForScope } from './scopes.js';
import { channelRequests } from './stored-form.js';
import type { ClaimValueMac } from './value-mac.js';
import { answerVerified } from './verified-answer.js';
import { verifiedRequestsOf } from './verified-request.js';

/** What {@link createFindAccount} needs. */
export interface AccountOptions {
  authenticator: Authenticator;
  registry: ClaimRegistry;
  /** `svc.stage.include-scopes-in-user-info`. */
  includeScopesInUserInfo: boolean;
  valueMac: ClaimValueMac;
}

/**
 * A channel's requests, each with the alternatives her grant (`approved`) covers in `channel`: scope claims not named
 * in the `claims` parameter (here or `namedElsewhere`), which travel alone, then its named ones.
 */
function requestsFor(
  channel: Channel,
  approved: ReadonlySet<string>,
  scope: string | undefined,
  claims: ChannelClaims | undefined,
  rejected: readonly string[] = [],
  namedElsewhere: readonly string[] = [],
): ClaimRequest[] {
  const explicit = channelRequests(claims);
  const named = new Set([...explicit.map((r) => r.requested), ...namedElsewhere]);
  const fromScope = claimsForScope(scope)
    .filter((c) => !named.has(c))
    .filter(scopeClaimCovered(approved, channel))
    .map((c) => ({ requested: c, alternatives: [c], essential: false }));
  const granted = explicit
    .map((r) => ({ ...r, alternatives: r.alternatives.filter((name) => travelCovered(approved, travelName(channel, name))) }))
    .filter((r) => r.alternatives.length > 0);
  const skip = new Set(rejected);
  return [...fromScope, ...granted].filter((r) => !skip.has(r.requested));
}

/**
 * The channel scope claims and `scope` travel in (C5) under `delivery`: the configured one, or the other when only
 * it carries user data. Codes and tokens of a grant send them where its recorded delivery says.
 */
export function scopeChannelOf(delivery: Delivery | undefined, includeScopesInUserInfo: boolean): Channel {
  const chosen: Channel = includeScopesInUserInfo ? 'userinfo' : 'id_token';
  const other: Channel = chosen === 'userinfo' ? 'id_token' : 'userinfo';
  return delivery && delivery[chosen] === 'withheld' && delivery[other] !== 'withheld' ? other : chosen;
}

/** The channel scope claims and `scope` travel in (C5) for `client`'s registration as it is now. */
export function scopeChannel(client: Client | undefined, includeScopesInUserInfo: boolean): Channel {
  return scopeChannelOf(client && deliveryOf(client), includeScopesInUserInfo);
}

const DELIVERY_TOKEN_CLAIM = 'svc_delivery';

/** oidc-provider's `extraTokenClaims`: the delivery consented to, so a registration weakened later gets no plaintext. */
export function deliveryTokenClaims(ctx: KoaContextWithOIDC | undefined): Record<string, string> | undefined {
  const grant = ctx?.oidc.entities.Grant;
  const consented = grant ? recordedDelivery(grant) : undefined;
  return consented ? { [DELIVERY_TOKEN_CLAIM]: deliveryText(consented) } : undefined;
}

/** A channel's `verified_claims` answer: only encrypted to the client, only what the grant records consent for. */
async function verifiedClaimsFor(ctx: KoaContextWithOIDC, registry: ClaimRegistry, accountId: string, channel: Channel, claims: ChannelClaims | undefined): Promise<unknown> {
  const requests = verifiedRequestsOf(claims);
  const { client, entities: { Grant: grant } } = ctx.oidc;
  if (requests.length === 0 || !client || !grant || channelMode(client, channel) !== 'encrypted') return undefined;
  return answerVerified(requests, await registry.resolveVerified(accountId), new Set(grant.getOIDCClaims()));
}

/**
 * oidc-provider's `findAccount`: an account exists while its authenticator says so; its claims come
 * from the claim modules and leave only on a channel that may carry them (C4), in the delivery the
 * person consented to, each claim once (C5).
 */
export function createFindAccount(options: AccountOptions): FindAccount {
  const { authenticator, registry, includeScopesInUserInfo, valueMac } = options;
  return async (ctx: KoaContextWithOIDC, sub: string): Promise<Account | undefined> => {
    // Asked on every request of a signed-in browser, before any consent: what it throws never reaches a client.
    const exists = await opaqueFailure(asAuthenticatorError, () => authenticator.exists(sub));
    if (!exists) return undefined;
    return {
      accountId: sub,
      async claims(use, scope, claims, rejected) {
        const channel: Channel = use === 'id_token' ? 'id_token' : 'userinfo';
        const client = ctx.oidc.client;
        // Both the ID token and UserInfo are answered with an access token of this grant in hand.
        const token = ctx.oidc.accessToken;
        const consented = parseDelivery(token?.extra?.[DELIVERY_TOKEN_CLAIM]);
        // Her account id is the `sub` itself: nothing of this grant's is answered once it would travel (C8).
        if (client && subjectShared(deliveryOf(client), consented)) {
          const why = 'the grant covers a pairwise subject identifier; the client now receives the account identifier';
          throw ctx.oidc.route === ROUTE_NAMES.userinfo ? new errors.InvalidToken(why) : new errors.InvalidGrant(why);
        }
        // Scope claims travel where the page said when she consented, also after the registration changed.
        const scopeHere = scopeChannelOf(consented ?? (client && deliveryOf(client)), includeScopesInUserInfo) === channel;
        const protocol: { sub: string; [claim: string]: unknown } = { sub };
        if (scope && scopeHere) protocol.scope = scope;
        if (!client || !channelCarriesUserData(client, channel)) return protocol;
        if (weakerThanConsented(deliveryOf(client), consented)) return protocol;
        // The names the other member requested, as the consent page reads them: not the alternatives its groups offer.
        const other = channelRequests((token?.claims as Record<string, ChannelClaims | undefined> | undefined)?.[channel === 'id_token' ? 'userinfo' : 'id_token']);
        // Only where her grant says each claim travels: the operator may have moved the scope channel since.
        const approved = new Set(ctx.oidc.entities.Grant?.getOIDCClaims());
        const requests = requestsFor(channel, approved, scopeHere ? scope : undefined, claims, rejected, other.map((r) => r.requested));
        const { values } = await resolveRequests(registry, sub, requests, valueMac.forClient(client.clientId));
        const verified = await verifiedClaimsFor(ctx, registry, sub, channel, claims);
        return { ...values, ...(verified === undefined ? {} : { verified_claims: verified }), ...protocol };
      },
    };
  };
}

import { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';

import { scopeChannel, scopeChannelOf } from './account.js';
import { CLAIMS_CHANNELS } from './budget.js';
import { beyondApprovedGroups, weakerThanConsented, deliveryOf, grantedOf, recordedDelivery, travelConsented } from './delivery.js';
import { deliverableClaims } from './supported.js';
import type { ClaimRegistry } from './modules.js';
import { channelCarriesUserData, type Channel } from './privacy.js';
import type { ChannelClaims, ClaimRequest } from './request.js';
import { resolveRequests } from './resolve.js';
import { channelRequests } from './stored-form.js';
import type { ClaimValueMac, ValueMatcher } from './value-mac.js';
import { verifiedGrantNamesOf } from './verified-request.js';

/** The prompt (after `consent`) whose interaction our pages end with `access_denied`. */
export const ESSENTIAL_CLAIMS_PROMPT = 'essential_claims';

/**
 * The essential claims of this request the account cannot satisfy (both channels resolved together), of those
 * `granted` covers: a name no grant covers (one a module provides by pattern outside `claims_supported`, which
 * no consent page asks for) is never looked up, so it answers nothing about the person. Those of a channel that
 * does not `carry` user data to the client (its registration changed since the request was checked) are missing
 * for everyone, looked up neither.
 */
async function missingEssentialClaims(
  registry: ClaimRegistry,
  values: ValueMatcher,
  accountId: string,
  claims: Record<string, unknown> | undefined,
  granted: ReadonlySet<string>,
  carries: (channel: Channel) => boolean,
): Promise<string[]> {
  const essential = (channel: Channel): ClaimRequest[] => channelRequests(claims?.[channel] as ChannelClaims | undefined).filter((r) => r.essential);
  const withheld = CLAIMS_CHANNELS.filter((channel) => !carries(channel)).flatMap(essential);
  if (withheld.length > 0) return withheld.map((r) => r.requested);
  const requests = CLAIMS_CHANNELS.flatMap(essential)
    .map((r) => ({ ...r, alternatives: r.alternatives.filter((name) => granted.has(name)) }))
    .filter((r) => r.alternatives.length > 0);
  if (requests.length === 0) return [];
  return [...new Set((await resolveRequests(registry, accountId, requests, values)).missingEssential)];
}

/**
 * oidc-provider's interaction policy with checks more on `login`, checks more on `consent` (C8) and, after it, a
 * prompt of our own ending with `access_denied` (C5): it runs only once consent is given, so the modules are never
 * asked before; its details stay empty, so no missing name is stored.
 */
export function createInteractionPolicy(registry: ClaimRegistry, mac: ClaimValueMac, includeScopesInUserInfo: boolean): interactionPolicy.Prompt[] {
  const prompt = (needed: boolean): boolean => (needed ? interactionPolicy.Check.REQUEST_PROMPT : interactionPolicy.Check.NO_NEED_TO_PROMPT);
  const policy = interactionPolicy.base();
  const consent = policy.get('consent');
  const login = policy.get('login');
  if (!consent || !login) throw new TypeError('oidc-provider interaction policy has no consent or login prompt');
  // A silent request of a client she never approved ends as consent_required before max_age is judged: that answer
  // would tell the client when she signed in (login_required against consent_required, one max_age after another).
  const afterNoSession = login.checks.findIndex((check) => check.reason === 'no_session') + 1;
  login.checks.add(
    new interactionPolicy.Check('client_not_approved', 'the client is not approved', 'consent_required', (ctx: KoaContextWithOIDC) =>
      // oidc-provider stands a fresh, unsaved grant (no `jti`) in for one the store does not hold.
      prompt(Boolean(ctx.oidc.session?.accountId) && ctx.oidc.promptPending('none') && !ctx.oidc.grant?.jti),
    ),
    afterNoSession,
  );
  // Her session's account deleted since (the authenticator no longer knows it): the session has ended, she signs in
  // again. oidc-provider loads no account and no grant for it, and its consent prompt would read that grant (a 500).
  login.checks.add(
    new interactionPolicy.Check('account_not_found', 'the account of the session no longer exists', 'login_required', (ctx: KoaContextWithOIDC) =>
      prompt(Boolean(ctx.oidc.session?.accountId) && !ctx.oidc.account),
    ),
    afterNoSession,
  );
  consent.checks.add(
    new interactionPolicy.Check('delivery_not_consented', 'the grant does not cover how the client receives user data', 'consent_required', (ctx: KoaContextWithOIDC) => {
      const { client, grant } = ctx.oidc;
      return prompt(!client || !grant || weakerThanConsented(deliveryOf(client), recordedDelivery(grant)));
    }),
  );
  consent.checks.add(
    new interactionPolicy.Check('claims_travel_not_consented', 'the grant does not cover the channel each requested claim travels in', 'consent_required', (ctx: KoaContextWithOIDC) => {
      const { grant, client } = ctx.oidc;
      const granted = grantedOf(grant);
      const scope = typeof ctx.oidc.params?.scope === 'string' ? ctx.oidc.params.scope : undefined;
      // Where the page shows scope claims (the registration now), and where this grant's codes and tokens send them
      // (the delivery it records): a registration changed since may tell them apart.
      const recorded = grant && recordedDelivery(grant);
      const channels = new Set([scopeChannel(client, includeScopesInUserInfo), ...(recorded ? [scopeChannelOf(recorded, includeScopesInUserInfo)] : [])]);
      return prompt(![...channels].every((channel) => travelConsented(ctx.oidc.claims, scope, channel, granted)));
    }),
  );
  consent.checks.add(
    new interactionPolicy.Check('claims_named_not_consented', 'the grant covers a requested claim only within another group', 'consent_required', (ctx: KoaContextWithOIDC) =>
      prompt(beyondApprovedGroups(ctx.oidc.claims, grantedOf(ctx.oidc.grant), deliverableClaims(registry))),
    ),
  );
  consent.checks.add(
    new interactionPolicy.Check('verified_claims_not_consented', 'the grant does not cover every verified claim requested', 'consent_required', (ctx: KoaContextWithOIDC) => {
      const granted = grantedOf(ctx.oidc.grant).claims;
      return prompt(!verifiedGrantNamesOf(ctx.oidc.claims).every((n) => granted.has(n)));
    }),
  );
  policy.add(
    new interactionPolicy.Prompt(
      { name: ESSENTIAL_CLAIMS_PROMPT, requestable: false },
      new interactionPolicy.Check('essential_claims_unavailable', 'an essential claim is not available for this account', 'access_denied', async (ctx: KoaContextWithOIDC) => {
        const accountId = ctx.oidc.session?.accountId;
        const client = ctx.oidc.client;
        if (!accountId || !client) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
        const granted = grantedOf(ctx.oidc.grant).claims;
        const claims = ctx.oidc.claims as Record<string, unknown> | undefined;
        const missing = await missingEssentialClaims(registry, mac.forClient(client.clientId), accountId, claims, granted, (channel) => channelCarriesUserData(client, channel));
        return prompt(missing.length > 0);
      }),
    ),
  );
  return policy;
}

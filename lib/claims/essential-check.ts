import { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';

import type { ClaimRegistry } from './modules.js';
import type { ChannelClaims } from './request.js';
import { channelRequests } from './request.js';
import { resolveRequests } from './resolve.js';

/** The reason our interaction pages see when an essential claim is unavailable. */
export const ESSENTIAL_CLAIMS_REASON = 'essential_claims_unavailable';

/** The essential claims of this authorization request the signed-in account cannot satisfy. */
export async function missingEssentialClaims(registry: ClaimRegistry, accountId: string, claims: Record<string, unknown> | undefined): Promise<string[]> {
  const missing = new Set<string>();
  for (const channel of ['userinfo', 'id_token']) {
    const requests = channelRequests(claims?.[channel] as ChannelClaims | undefined).filter((r) => r.essential);
    if (requests.length === 0) continue;
    for (const name of (await resolveRequests(registry, accountId, requests)).missingEssential) missing.add(name);
  }
  return [...missing];
}

/**
 * oidc-provider's interaction policy with one more consent check: an essential claim the account
 * cannot satisfy ends the authorization with `access_denied` (C5). With `prompt=none` oidc-provider
 * answers the error directly; otherwise our interaction page finishes with it.
 */
export function createInteractionPolicy(registry: ClaimRegistry): interactionPolicy.Prompt[] {
  const policy = interactionPolicy.base();
  const consent = policy.get('consent');
  if (!consent) throw new TypeError('oidc-provider interaction policy has no consent prompt');
  consent.checks.add(
    new interactionPolicy.Check(
      ESSENTIAL_CLAIMS_REASON,
      'an essential claim is not available for this account',
      'access_denied',
      async (ctx: KoaContextWithOIDC) => {
        const accountId = ctx.oidc.session?.accountId;
        if (!accountId) return interactionPolicy.Check.NO_NEED_TO_PROMPT;
        const missing = await missingEssentialClaims(registry, accountId, ctx.oidc.claims as Record<string, unknown> | undefined);
        return missing.length > 0 ? interactionPolicy.Check.REQUEST_PROMPT : interactionPolicy.Check.NO_NEED_TO_PROMPT;
      },
      async (ctx: KoaContextWithOIDC) => {
        const accountId = ctx.oidc.session?.accountId;
        return { missingEssentialClaims: accountId ? await missingEssentialClaims(registry, accountId, ctx.oidc.claims as Record<string, unknown> | undefined) : [] };
      },
    ),
  );
  return policy;
}

import { interactionPolicy, type KoaContextWithOIDC } from 'oidc-provider';

import type { ClaimRegistry } from './modules.js';
import type { ChannelClaims } from './request.js';
import { resolveRequests } from './resolve.js';
import { channelRequests } from './stored-form.js';
import type { ClaimValueMac, ValueMatcher } from './value-mac.js';

/** The reason our interaction pages see when an essential claim is unavailable. */
export const ESSENTIAL_CLAIMS_REASON = 'essential_claims_unavailable';

/** At most this many missing names are kept in the interaction's prompt details (and reported). */
const REPORTED_NAMES = 16;
/** Longer requested names are reported shortened to this many characters. */
const REPORTED_LENGTH = 80;

/**
 * The essential claims of this authorization request the signed-in account cannot satisfy: both
 * channels resolved together, with one call per claim module.
 */
export async function missingEssentialClaims(registry: ClaimRegistry, values: ValueMatcher, accountId: string, claims: Record<string, unknown> | undefined): Promise<string[]> {
  const requests = ['userinfo', 'id_token'].flatMap((channel) => channelRequests(claims?.[channel] as ChannelClaims | undefined).filter((r) => r.essential));
  if (requests.length === 0) return [];
  return [...new Set((await resolveRequests(registry, accountId, requests, values)).missingEssential)];
}

/**
 * The missing names as the interaction keeps and reports them: bounded, so a request full of
 * long essential names cannot grow the stored interaction.
 */
export function reportedNames(missing: readonly string[]): string[] {
  const shown = missing.slice(0, REPORTED_NAMES).map((n) => (n.length > REPORTED_LENGTH ? `${n.slice(0, REPORTED_LENGTH)}…` : n));
  return missing.length > REPORTED_NAMES ? [...shown, `(and ${missing.length - REPORTED_NAMES} more)`] : shown;
}

/** One answer per request: the check and its details ask the same question. */
const answers = new WeakMap<object, { accountId: string; claims: unknown; missing: Promise<string[]> }>();

function missingFor(ctx: KoaContextWithOIDC, registry: ClaimRegistry, mac: ClaimValueMac, accountId: string): Promise<string[]> {
  const claims = ctx.oidc.claims as Record<string, unknown> | undefined;
  const known = answers.get(ctx);
  if (known && known.accountId === accountId && known.claims === claims) return known.missing;
  const client = ctx.oidc.client;
  if (!client) throw new TypeError('essential claims checked outside an authorization request');
  const missing = missingEssentialClaims(registry, mac.forClient(client.clientId), accountId, claims);
  answers.set(ctx, { accountId, claims, missing });
  return missing;
}

/**
 * oidc-provider's interaction policy with one more consent check: an essential claim the account
 * cannot satisfy ends the authorization with `access_denied` (C5). With `prompt=none` oidc-provider
 * answers the error directly; otherwise our interaction page finishes with it.
 */
export function createInteractionPolicy(registry: ClaimRegistry, mac: ClaimValueMac): interactionPolicy.Prompt[] {
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
        const missing = await missingFor(ctx, registry, mac, accountId);
        return missing.length > 0 ? interactionPolicy.Check.REQUEST_PROMPT : interactionPolicy.Check.NO_NEED_TO_PROMPT;
      },
      async (ctx: KoaContextWithOIDC) => {
        const accountId = ctx.oidc.session?.accountId;
        return { missingEssentialClaims: accountId ? reportedNames(await missingFor(ctx, registry, mac, accountId)) : [] };
      },
    ),
  );
  return policy;
}

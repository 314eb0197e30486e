import type { ClaimRegistry } from './modules.js';
import { SCOPE_CLAIMS } from './scopes.js';

/**
 * What the installed claim modules make of the fixed scope map: the scopes whose every claim a
 * module provides (`scopes_supported`), and those only partly provided, with the claims missing.
 */
export interface ScopeOffer {
  offered: readonly string[];
  partial: readonly { scope: string; missing: readonly string[] }[];
}

const offers = new WeakMap<ClaimRegistry, ScopeOffer>();
const deliverable = new WeakMap<ClaimRegistry, ReadonlySet<string>>();

/**
 * The scopes a deployment offers (C5): only those whose every claim the modules provide, so a scope
 * means the same thing wherever it is offered; a request naming another is served without it.
 */
export function scopeOffer(registry: ClaimRegistry): ScopeOffer {
  let offer = offers.get(registry);
  if (!offer) {
    const offered: string[] = [];
    const partial: { scope: string; missing: string[] }[] = [];
    for (const [scope, claims] of Object.entries(SCOPE_CLAIMS)) {
      const userClaims = claims.filter((c) => c !== 'sub');
      const missing = userClaims.filter((c) => !registry.providerOf(c));
      if (missing.length === 0) offered.push(scope);
      else if (missing.length < userClaims.length) partial.push({ scope, missing });
    }
    offer = { offered, partial };
    offers.set(registry, offer);
  }
  return offer;
}

/** The offered scopes of {@link scopeOffer} as a set. */
export function offeredScopes(registry: ClaimRegistry): ReadonlySet<string> {
  return new Set(scopeOffer(registry).offered);
}

/**
 * The concrete names oidc-provider can deliver (its `claims_supported`): its claim filters drop any
 * other name, so an alternative outside this set is never stored.
 */
export function deliverableClaims(registry: ClaimRegistry): ReadonlySet<string> {
  let names = deliverable.get(registry);
  if (!names) {
    const scopeClaims = scopeOffer(registry).offered.flatMap((scope) => SCOPE_CLAIMS[scope] ?? []);
    names = new Set([...scopeClaims, ...registry.supportedNames()]);
    deliverable.set(registry, names);
  }
  return names;
}

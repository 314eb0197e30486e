import type { ClaimRegistry } from './modules.js';
import { SCOPE_CLAIMS } from './scopes.js';

/** What the installed claim modules make of the fixed scope map. */
export interface ScopeOffer {
  /** Scopes whose every claim a module provides (`openid` always): discovery's `scopes_supported`. */
  offered: readonly string[];
  /** Scopes some but not all of whose claims a module provides, with the claims nobody provides. */
  partial: readonly { scope: string; missing: readonly string[] }[];
}

const offers = new WeakMap<ClaimRegistry, ScopeOffer>();
const deliverable = new WeakMap<ClaimRegistry, ReadonlySet<string>>();

/**
 * The scopes a deployment offers (C5): the scope map is fixed in code, and a scope is offered only
 * when the claim modules provide every claim of it, so a scope means the same thing wherever it is
 * offered. A scope that is not offered is not in discovery, and a request naming it is served
 * without it (like `address` or `phone`). A partly provided scope is reported in `partial` so the
 * operator can be told at start.
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
 * The concrete names oidc-provider can deliver: its `claims_supported` (the offered scopes' claims
 * and every name the modules list for discovery, as `createConfiguration` configures them). Its
 * claim filters drop any other name, so an alternative outside this set never needs to be stored.
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

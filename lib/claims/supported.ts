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

/** `build`, computed once per registry. */
function perRegistry<T>(build: (registry: ClaimRegistry) => T): (registry: ClaimRegistry) => T {
  const cache = new WeakMap<ClaimRegistry, T>();
  return (registry) => {
    if (!cache.has(registry)) cache.set(registry, build(registry));
    return cache.get(registry) as T;
  };
}

/**
 * The scopes a deployment offers (C5): only those whose every claim the modules provide, so a scope
 * means the same thing wherever it is offered; a request naming another is served without it.
 */
export const scopeOffer = perRegistry((registry): ScopeOffer => {
  const offered: string[] = [];
  const partial: { scope: string; missing: string[] }[] = [];
  for (const [scope, claims] of Object.entries(SCOPE_CLAIMS)) {
    const userClaims = claims.filter((c) => c !== 'sub');
    const missing = userClaims.filter((c) => !registry.providerOf(c));
    if (missing.length === 0) offered.push(scope);
    else if (missing.length < userClaims.length) partial.push({ scope, missing });
  }
  return { offered, partial };
});

/** The offered scopes of {@link scopeOffer} as a set. */
export function offeredScopes(registry: ClaimRegistry): ReadonlySet<string> {
  return new Set(scopeOffer(registry).offered);
}

/**
 * The concrete names oidc-provider can deliver (its `claims_supported`): its claim filters drop any
 * other name, so an alternative outside this set is never stored.
 */
export const deliverableClaims = perRegistry(
  (registry): ReadonlySet<string> => new Set([...scopeOffer(registry).offered.flatMap((scope) => SCOPE_CLAIMS[scope] ?? []), ...registry.supportedNames()]),
);

import type { ClaimRegistry } from './modules.js';
import { SCOPE_CLAIMS } from './scopes.js';

/** The scopes whose every claim a module provides (`scopes_supported`), and those partly provided. */
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

/** The scopes a deployment offers (C5): only those whose every claim the modules provide. */
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

/** `claims_supported`: oidc-provider's filters drop any other name, so no other alternative is stored. */
export const deliverableClaims = perRegistry((registry): ReadonlySet<string> => {
  const scopeClaims = scopeOffer(registry).offered.flatMap((scope) => SCOPE_CLAIMS[scope] ?? []);
  return new Set([...scopeClaims, ...registry.supportedNames()]);
});

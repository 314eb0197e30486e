import type { ClaimRegistry } from './modules.js';
import type { ClaimRequest } from './request.js';
import type { ValueMatcher } from './value-mac.js';

/** What resolution produced for one account. */
export interface Resolution {
  /** Delivered claims under their concrete names. */
  values: Record<string, unknown>;
  /** Requested names that were essential and not satisfied. */
  missingEssential: string[];
}

/**
 * Resolves requests for an account with one call per claim module: for each request the first
 * satisfied alternative in written order is delivered under its concrete name; a request with
 * `value` is satisfied only by that value (compared by its keyed MAC); unsatisfied requests are
 * omitted, or listed in `missingEssential` when essential.
 */
export async function resolveRequests(registry: ClaimRegistry, accountId: string, requests: readonly ClaimRequest[], values: ValueMatcher): Promise<Resolution> {
  const available = await registry.resolve(accountId, requests.flatMap((r) => r.alternatives));
  const delivered: Record<string, unknown> = {};
  const missingEssential: string[] = [];
  for (const request of requests) {
    const { valueMac } = request;
    const hit = request.alternatives.find((name) => available.has(name) && (valueMac === undefined || values.matches(available.get(name), valueMac)));
    if (hit !== undefined) delivered[hit] = available.get(hit);
    else if (request.essential) missingEssential.push(request.requested);
  }
  return { values: delivered, missingEssential };
}

import type { ClaimRegistry } from './modules.js';
import { hashClaimValue, type ClaimRequest } from './request.js';

/** What resolution produced for one account. */
export interface Resolution {
  /** Delivered claims under their concrete names. */
  values: Record<string, unknown>;
  /** Requested names that were essential and not satisfied. */
  missingEssential: string[];
}

/**
 * Resolves requests for an account: for each request the first satisfied alternative in written
 * order is delivered under its concrete name; a request with `value` is satisfied only by that
 * value (compared by hash); unsatisfied requests are omitted, or listed in `missingEssential` when essential.
 */
export async function resolveRequests(registry: ClaimRegistry, accountId: string, requests: readonly ClaimRequest[]): Promise<Resolution> {
  const available = await registry.resolve(accountId, requests.flatMap((r) => r.alternatives));
  const values: Record<string, unknown> = {};
  const missingEssential: string[] = [];
  for (const request of requests) {
    const hit = request.alternatives.find((name) => available.has(name) && (request.valueHash === undefined || hashClaimValue(available.get(name)) === request.valueHash));
    if (hit !== undefined) values[hit] = available.get(hit);
    else if (request.essential) missingEssential.push(request.requested);
  }
  return { values, missingEssential };
}

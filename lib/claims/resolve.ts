import type { ClaimRegistry } from './modules.js';
import type { ClaimRequest } from './request.js';
import type { ValueMatcher } from './value-mac.js';

/** What resolution produced for one account: values under their concrete names, essential names unsatisfied. */
export interface Resolution {
  values: Record<string, unknown>;
  missingEssential: string[];
}

/** Resolves requests, one call per module: each gets its first satisfied alternative (a `value` compared by MAC). */
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

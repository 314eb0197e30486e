import { errors } from 'oidc-provider';

import type { DecodedMember } from './budget.js';
import type { ClaimRegistry } from './modules.js';
import { PROTOCOL_CLAIMS } from './scopes.js';
import { expandClaimTree, type ExpansionBudget } from './syntax.js';
import type { ValueMatcher } from './value-mac.js';

/** One requested claim; `valueMac` is the keyed MAC of a requested value, never stored itself (C5, C10). */
export interface ClaimRequest {
  requested: string;
  alternatives: string[];
  essential: boolean;
  valueMac?: string;
}

/** The members of one channel of the `claims` parameter (`userinfo` or `id_token`). */
export type ChannelClaims = Record<string, unknown>;

/** Names modules never resolve: protocol claims, and `verified_claims` (answered from its own requests). */
export const NOT_RESOLVED: ReadonlySet<string> = new Set([...PROTOCOL_CLAIMS, 'acr', 'amr', 'azp', 'sid', 'verified_claims']);

/** A JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How deep a requested `value` may nest arrays and objects (C5); deeper is `invalid_request`. */
export const MAX_VALUE_DEPTH = 16;

/** Nesting depth of a JSON value, without recursion and stopping past {@link MAX_VALUE_DEPTH} (hostile input). */
function nestingDepth(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    const level = depth + 1;
    deepest = Math.max(deepest, level);
    if (deepest > MAX_VALUE_DEPTH) return deepest;
    for (const child of Object.values(item)) pending.push([child, level]);
  }
  return deepest;
}

/**
 * Validates one decoded channel of the `claims` parameter (C5); returns its requests in member order.
 * @throws `invalid_request` naming the member at fault.
 */
export function validateChannel(
  channel: string,
  members: readonly DecodedMember[],
  registry: ClaimRegistry,
  values: ValueMatcher,
  budget?: ExpansionBudget,
): ClaimRequest[] {
  const requests: ClaimRequest[] = [];
  for (const { name, spec, tree, syntaxError } of members) {
    const bad = (fault: string): errors.InvalidRequest => new errors.InvalidRequest(`claims.${channel}.${name}${fault}`);
    if (name === '_claim_names' || name === '_claim_sources') {
      throw new errors.InvalidRequest(`claims.${channel}: aggregated and distributed claims are not supported`);
    }
    if (spec !== null && !isObject(spec)) throw bad(' must be null or an object');
    if (isObject(spec)) {
      if (spec.essential !== undefined && typeof spec.essential !== 'boolean') throw bad(': essential must be true or false');
      if ('value' in spec && nestingDepth(spec.value) > MAX_VALUE_DEPTH) throw bad(`: value is nested more than ${MAX_VALUE_DEPTH} levels deep`);
      // Core 5.5.1 would make it a condition on who signs in; answering it could tell whose session this is.
      if (name === 'sub' && 'value' in spec) throw bad(': a value is not supported (the ID token is about whoever signs in)');
    }
    // Core 5.5.1.1: an essential acr the provider cannot meet fails the authentication, and no acr is ever issued (C3).
    if (channel === 'id_token' && name === 'acr' && isObject(spec) && spec.essential === true && ('values' in spec || 'value' in spec)) {
      throw new errors.AccessDenied('claims.id_token.acr: an essential acr with a value or values cannot be met, this provider issues no acr');
    }
    // Protocol claims are never looked up, so their value and values are ignored, as acr_values is (C3).
    if (NOT_RESOLVED.has(name)) continue;
    if (isObject(spec) && 'values' in spec) throw bad(': the values member is not supported (request one value with value)');
    if (syntaxError) throw new errors.InvalidRequest(syntaxError.message);
    if (!tree && name.includes('[')) throw new errors.InvalidRequest(`claim ${name}: alternatives are only supported in svc.* claim names`);
    const alternatives = tree ? expandClaimTree(tree, budget) : [name];
    if (!alternatives.some((a) => registry.providerOf(a))) throw new errors.InvalidRequest(`claim ${name} is not provided by any claim module`);
    requests.push({
      requested: name,
      alternatives,
      essential: isObject(spec) && spec.essential === true,
      ...(isObject(spec) && 'value' in spec ? { valueMac: values.mac(spec.value) } : {}),
    });
  }
  return requests;
}

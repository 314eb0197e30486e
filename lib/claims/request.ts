import { errors } from 'oidc-provider';

import type { ClaimRegistry } from './modules.js';
import { PROTOCOL_CLAIMS } from './scopes.js';
import { ClaimSyntaxError, expandClaimName, hasAlternatives, isSvcClaimName } from './syntax.js';

/** One requested claim, as our resolver sees it. */
export interface ClaimRequest {
  /** The name as the relying party wrote it (may hold alternatives). */
  requested: string;
  /** Concrete names to try, in written order. */
  alternatives: string[];
  essential: boolean;
  /** Present when the relying party asked for a particular value. */
  value?: unknown;
  hasValue: boolean;
}

/** The members of one channel of the `claims` parameter (`userinfo` or `id_token`). */
export type ChannelClaims = Record<string, unknown>;

/** Marker members on the concrete expansions we add next to a bracketed name. */
const ALTERNATIVE_OF = 'svc_alternative_of';
const ESSENTIAL = 'svc_essential';
const VALUE = 'svc_value';

/** Claims oidc-provider itself asks for or that carry no user data; never resolved by modules. */
const NOT_RESOLVED = new Set([...PROTOCOL_CLAIMS, 'acr', 'amr', 'azp', 'sid']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates one channel of the `claims` parameter (C5) and returns its requests.
 * @throws `invalid_request` for `values`, aggregated/distributed claims, malformed svc.* names,
 * a non-boolean `essential`, and claims no module provides.
 */
export function validateChannel(channel: string, claims: ChannelClaims, registry: ClaimRegistry): ClaimRequest[] {
  const requests: ClaimRequest[] = [];
  for (const [name, spec] of Object.entries(claims)) {
    if (name === '_claim_names' || name === '_claim_sources') {
      throw new errors.InvalidRequest(`claims.${channel}: aggregated and distributed claims are not supported`);
    }
    if (spec !== null && !isObject(spec)) throw new errors.InvalidRequest(`claims.${channel}.${name} must be null or an object`);
    if (isObject(spec)) {
      if ('values' in spec) throw new errors.InvalidRequest(`claims.${channel}.${name}: the values member is not supported (request one value with value)`);
      if (spec.essential !== undefined && typeof spec.essential !== 'boolean') throw new errors.InvalidRequest(`claims.${channel}.${name}: essential must be true or false`);
    }
    if (NOT_RESOLVED.has(name)) continue;
    let alternatives = [name];
    if (isSvcClaimName(name)) {
      try {
        alternatives = expandClaimName(name);
      } catch (err) {
        if (err instanceof ClaimSyntaxError) throw new errors.InvalidRequest(err.message);
        throw err;
      }
    } else if (name.includes('[')) {
      throw new errors.InvalidRequest(`claim ${name}: alternatives are only supported in svc.* claim names`);
    }
    if (!alternatives.some((a) => registry.providerOf(a))) throw new errors.InvalidRequest(`claim ${name} is not provided by any claim module`);
    requests.push({
      requested: name,
      alternatives,
      essential: isObject(spec) && spec.essential === true,
      hasValue: isObject(spec) && 'value' in spec,
      value: isObject(spec) ? spec.value : undefined,
    });
  }
  return requests;
}

/**
 * Adds, after every bracketed svc.* name, its concrete alternatives as members marked with the name
 * they stand for. oidc-provider then lets the delivered concrete name through its claim filters and
 * asks consent for them; {@link channelRequests} reads the groups back.
 */
export function withExpansions(claims: ChannelClaims, requests: ClaimRequest[]): ChannelClaims {
  const out: ChannelClaims = { ...claims };
  for (const request of requests) {
    if (!hasAlternatives(request.requested)) continue;
    for (const concrete of request.alternatives) {
      if (concrete in claims) continue;
      out[concrete] = {
        [ALTERNATIVE_OF]: request.requested,
        ...(request.essential ? { [ESSENTIAL]: true } : {}),
        ...(request.hasValue ? { [VALUE]: request.value } : {}),
      };
    }
  }
  return out;
}

/**
 * Reads one channel of a stored (possibly grant-filtered) claims request back into requests, in
 * order; bracketed names are rebuilt from their marked expansions. Unknown shapes are skipped.
 */
export function channelRequests(claims: ChannelClaims | undefined): ClaimRequest[] {
  const groups = new Map<string, ClaimRequest>();
  for (const [name, spec] of Object.entries(claims ?? {})) {
    if (NOT_RESOLVED.has(name) || name.startsWith('_')) continue;
    const object = isObject(spec) ? spec : undefined;
    const group = typeof object?.[ALTERNATIVE_OF] === 'string' ? (object[ALTERNATIVE_OF] as string) : undefined;
    if (group !== undefined) {
      const existing = groups.get(group);
      if (existing) {
        if (!existing.alternatives.includes(name)) existing.alternatives.push(name);
      } else {
        groups.set(group, {
          requested: group,
          alternatives: [name],
          essential: object?.[ESSENTIAL] === true,
          hasValue: object !== undefined && VALUE in object,
          value: object?.[VALUE],
        });
      }
      continue;
    }
    if (hasAlternatives(name)) {
      let alternatives: string[];
      try {
        alternatives = expandClaimName(name);
      } catch {
        continue;
      }
      groups.set(name, { requested: name, alternatives, essential: object?.essential === true, hasValue: object !== undefined && 'value' in object, value: object?.value });
      continue;
    }
    groups.set(name, { requested: name, alternatives: [name], essential: object?.essential === true, hasValue: object !== undefined && 'value' in object, value: object?.value });
  }
  return [...groups.values()];
}

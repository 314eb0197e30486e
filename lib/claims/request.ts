import { createHash } from 'node:crypto';

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
  /**
   * When the relying party asked for a particular value: its SHA-256 over canonical JSON. The value
   * itself is never stored (C10); delivered values are compared by hash.
   */
  valueHash?: string;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
  }
  return value;
}

/** The hash a requested `value` is stored and compared as. */
export function hashClaimValue(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(canonical(value)) ?? 'undefined').digest('base64url');
}

/** The members of one channel of the `claims` parameter (`userinfo` or `id_token`). */
export type ChannelClaims = Record<string, unknown>;

/** Marker members on the concrete expansions we add next to a bracketed name. */
const ALTERNATIVE_OF = 'svc_alternative_of';
const ESSENTIAL = 'svc_essential';
const VALUE_HASH = 'svc_value_sha256';

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
      ...(isObject(spec) && 'value' in spec ? { valueHash: hashClaimValue(spec.value) } : {}),
    });
  }
  return requests;
}

/**
 * The form a channel's request is stored in: every requested `value` replaced by its hash (no claim
 * value is stored, C10), and after every bracketed svc.* name its concrete alternatives as members
 * marked with the name they stand for. oidc-provider then lets the delivered concrete name through
 * its claim filters and asks consent for it; {@link channelRequests} reads the groups back.
 */
export function storedForm(claims: ChannelClaims, requests: ClaimRequest[]): ChannelClaims {
  const out: ChannelClaims = {};
  for (const [name, spec] of Object.entries(claims)) {
    if (isObject(spec) && 'value' in spec) {
      const { value, ...rest } = spec;
      out[name] = { ...rest, [VALUE_HASH]: hashClaimValue(value) };
    } else out[name] = spec;
  }
  for (const request of requests) {
    if (!hasAlternatives(request.requested)) continue;
    for (const concrete of request.alternatives) {
      if (concrete in claims) continue;
      out[concrete] = {
        [ALTERNATIVE_OF]: request.requested,
        ...(request.essential ? { [ESSENTIAL]: true } : {}),
        ...(request.valueHash !== undefined ? { [VALUE_HASH]: request.valueHash } : {}),
      };
    }
  }
  return out;
}

function valueHashOf(object: Record<string, unknown> | undefined): { valueHash?: string } {
  if (!object) return {};
  if (typeof object[VALUE_HASH] === 'string') return { valueHash: object[VALUE_HASH] as string };
  if ('value' in object) return { valueHash: hashClaimValue(object.value) };
  return {};
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
        groups.set(group, { requested: group, alternatives: [name], essential: object?.[ESSENTIAL] === true, ...valueHashOf(object) });
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
      groups.set(name, { requested: name, alternatives, essential: object?.essential === true, ...valueHashOf(object) });
      continue;
    }
    groups.set(name, { requested: name, alternatives: [name], essential: object?.essential === true, ...valueHashOf(object) });
  }
  return [...groups.values()];
}

import { errors } from 'oidc-provider';

import { ClaimSyntaxError } from '../errors.js';
import { isObject } from './request.js';
import { countClaimNames, isSvcClaimName, parseClaimName, type ClaimNameTree } from './syntax.js';
import { countVerifiedClaims, VERIFIED_CLAIMS } from './verified-request.js';

/** The budget of one `claims` parameter (C5): concrete names over both channels, UTF-8 bytes of its value. */
export const CLAIMS_BUDGET = { maxNames: 256, maxBytes: 8192 } as const;

/** The two members of the `claims` parameter, in the order they are checked. */
export const CLAIMS_CHANNELS = ['userinfo', 'id_token'] as const;

/** One member of a channel, decoded once: svc.* names parsed (or their error kept), their expansions counted. */
export interface DecodedMember {
  name: string;
  /** The member's value as the relying party sent it. */
  spec: unknown;
  tree?: ClaimNameTree;
  syntaxError?: ClaimSyntaxError;
  count: number;
}

/** A `claims` parameter decoded once, per channel, members in written order. */
export type DecodedClaims = Partial<Record<(typeof CLAIMS_CHANNELS)[number], DecodedMember[]>>;

function decodeMember(name: string, spec: unknown): DecodedMember {
  if (name === VERIFIED_CLAIMS) return { name, spec, count: countVerifiedClaims(spec) };
  if (!isSvcClaimName(name)) return { name, spec, count: 1 };
  try {
    const tree = parseClaimName(name);
    return { name, spec, tree, count: countClaimNames(tree) };
  } catch (err) {
    if (err instanceof ClaimSyntaxError) return { name, spec, syntaxError: err, count: 1 };
    throw err;
  }
}

/**
 * Decodes a `claims` parameter (parsed from `text` by oidc-provider) within its budget, before
 * anything is expanded or stored: its size, then its concrete names, counted without materialising.
 * @throws `invalid_request` naming the limit the parameter exceeds.
 */
export function decodeClaimsParameter(text: string, claims: Readonly<Record<string, unknown>>): DecodedClaims {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > CLAIMS_BUDGET.maxBytes) {
    throw new errors.InvalidRequest(`the claims parameter is ${bytes} bytes; at most ${CLAIMS_BUDGET.maxBytes} are allowed`);
  }
  const decoded: DecodedClaims = {};
  let names = 0;
  for (const channel of CLAIMS_CHANNELS) {
    const members = claims[channel];
    if (members === undefined || members === null || typeof members !== 'object') continue;
    decoded[channel] = Object.entries(members).map(([name, spec]) => {
      const member = decodeMember(name, spec);
      names += member.count;
      return member;
    });
  }
  if (names > CLAIMS_BUDGET.maxNames) {
    throw new errors.InvalidRequest(`the claims parameter expands to ${names} claim names; at most ${CLAIMS_BUDGET.maxNames} are allowed`);
  }
  return decoded;
}

/**
 * Whether a `claims` parameter (its text, or its object in a request object) is a JSON object naming neither channel,
 * within the byte budget: it requests nothing. OpenID Connect Core 5.5 makes both members optional and has members not
 * understood ignored, where oidc-provider refuses such a parameter; one over the budget is left to be refused.
 */
export function requestsNoClaims(claims: unknown): boolean {
  const text = typeof claims === 'string' ? claims : isObject(claims) ? JSON.stringify(claims) : undefined;
  if (text === undefined || Buffer.byteLength(text, 'utf8') > CLAIMS_BUDGET.maxBytes) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  return isObject(parsed) && CLAIMS_CHANNELS.every((channel) => parsed[channel] === undefined);
}

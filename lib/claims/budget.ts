import { errors } from 'oidc-provider';

import { ClaimSyntaxError } from '../errors.js';
import { countClaimNames, isSvcClaimName, parseClaimName, type ClaimNameTree } from './syntax.js';
import { countVerifiedClaims, VERIFIED_CLAIMS } from './verified-request.js';

/**
 * The budget of one `claims` parameter (C5): what a relying party may make the provider parse,
 * expand, resolve and store for one authorization request.
 */
export const CLAIMS_BUDGET = {
  /** Concrete claim names after expansion, summed over every name of `id_token` and `userinfo`. */
  maxNames: 256,
  /** Bytes of the (URL-decoded) `claims` parameter value, UTF-8. */
  maxBytes: 8192,
} as const;

/** The two members of the `claims` parameter, in the order they are checked. */
export const CLAIMS_CHANNELS = ['userinfo', 'id_token'] as const;

/** One member of a channel, decoded once: svc.* names parsed, their expansions counted. */
export interface DecodedMember {
  name: string;
  /** The member's value as the relying party sent it (`null`, an object, or anything else). */
  spec: unknown;
  /** The parse of an svc.* name. */
  tree?: ClaimNameTree;
  /** Why an svc.* name is malformed; reported when the member is validated, in member order. */
  syntaxError?: ClaimSyntaxError;
  /** Concrete names the member stands for (1 for a plain or malformed name; `verified_claims`: its claims and evidence). */
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
 * Decodes a `claims` parameter (already parsed from `text` by oidc-provider) within its budget,
 * before anything is expanded or stored: first its size, then the concrete names its members stand
 * for, counted from the parse without materialising them. Each svc.* name is parsed once here
 * (at most 1024 characters each, linear work), and malformed names are kept for validation.
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

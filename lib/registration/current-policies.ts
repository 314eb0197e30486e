import type { Adapter } from 'oidc-provider';

import { POLICY_NAMES } from '../../policies/index.js';

/**
 * What makes registration and update run the registration policies of today (on the adapters of
 * initial and registration access tokens), whenever their token was issued:
 * oidc-provider runs the policies named in the initial or registration access token, so a token
 * stored before a policy existed (an invitation mailed yesterday, the registration access token of a
 * client registered last year) would skip it, e.g. `svc/subject-type`, which checks
 * `sector_identifier_uri` and keeps the subject type fixed; a token made in code without policies
 * would skip them all. A token's `policies` are read as {@link POLICY_NAMES}; the store keeps what
 * it holds.
 */
export function currentPolicies(inner: Adapter): Partial<Adapter> {
  return {
    find: async (id) => {
      const payload = await inner.find(id);
      return payload ? { ...payload, policies: [...POLICY_NAMES] } : payload;
    },
  };
}

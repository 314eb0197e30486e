import type { Adapter } from 'oidc-provider';

import { POLICY_NAMES } from '../../policies/index.js';

/**
 * On the adapters of initial and registration access tokens: a token's `policies` read as today's
 * {@link POLICY_NAMES}. oidc-provider runs the policies a token names, so a token stored before a
 * policy existed, or made in code without policies, would skip them.
 */
export function currentPolicies(inner: Adapter): Partial<Adapter> {
  return {
    find: async (id) => {
      const payload = await inner.find(id);
      return payload ? { ...payload, policies: [...POLICY_NAMES] } : payload;
    },
  };
}

import type { Adapter } from 'oidc-provider';

import { POLICY_NAMES } from '../../policies/index.js';

/**
 * A token's `policies` read as today's {@link POLICY_NAMES}: oidc-provider runs those a token names,
 * so one stored before a policy existed, or made without policies, would skip them.
 */
export function currentPolicies(inner: Adapter): Partial<Adapter> {
  return {
    find: async (id) => {
      const payload = await inner.find(id);
      return payload ? { ...payload, policies: [...POLICY_NAMES] } : payload;
    },
  };
}

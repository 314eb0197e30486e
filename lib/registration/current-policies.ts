import type { Adapter } from 'oidc-provider';

import { decorateAdapter } from '../../adapters/store.js';
import { POLICY_NAMES } from '../../policies/index.js';
import { MODEL_NAMES } from '../seams.js';

const TOKEN_MODELS: ReadonlySet<string> = new Set([MODEL_NAMES.initialAccessToken, MODEL_NAMES.registrationAccessToken]);

/**
 * Registration and update run the registration policies of today, whenever their token was issued:
 * oidc-provider runs the policies named in the initial or registration access token, so a token
 * stored before a policy existed (an invitation mailed yesterday, the registration access token of a
 * client registered last year) would skip it, e.g. `svc/subject-type`, which checks
 * `sector_identifier_uri` and keeps the subject type fixed; a token made in code without policies
 * would skip them all. A token's `policies` are read as {@link POLICY_NAMES}; the store keeps what
 * it holds.
 */
export function withCurrentPolicies(adapter: (model: string) => Adapter): (model: string) => Adapter {
  return (model) => {
    const inner = adapter(model);
    if (!TOKEN_MODELS.has(model)) return inner;
    return decorateAdapter(inner, {
      find: async (id) => {
        const payload = await inner.find(id);
        return payload ? { ...payload, policies: [...POLICY_NAMES] } : payload;
      },
    });
  };
}

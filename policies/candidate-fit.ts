import type { JWK } from 'jose';

import { fitReason, isCandidateFor } from './key-fit.js';

/**
 * Rule 7 of key vetting (C6) for one key: why the provider may pick `key` for one of the
 * `requested` encryption algorithms (its type, `use`, `key_ops` and `alg` allow that,
 * {@link isCandidateFor}) and then fail to encrypt to it ({@link fitReason}), or `undefined`.
 * Registration refuses such a set; a later `jwks_uri` fetch leaves such a key out.
 *
 * @param requested - `[metadata field, alg]` pairs, e.g. `['id_token_encrypted_response_alg', 'ECDH-ES']`
 */
export function candidateDefect(key: JWK, requested: readonly (readonly [field: string, alg: string])[]): string | undefined {
  for (const [field, alg] of requested) {
    if (!isCandidateFor(key, alg)) continue;
    const why = fitReason(key, alg);
    if (why !== undefined) return `the provider may pick it for ${field} ${alg} (its use, key_ops and alg allow that), and it would fail: ${why}`;
  }
  return undefined;
}

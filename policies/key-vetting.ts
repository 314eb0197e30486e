import type { JWK } from 'jose';

import { clientKeys, keyLabel, requestedEncryption } from './client-keys.js';
import { candidateDefect } from './candidate-fit.js';
import { isEncryptionKey, isSignatureKey, unfitReason } from './key-fit.js';
import { reject, type PolicyDependencies, type RegistrationPolicy } from './types.js';

/**
 * Policy `svc/key-vetting` (C6): when the client asks for encrypted ID tokens, UserInfo or request
 * objects, it must register `jwks` or `jwks_uri` (fetched now); keys with neither `use` nor
 * `key_ops` are dropped from a stored `jwks`; and every requested algorithm needs at least one
 * encryption key that fits it, and every key the provider may pick for a requested algorithm
 * (`isCandidateFor`) must fit it too (C6 item 7). Every key has already been judged as a key when the set was loaded
 * (`clientKeys` → `keyDefect`), so a weak key fails the request and is never stored beside a good one.
 */
export function keyVettingPolicy(deps: PolicyDependencies): RegistrationPolicy {
  return async (_ctx, properties) => {
    const requested = requestedEncryption(properties);
    const loaded = await clientKeys(properties, deps);
    if (requested.length === 0) return;
    if (!loaded) {
      reject('jwks', `${requested.map(([f]) => f).join(' and ')} need${requested.length === 1 ? 's' : ''} the client's public keys: register jwks or jwks_uri`);
    }
    const classified = loaded.keys.filter((k) => isEncryptionKey(k) || isSignatureKey(k));
    if (loaded.field === 'jwks') properties.jwks = { keys: classified };
    for (const [field, alg] of requested) {
      if (classified.some((key) => unfitReason(key, alg) === undefined)) continue;
      const reasons = loaded.keys.map((key, i) => {
        const why = isEncryptionKey(key) || isSignatureKey(key) ? unfitReason(key, alg) : 'has neither use nor key_ops, so it is dropped';
        return `${keyLabel(key, i)}: ${why}`;
      });
      reject(loaded.field, `no key usable for ${field} ${alg} (keys need use=enc or key_ops containing encrypt)${reasons.length ? `; ${reasons.join('; ')}` : '; the set is empty'}`);
    }
    // Rule 7: a key the provider may pick must work, or the token endpoint fails on it.
    const held = (key: JWK): boolean => loaded.field === 'jwks_uri' || isEncryptionKey(key) || isSignatureKey(key);
    for (const pair of requested) {
      loaded.keys.forEach((key, i) => {
        const why = held(key) ? candidateDefect(key, [pair]) : undefined;
        if (why !== undefined) reject(loaded.field, `${keyLabel(key, i)}: ${why}`);
      });
    }
  };
}

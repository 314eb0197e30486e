import { clientKeys, requestedEncryption } from './client-keys.js';
import { reject, type PolicyDependencies, type RegistrationPolicy } from './types.js';

/**
 * Policy `svc/key-vetting` (C6): an inline `jwks` is stored as the key judgement leaves it (RFC 7591
 * 3.2.1 lets the server substitute metadata). A client asking for encryption must register keys;
 * every requested algorithm needs a kept key that fits it, and every key the provider may pick for
 * one must fit it too (C6 item 7).
 */
export function keyVettingPolicy(deps: PolicyDependencies): RegistrationPolicy {
  return async (_ctx, properties) => {
    const requested = requestedEncryption(properties);
    const loaded = await clientKeys(properties, deps);
    if (loaded?.field === 'jwks') properties.jwks = { keys: loaded.keys };
    if (requested.length === 0) return;
    if (!loaded) {
      reject('jwks', `${requested.map(([f]) => f).join(' and ')} need${requested.length === 1 ? 's' : ''} the client's public keys: register jwks or jwks_uri`);
    }
    const unserved = loaded.judgement.unserved[0];
    if (unserved) reject(loaded.field, unserved.message);
    const unfit = loaded.judgement.refused.find((r) => r.rule === 'candidate');
    if (unfit) reject(loaded.field, unfit.message);
  };
}

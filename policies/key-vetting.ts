import { assertKeysServe, clientKeys } from './client-keys.js';
import type { PolicyDependencies, RegistrationPolicy } from './types.js';

/**
 * Policy `svc/key-vetting` (C6): an inline `jwks` is stored as the key judgement leaves it (RFC 7591
 * 3.2.1 lets the server substitute metadata). A client asking for encryption must register keys;
 * every requested algorithm needs a kept key that fits it, and every key the provider may pick for
 * one must fit it too (C6 item 7).
 */
export function keyVettingPolicy(deps: PolicyDependencies): RegistrationPolicy {
  return async (_ctx, properties) => {
    const loaded = await clientKeys(properties, deps);
    if (loaded?.field === 'jwks') properties.jwks = { keys: loaded.keys };
    assertKeysServe(properties, loaded);
  };
}

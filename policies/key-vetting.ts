import { clientKeys, requestedEncryption } from './client-keys.js';
import { reject, type PolicyDependencies, type RegistrationPolicy } from './types.js';

/**
 * Policy `svc/key-vetting` (C6): the client's keys as the one key judgement leaves them
 * (`clientKeys` → `judgeClientKeySet`) are what is stored: an inline `jwks` is replaced by its
 * kept keys, labels normalised (RFC 7591 section 3.2.1; the response shows what was stored), keys
 * with neither `use` nor `key_ops` left out when encryption is asked for. When the client asks for
 * encrypted ID tokens, UserInfo or request objects, it must register `jwks` or `jwks_uri` (fetched
 * now); every requested algorithm needs a kept encryption key that fits it, and every key the
 * provider may pick for a requested algorithm must fit it too (C6 item 7). A key that breaks a key
 * rule has already failed the request when the set was loaded, so a weak key is never stored beside
 * a good one.
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

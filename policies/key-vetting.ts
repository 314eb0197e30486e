import type { JWK } from 'jose';

import { clientKeys, keyLabel, requestedEncryption } from './client-keys.js';
import { reject, type PolicyDependencies, type RegistrationPolicy } from './types.js';

const EC_CURVES = ['P-256', 'P-384', 'P-521'];

/** Encryption key: `use=enc` or `key_ops` containing `encrypt`. */
export const isEncryptionKey = (key: JWK): boolean => key.use === 'enc' || (Array.isArray(key.key_ops) && key.key_ops.includes('encrypt'));
/** Signature key: `use=sig` or `key_ops` containing `verify`. */
export const isSignatureKey = (key: JWK): boolean => key.use === 'sig' || (Array.isArray(key.key_ops) && key.key_ops.includes('verify'));

function rsaBits(key: JWK): number {
  return typeof key.n === 'string' ? Buffer.from(key.n, 'base64url').length * 8 : 0;
}

/** Why `key` cannot serve `alg`, or `undefined` when it can. */
export function unfitReason(key: JWK, alg: string): string | undefined {
  if (!isEncryptionKey(key)) return 'not an encryption key (needs use=enc or key_ops containing encrypt)';
  if (key.alg !== undefined && key.alg !== alg) return `its alg is ${String(key.alg)}`;
  if (alg.startsWith('RSA-OAEP')) {
    if (key.kty !== 'RSA') return `${String(key.kty)} key, but ${alg} needs RSA`;
    const bits = rsaBits(key);
    if (bits < 2048) return `RSA modulus of ${bits} bits, at least 2048 needed`;
    return undefined;
  }
  if (alg.startsWith('ECDH-ES')) {
    if (key.kty === 'EC' && typeof key.crv === 'string' && EC_CURVES.includes(key.crv)) return undefined;
    if (key.kty === 'OKP' && key.crv === 'X25519') return undefined;
    return `${String(key.kty)}${key.crv ? ` ${String(key.crv)}` : ''} key, but ${alg} needs EC P-256/384/521 or X25519`;
  }
  return `${alg} is not supported`;
}

/**
 * Policy `svc/key-vetting` (C6): when the client asks for encrypted ID tokens, UserInfo or request
 * objects, it must register `jwks` or `jwks_uri` (fetched now); keys with neither `use` nor
 * `key_ops` are dropped from a stored `jwks`; and every requested algorithm needs at least one
 * encryption key that fits it.
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
    if (loaded.field === 'jwks') properties.jwks = { keys: classified } as typeof properties.jwks;
    for (const [field, alg] of requested) {
      if (classified.some((key) => unfitReason(key, alg) === undefined)) continue;
      const reasons = loaded.keys.map((key, i) => {
        const why = isEncryptionKey(key) || isSignatureKey(key) ? unfitReason(key, alg) : 'has neither use nor key_ops, so it is dropped';
        return `${keyLabel(key, i)}: ${why}`;
      });
      reject(loaded.field, `no key usable for ${field} ${alg} (keys need use=enc or key_ops containing encrypt)${reasons.length ? `; ${reasons.join('; ')}` : '; the set is empty'}`);
    }
  };
}

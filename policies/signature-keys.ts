import type { ClientMetadata } from 'oidc-provider';

import { SIGNING_ALG_VALUES } from './supported-algorithms.js';
import { clientKeys } from './client-keys.js';
import { keyLabel, unfitSignatureReason } from './jwk-rules.js';
import { reject, type PolicyDependencies, type RegistrationPolicy } from './types.js';

/** What the client will sign for the provider to verify: the field asking for it and the algorithms. */
interface SignatureNeed {
  /** How the description names it, e.g. `request_object_signing_alg PS256`. */
  what: string;
  field: string;
  algs: readonly string[];
}

/** The signatures the provider will verify with the client's keys, by what the client registered. */
function requestedSignatures(properties: ClientMetadata): SignatureNeed[] {
  const needs: SignatureNeed[] = [];
  const requestAlg: unknown = properties.request_object_signing_alg;
  if (typeof requestAlg === 'string') needs.push({ what: `request_object_signing_alg ${requestAlg}`, field: 'request_object_signing_alg', algs: [requestAlg] });
  if (properties.token_endpoint_auth_method === 'private_key_jwt') {
    const authAlg: unknown = properties.token_endpoint_auth_signing_alg;
    needs.push(
      typeof authAlg === 'string'
        ? { what: `token_endpoint_auth_method private_key_jwt with token_endpoint_auth_signing_alg ${authAlg}`, field: 'token_endpoint_auth_method', algs: [authAlg] }
        : { what: `token_endpoint_auth_method private_key_jwt (${SIGNING_ALG_VALUES.join(', ')})`, field: 'token_endpoint_auth_method', algs: SIGNING_ALG_VALUES },
    );
  }
  return needs;
}

/**
 * Policy `svc/signature-keys` (C6, as for encryption keys): a client that registers
 * `request_object_signing_alg`, or authenticates with `private_key_jwt`, must register `jwks` or
 * `jwks_uri` (fetched now) holding a signature key the provider can verify with: `use=sig` or
 * `key_ops` containing `verify`, fitting the algorithm (RS256/PS256: RSA of at least 2048 bits;
 * ES256: EC P-256; its own `alg`, if any, equal). Every key was already judged as a key when the
 * set was loaded (`clientKeys` → `keyDefect`), so a weak key fails the request before this runs.
 * Violations → `invalid_client_metadata` naming the field and the rule.
 */
export function signatureKeysPolicy(deps: PolicyDependencies): RegistrationPolicy {
  return async (_ctx, properties) => {
    const needs = requestedSignatures(properties);
    if (needs.length === 0) return;
    const loaded = await clientKeys(properties, deps);
    if (!loaded) {
      reject('jwks', `${needs.map((n) => n.what).join(' and ')} need${needs.length === 1 ? 's' : ''} the client's public signature keys: register jwks or jwks_uri`);
    }
    for (const need of needs) {
      if (loaded.keys.some((key) => unfitSignatureReason(key, need.algs) === undefined)) continue;
      const reasons = loaded.keys.map((key, i) => `${keyLabel(key, loaded.judgement.positions[i] ?? i)}: ${unfitSignatureReason(key, need.algs) ?? 'fits'}`);
      reject(
        loaded.field,
        `no key usable for ${need.what} (keys need use=sig or key_ops containing verify)${reasons.length ? `; ${reasons.join('; ')}` : '; the set is empty'}`,
      );
    }
  };
}

import type { ClientMetadata } from 'oidc-provider';

import { SIGNING_ALG_VALUES } from './supported-algorithms.js';
import { clientKeys } from './client-keys.js';
import { keyLabel, unfitSignatureReason } from './jwk-rules.js';
import { reject, type PolicyDependencies, type RegistrationPolicy } from './types.js';

/** What the client will sign for the provider to verify, as descriptions name it (`request_object_signing_alg PS256`). */
interface SignatureNeed {
  what: string;
  algs: readonly string[];
}

/** The signatures the provider will verify with the client's keys, by what the client registered. */
function requestedSignatures(properties: ClientMetadata): SignatureNeed[] {
  const needs: SignatureNeed[] = [];
  const requestAlg: unknown = properties.request_object_signing_alg;
  if (typeof requestAlg === 'string') needs.push({ what: `request_object_signing_alg ${requestAlg}`, algs: [requestAlg] });
  if (properties.token_endpoint_auth_method === 'private_key_jwt') {
    const authAlg: unknown = properties.token_endpoint_auth_signing_alg;
    needs.push(
      typeof authAlg === 'string'
        ? { what: `token_endpoint_auth_method private_key_jwt with token_endpoint_auth_signing_alg ${authAlg}`, algs: [authAlg] }
        : { what: `token_endpoint_auth_method private_key_jwt (${SIGNING_ALG_VALUES.join(', ')})`, algs: SIGNING_ALG_VALUES },
    );
  }
  return needs;
}

/**
 * Policy `svc/signature-keys` (C6): a client that registers `request_object_signing_alg`, or
 * authenticates with `private_key_jwt`, must register keys holding a signature key the provider can
 * verify that algorithm with ({@link unfitSignatureReason}).
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

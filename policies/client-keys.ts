import type { JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { ENCRYPTION_FIELDS } from './algorithms.js';
import { budgetedFetch } from './fetch-budget.js';
import { judgeClientKeySet, type KeySetJudgement } from './client-key-set.js';
import { fetchJson, reject, type PolicyDependencies } from './types.js';

/** The client's keys from the metadata `field`, as the provider will hold them, and their whole judgement. */
interface ClientKeys {
  field: 'jwks' | 'jwks_uri';
  keys: JWK[];
  judgement: KeySetJudgement;
}

/** The key-management algorithms the client asks for, by metadata field. */
export function requestedEncryption(properties: ClientMetadata): (readonly [field: string, alg: string])[] {
  return ENCRYPTION_FIELDS.flatMap(([field]) => {
    const alg: unknown = properties[field];
    return typeof alg === 'string' ? [[field, alg] as const] : [];
  });
}

/** Judges the set ({@link judgeClientKeySet}); a set defect or any key that breaks a key rule fails the request. */
function judged(document: unknown, field: ClientKeys['field'], properties: ClientMetadata): ClientKeys {
  const judgement = judgeClientKeySet(document, requestedEncryption(properties));
  if (judgement.setDefect !== undefined) reject(field, judgement.setDefect);
  const broken = judgement.refused.find((r) => r.rule === 'key');
  if (broken) reject(field, broken.message);
  return { field, keys: judgement.keys, judgement };
}

const loaded = new WeakMap<ClientMetadata, Promise<ClientKeys | undefined>>();

async function load(properties: ClientMetadata, deps: PolicyDependencies): Promise<ClientKeys | undefined> {
  const { jwks, jwks_uri: jwksUri } = properties;
  if (jwks !== undefined && jwksUri !== undefined) reject('jwks', 'jwks and jwks_uri must not both be given');
  if (jwks !== undefined) return judged(jwks, 'jwks', properties);
  if (jwksUri === undefined) return undefined;
  if (typeof jwksUri !== 'string') reject('jwks_uri', 'must be a URL string');
  const parsed = await fetchJson(budgetedFetch(properties, deps), jwksUri, 'application/jwk-set+json, application/json', 'jwks_uri');
  return judged(parsed, 'jwks_uri', properties);
}

/** The client's keys for this registration request, loaded once for all its policies; `undefined` without keys. */
export function clientKeys(properties: ClientMetadata, deps: PolicyDependencies): Promise<ClientKeys | undefined> {
  let pending = loaded.get(properties);
  if (!pending) {
    pending = load(properties, deps);
    loaded.set(properties, pending);
  }
  return pending;
}

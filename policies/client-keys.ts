import type { JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { ENCRYPTION_FIELDS } from './algorithms.js';
import { budgetedFetch } from './fetch-budget.js';
import { judgeClientKeySet, type KeySetJudgement } from './client-key-set.js';
import { fetchJson, reject, type PolicyDependencies } from './types.js';

/** The client's keys as registered (inline `jwks`) or fetched (`jwks_uri`), as the provider will hold them. */
export interface ClientKeys {
  /** The metadata field the keys came from, for error messages. */
  field: 'jwks' | 'jwks_uri';
  /** The kept keys: judged, labels normalised, unlabelled ones left out when encryption is asked for. */
  keys: JWK[];
  /** The whole judgement ({@link judgeClientKeySet}), for the policies that act on the rest of it. */
  judgement: KeySetJudgement;
}

/** The key-management algorithms the client asks for, by metadata field. */
export function requestedEncryption(properties: ClientMetadata): [field: string, alg: string][] {
  const out: [string, string][] = [];
  for (const [field] of ENCRYPTION_FIELDS) {
    const value: unknown = properties[field];
    if (typeof value === 'string') out.push([field, value]);
  }
  return out;
}

/**
 * Judges the set by the one key judgement ({@link judgeClientKeySet}) and fails the request on
 * anything beyond its shape and size or on any key that breaks a key rule (one bad key fails the
 * whole request, signature keys included). What a kept key must do for a requested algorithm is
 * the key-vetting policy's.
 */
function judged(document: unknown, field: 'jwks' | 'jwks_uri', properties: ClientMetadata): ClientKeys {
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

/**
 * The client's keys for this registration request, loaded once and shared by the policies of the
 * request (a `jwks_uri` is fetched once). `undefined` when the client registered no keys.
 */
export function clientKeys(properties: ClientMetadata, deps: PolicyDependencies): Promise<ClientKeys | undefined> {
  let pending = loaded.get(properties);
  if (!pending) {
    pending = load(properties, deps);
    loaded.set(properties, pending);
  }
  return pending;
}

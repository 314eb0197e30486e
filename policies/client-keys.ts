import { hash } from 'node:crypto';

import type { JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { ENCRYPTION_FIELDS } from './algorithms.js';
import { budgetedFetch } from './fetch-budget.js';
import { judgeClientKeySet, type KeySetJudgement } from './client-key-set.js';
import { fetchJson, reject, type PolicyDependencies } from './types.js';
import { normaliseKeyLabels, type RequestedEncryption } from './jwk-rules.js';

/** The client's keys from the metadata `field`, as the provider will hold them, and their whole judgement. */
interface ClientKeys {
  field: 'jwks' | 'jwks_uri';
  keys: JWK[];
  judgement: KeySetJudgement;
}

/** The key-management algorithms the client asks for, by metadata field. */
export function requestedEncryption(properties: ClientMetadata): RequestedEncryption {
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

/**
 * C6 items 1, 3 and 7 on keys already judged: a client asking for encryption has keys, every requested algorithm a
 * kept key that fits it, and every key the provider may pick for one fits it.
 * @throws `invalid_client_metadata` naming the field and the rule.
 */
export function assertKeysServe(properties: ClientMetadata, loaded: ClientKeys | undefined): void {
  const requested = requestedEncryption(properties);
  if (requested.length === 0) return;
  if (!loaded) {
    reject('jwks', `${requested.map(([f]) => f).join(' and ')} need${requested.length === 1 ? 's' : ''} the client's public keys: register jwks or jwks_uri`);
  }
  const unserved = loaded.judgement.unserved[0];
  if (unserved) reject(loaded.field, unserved.message);
  const unfit = loaded.judgement.refused.find((r) => r.rule === 'candidate');
  if (unfit) reject(loaded.field, unfit.message);
}

/**
 * A client no registration request vetted (a statically provisioned one) with its inline `jwks` judged by the rules
 * registration applies (C6: the provider never encrypts to or verifies with a key that has not passed them), and
 * stored as registration stores it: labels normalised, unlabelled keys left out when it asks for encryption. A
 * `jwks_uri` is judged when the provider fetches it.
 * @throws `invalid_client_metadata` naming the field and the rule, as registration would refuse the same metadata.
 */
export function withJudgedInlineKeys(client: ClientMetadata): ClientMetadata {
  const inline = client.jwks === undefined ? undefined : judged(client.jwks, 'jwks', client);
  if (client.jwks_uri === undefined) assertKeysServe(client, inline);
  return inline ? { ...client, jwks: { keys: inline.keys } } : client;
}

/** Most stored sets whose judgement a process remembers; the oldest is forgotten first. */
const MAX_REMEMBERED_SETS = 1000;
/** Positions of the kept keys, by a hash of the set and the algorithms it was judged for. */
const keptPositions = new Map<string, number[]>();

/**
 * The inline `jwks` of a client read from the store, as the key judgement keeps it ({@link judgeClientKeySet}): refused keys
 * left out, as at every fetch of a `jwks_uri`. A record stored under fewer rules (a version that took e = 1) never has a
 * key used that today's rules refuse, and one stored with labels as sent is used as registration stores it now. Judged
 * once per set and process: oidc-provider builds a client again whenever its cache of 100 has dropped it.
 */
export function keptInlineKeys(client: ClientMetadata): { keys: JWK[] } {
  const requested = requestedEncryption(client);
  const id = hash('sha256', JSON.stringify([client.jwks, requested]), 'base64url');
  let positions = keptPositions.get(id);
  if (positions === undefined) {
    positions = judgeClientKeySet(client.jwks, requested).positions;
    if (keptPositions.size >= MAX_REMEMBERED_SETS) keptPositions.delete(keptPositions.keys().next().value as string);
    keptPositions.set(id, positions);
  }
  const all = (client.jwks as { keys?: JWK[] } | null)?.keys ?? [];
  return { keys: positions.map((i) => normaliseKeyLabels(all[i] as JWK)) };
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

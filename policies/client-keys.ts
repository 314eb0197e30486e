import type { JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { ENCRYPTION_FIELDS } from './algorithms.js';
import { budgetedFetch } from './fetch-budget.js';
import { keyDefect, PRIVATE_MEMBERS } from './key-judgement.js';
import { keySetDefect } from './key-set.js';
import { reject, type PolicyDependencies } from './types.js';

/** The client's keys as registered (inline `jwks`) or fetched (`jwks_uri`). */
export interface ClientKeys {
  /** The metadata field the keys came from, for error messages. */
  field: 'jwks' | 'jwks_uri';
  keys: JWK[];
}

/** "key #2 ("enc-1")": how errors name a key. */
export function keyLabel(key: JWK, index: number): string {
  return `key #${index + 1}${typeof key.kid === 'string' ? ` ("${key.kid}")` : ''}`;
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

export { MAX_KEYS } from './key-set.js';

/** A key with neither `use` nor `key_ops`: dropped from an inline `jwks` when encryption is asked for. */
export const isUnlabelled = (key: JWK): boolean => key.use === undefined && key.key_ops === undefined;

/**
 * Checks the set's shape and size ({@link keySetDefect}: at most 32 keys, RSA keys within their
 * judging budget), then judges every key the provider will hold as the key it is
 * ({@link keyDefect}): one bad key fails the whole request, signature keys included. Only keys of
 * an inline `jwks` that the key-vetting policy drops (no `use`, no `key_ops`, encryption asked for)
 * are not judged; a `jwks_uri` document is served to the provider as it is, so all its keys are.
 */
function validateShape(document: unknown, field: 'jwks' | 'jwks_uri', dropsUnlabelled: boolean): JWK[] {
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!document || typeof document !== 'object' || !Array.isArray(keys)) reject(field, 'must be a JWK Set: an object with a "keys" array');
  const setDefect = keySetDefect(keys);
  if (setDefect !== undefined) reject(field, setDefect);
  keys.forEach((key: unknown, i) => {
    if (!key || typeof key !== 'object' || typeof (key as JWK).kty !== 'string') reject(field, `key #${i + 1} is not a JWK (needs a "kty")`);
    const jwk = key as JWK;
    if (jwk.kty === 'oct') reject(field, `${keyLabel(jwk, i)} is a symmetric key; only public RSA, EC and OKP keys are accepted`);
    if (PRIVATE_MEMBERS.some((m) => m in jwk)) reject(field, `${keyLabel(jwk, i)} contains private key material; register public keys only`);
  });
  (keys as JWK[]).forEach((key, i) => {
    if (dropsUnlabelled && isUnlabelled(key)) return;
    const defect = keyDefect(key);
    if (defect !== undefined) reject(field, `${keyLabel(key, i)}: ${defect}`);
  });
  return keys as JWK[];
}

const loaded = new WeakMap<ClientMetadata, Promise<ClientKeys | undefined>>();

async function load(properties: ClientMetadata, deps: PolicyDependencies): Promise<ClientKeys | undefined> {
  const { jwks, jwks_uri: jwksUri } = properties;
  if (jwks !== undefined && jwksUri !== undefined) reject('jwks', 'jwks and jwks_uri must not both be given');
  if (jwks !== undefined) return { field: 'jwks', keys: validateShape(jwks, 'jwks', requestedEncryption(properties).length > 0) };
  if (jwksUri === undefined) return undefined;
  if (typeof jwksUri !== 'string') reject('jwks_uri', 'must be a URL string');
  let text: string;
  try {
    const doc = await budgetedFetch(properties, deps)(jwksUri, 'application/jwk-set+json, application/json');
    if (doc.status !== 200) reject('jwks_uri', `${jwksUri}: answered HTTP ${doc.status}`);
    text = doc.body.toString('utf8');
  } catch (err) {
    if ((err as { name?: string }).name === 'OutboundFetchError') reject('jwks_uri', (err as Error).message);
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    reject('jwks_uri', `${jwksUri}: the response is not JSON`);
  }
  return { field: 'jwks_uri', keys: validateShape(parsed, 'jwks_uri', false) };
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

import { compactDecrypt, importJWK, type JWK } from 'jose';
import { errors } from 'oidc-provider';

import { ENCRYPTION_ALG_VALUES, ENCRYPTION_ENC_VALUES } from '../../policies/supported-algorithms.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../web/json-depth.js';

const text = (segment: string | undefined): string => Buffer.from(segment ?? '', 'base64url').toString('utf8');

/** The parameters that carry a JWT oidc-provider clones or re-serialises whole, before verifying it, each with the error refusing it. */
const JWT_PARAMETERS: Readonly<Record<string, (description: string) => Error>> = {
  request: (description) => new errors.InvalidRequestObject(description),
  client_assertion: (description) => new errors.InvalidClientAuth(description),
};

/** The protected header of a compact JWE or JWS as JSON text, and parsed when it is a shallow JSON object. */
export function headerOf(jwt: string): { json: string; header?: Record<string, unknown> } {
  const json = text(jwt.split('.')[0]);
  try {
    const parsed: unknown = nestsDeeperThan(json) ? undefined : JSON.parse(json);
    return parsed && typeof parsed === 'object' ? { json, header: parsed as Record<string, unknown> } : { json };
  } catch {
    return { json };
  }
}

/** The plaintext of a compact JWE as oidc-provider would decrypt it (an accepted alg and enc, one of `keys`), or undefined. */
export async function decryptedWithKeys(jwe: string, keys: readonly JWK[]): Promise<string | undefined> {
  const { header } = headerOf(jwe);
  if (!header) return undefined;
  const { alg, enc, kid } = header;
  if (!(ENCRYPTION_ALG_VALUES as readonly unknown[]).includes(alg) || !(ENCRYPTION_ENC_VALUES as readonly unknown[]).includes(enc)) return undefined;
  const kty = String(alg).startsWith('ECDH') ? 'EC' : 'RSA';
  const fitting = keys.filter((k) => k.kty === kty && k.use !== 'sig' && (k.alg === undefined || k.alg === alg));
  // Its own kid first, then every other key: whichever oidc-provider decrypts with, this was judged.
  for (const key of [...fitting.filter((k) => k.kid === kid), ...fitting.filter((k) => k.kid !== kid)]) {
    try {
      const { plaintext } = await compactDecrypt(jwe, await importJWK(key, String(alg)), { keyManagementAlgorithms: [String(alg)] });
      return new TextDecoder().decode(plaintext);
    } catch {
      // Not this key: oidc-provider refuses what none decrypts.
    }
  }
  return undefined;
}

/** The JSON texts of a compact JWT: a JWS's header and payload; a JWE's header and, decrypted with `keys`, the JWS or JSON it holds. */
async function jsonTexts(jwt: string, keys: readonly JWK[]): Promise<string[]> {
  const parts = jwt.split('.');
  if (parts.length === 3) return [text(parts[0]), text(parts[1])];
  if (parts.length !== 5) return [];
  const { json } = headerOf(jwt);
  const plaintext = await decryptedWithKeys(jwt, keys);
  if (plaintext === undefined) return [json];
  const inner = plaintext.split('.');
  return [json, ...(inner.length === 3 ? [text(inner[0]), text(inner[1])] : [plaintext])];
}

/**
 * Refuses a `request` (`invalid_request_object`) or `client_assertion` (`invalid_client`) whose JSON nests deeper
 * than {@link MAX_JSON_DEPTH}, an encrypted request object judged by what it holds (decrypted with the provider's
 * `keys`), before oidc-provider reads either.
 */
export async function assertShallowJwts(fields: Readonly<Record<string, unknown>>, keys: readonly JWK[]): Promise<void> {
  for (const [name, refusal] of Object.entries(JWT_PARAMETERS)) {
    const value = fields[name];
    // Given more than once (an array), it is refused by oidc-provider as a duplicate before any copy is read: none
    // is decrypted here, so copies cost nothing.
    if (typeof value !== 'string') continue;
    for (const json of await jsonTexts(value, keys)) {
      if (nestsDeeperThan(json)) throw refusal(`${name} nests JSON more than ${MAX_JSON_DEPTH} levels deep`);
    }
  }
}

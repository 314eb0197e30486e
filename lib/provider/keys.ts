import { readFile } from 'node:fs/promises';

import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';

import { SettingsError } from '../errors.js';

/** A JSON Web Key Set with private signing keys. */
export interface PrivateJwks {
  keys: JWK[];
}

/**
 * Generates the provider's signing keys: one RSA 2048 key (RS256, PS256) and one EC P-256 key
 * (ES256), each with a thumbprint `kid` and `use: "sig"`.
 */
export async function generateSigningKeys(): Promise<PrivateJwks> {
  const [rsa, ec] = await Promise.all([
    generateKeyPair('RS256', { modulusLength: 2048, extractable: true }),
    generateKeyPair('ES256', { crv: 'P-256', extractable: true }),
  ]);
  const keys = await Promise.all(
    [rsa.privateKey, ec.privateKey].map(async (key) => {
      const jwk = await exportJWK(key);
      return { ...jwk, kid: await calculateJwkThumbprint(jwk), use: 'sig' };
    }),
  );
  return { keys };
}

/**
 * Checks a private JWKS: every key private, asymmetric, with a unique `kid`; at least one RSA key
 * (RS256 is the default signing alg).
 *
 * @throws {@link SettingsError} naming `svc.keys.file` and the faulty key's position.
 */
export function validateSigningKeys(jwks: unknown, source: string): PrivateJwks {
  const fail = (reason: string): never => {
    throw new SettingsError(`invalid signing keys in ${source} (svc.keys.file): ${reason}`, ['svc.keys.file']);
  };
  if (!jwks || typeof jwks !== 'object' || !Array.isArray((jwks as PrivateJwks).keys)) {
    return fail('expected a JSON object with a "keys" array');
  }
  const keys = (jwks as PrivateJwks).keys;
  const kids = new Set<string>();
  keys.forEach((key, i) => {
    if (!key || typeof key !== 'object') fail(`key #${i + 1} is not an object`);
    if (key.kty !== 'RSA' && key.kty !== 'EC') fail(`key #${i + 1} has kty ${String(key.kty)}; only RSA and EC are accepted`);
    if (!key.d) fail(`key #${i + 1} has no private part`);
    if (key.use && key.use !== 'sig') fail(`key #${i + 1} has use ${key.use}; signing keys need use "sig"`);
    if (!key.kid) fail(`key #${i + 1} has no kid`);
    if (kids.has(key.kid as string)) fail(`kid ${key.kid} appears twice`);
    kids.add(key.kid as string);
  });
  if (!keys.some((k) => k.kty === 'RSA')) fail('no RSA key (RS256 is the default signing algorithm)');
  return { keys };
}

/** Reads and validates the JWKS file named by `svc.keys.file`. */
export async function readSigningKeys(file: string): Promise<PrivateJwks> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new SettingsError(`cannot read svc.keys.file ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`, ['svc.keys.file']);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SettingsError(`svc.keys.file ${file} is not valid JSON`, ['svc.keys.file']);
  }
  return validateSigningKeys(parsed, file);
}

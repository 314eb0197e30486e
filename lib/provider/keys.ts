import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';

import { EC_CURVES, MIN_RSA_BITS, rsaBits } from '../../policies/jwk-rules.js';
import { readJsonFile, SettingsError } from '../errors.js';
import { providerOrder, stateFault, stateOf } from './key-states.js';

/** A JSON Web Key Set with the provider's private keys: signing keys and, optionally, decryption keys. */
export interface PrivateJwks {
  keys: JWK[];
}

async function privateJwk(key: CryptoKey, use: 'sig' | 'enc'): Promise<JWK> {
  const jwk = await exportJWK(key);
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), use };
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
  return { keys: await Promise.all([rsa.privateKey, ec.privateKey].map((key) => privateJwk(key, 'sig'))) };
}

/**
 * Generates the provider's decryption keys for encrypted request objects (RFC 9101): one RSA 2048
 * key (RSA-OAEP, RSA-OAEP-256) and one EC P-256 key (ECDH-ES, ECDH-ES+A*KW), each with a thumbprint
 * `kid` and `use: "enc"`. Relying parties find them in the provider's JWKS.
 */
async function generateEncryptionKeys(): Promise<PrivateJwks> {
  const [rsa, ec] = await Promise.all([
    generateKeyPair('RSA-OAEP-256', { modulusLength: 2048, extractable: true }),
    generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true }),
  ]);
  return { keys: await Promise.all([rsa.privateKey, ec.privateKey].map((key) => privateJwk(key, 'enc'))) };
}

/**
 * Generates every key the provider holds: the signing keys ({@link generateSigningKeys}) followed
 * by the request-object decryption keys ({@link generateEncryptionKeys}). This is what
 * `svc-connect keys generate` writes and what a start without `svc.keys.file` uses.
 */
export async function generateProviderKeys(): Promise<PrivateJwks> {
  const [signing, encryption] = await Promise.all([generateSigningKeys(), generateEncryptionKeys()]);
  return { keys: [...signing.keys, ...encryption.keys] };
}

/**
 * Checks a private JWKS: every key private, RSA or EC, with a unique `kid`; `use` is `sig`
 * (signing ID tokens and UserInfo) or `enc` (decrypting request objects), or absent (both); RSA
 * keys have at least 2048 bits and EC keys a NIST curve; at least one RSA signing key (RS256 is
 * the default signing alg). Signing and decryption keys are distinct keys with distinct `kid`s.
 *
 * Keys may carry rotation members (`svc_state`: `next`, `current` — the default — or `retiring`;
 * `svc_since`: epoch seconds; see `svc-connect keys rotate`): there must be a current RSA signing key,
 * and no `next` or `retiring` key may be the one oidc-provider would sign with. The result is the
 * keys in the order the provider is given them (current, next, retiring) without those members.
 *
 * @throws {@link SettingsError} naming `svc.keys.file` and the faulty key's position.
 */
export function validateProviderKeys(jwks: unknown, source: string): PrivateJwks {
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
    if (key.use !== undefined && key.use !== 'sig' && key.use !== 'enc') {
      fail(`key #${i + 1} has use ${String(key.use)}; keys need use "sig" (signing) or "enc" (request object decryption)`);
    }
    if (key.kty === 'RSA' && rsaBits(key) < MIN_RSA_BITS) fail(`key #${i + 1} is an RSA key of ${rsaBits(key)} bits; at least ${MIN_RSA_BITS} are needed`);
    if (key.kty === 'EC' && !(EC_CURVES as readonly unknown[]).includes(key.crv)) fail(`key #${i + 1} is on curve ${String(key.crv)}; EC keys need P-256, P-384 or P-521`);
    const fault = stateFault(key);
    if (fault) fail(`key #${i + 1} ${fault}`);
    if (!key.kid) fail(`key #${i + 1} has no kid`);
    if (kids.has(key.kid as string)) fail(`kid ${key.kid} appears twice`);
    kids.add(key.kid as string);
  });
  if (!keys.some((k) => k.kty === 'RSA' && k.use !== 'enc')) fail('no RSA signing key (RS256 is the default signing algorithm)');
  if (!keys.some((k) => k.kty === 'RSA' && k.use !== 'enc' && stateOf(k) === 'current')) fail('no current RSA signing key (every RSA signing key is next or retiring)');
  const ordered = providerOrder(keys);
  if ('fault' in ordered) return fail(ordered.fault);
  return { keys: ordered.keys };
}

/** Reads and validates the JWKS file named by `svc.keys.file`. */
export function readSigningKeys(file: string): PrivateJwks {
  return validateProviderKeys(
    readJsonFile(file, (reason) => new SettingsError(`svc.keys.file: ${reason}`, ['svc.keys.file'])),
    file,
  );
}

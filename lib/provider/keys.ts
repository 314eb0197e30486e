import { createPrivateKey, createPublicKey, sign, verify, type JsonWebKey } from 'node:crypto';

import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';

import { canonicalJwk, EC_CURVES, EC_SIGNING_ALG, memberNameDefect, MIN_RSA_BITS, rsaBits, rsaExponentDefect } from '../../policies/jwk-rules.js';
import { SettingsError } from '../errors.js';
import { readJsonFile } from '../user-files.js';
import { providerOrder, signingKeyFor, signingOnlyKids, stateFault, stateOf, unpublishedKids } from './key-states.js';

/** A JSON Web Key Set with the provider's private keys: signing keys and, optionally, decryption keys. */
export interface PrivateJwks {
  keys: JWK[];
}

/** The provider's keys in its order, the kids of those it holds without publishing them ({@link unpublishedKids}), and of those it publishes to verify with only ({@link signingOnlyKids}). */
export interface ProviderKeys extends PrivateJwks {
  unpublished: string[];
  signingOnly: string[];
}

/** A fresh private key for `alg` (RSA of `modulusLength` bits, or EC on `crv`) with a thumbprint `kid` and, when given, `use`. */
export async function generatePrivateJwk(alg: string, size: { modulusLength: number } | { crv: string }, use?: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { ...size, extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), ...(use ? { use } : {}) };
}

/** Generates the provider's signing keys: RSA 2048 (RS256, PS256) and EC P-256 (ES256), with `use: "sig"`. */
export async function generateSigningKeys(): Promise<PrivateJwks> {
  const keys = [generatePrivateJwk('RS256', { modulusLength: 2048 }, 'sig'), generatePrivateJwk('ES256', { crv: 'P-256' }, 'sig')];
  return { keys: await Promise.all(keys) };
}

/**
 * Generates every key the provider holds: the signing keys ({@link generateSigningKeys}) followed by the
 * request-object decryption keys (RFC 9101): RSA 2048 (RSA-OAEP*) and EC P-256 (ECDH-ES*), with `use: "enc"`.
 * This is what `svc-connect keys generate` writes and what a start without `svc.keys.file` uses.
 */
export async function generateProviderKeys(): Promise<PrivateJwks> {
  const decryption = [generatePrivateJwk('RSA-OAEP-256', { modulusLength: 2048 }, 'enc'), generatePrivateJwk('ECDH-ES', { crv: 'P-256' }, 'enc')];
  const [signing, ...keys] = await Promise.all([generateSigningKeys(), ...decryption]);
  return { keys: [...signing.keys, ...keys] };
}

/** The WebCrypto usages a private key may be imported with, by the op oidc-provider picks it by. */
const PRIVATE_USAGES: Readonly<Record<string, readonly string[]>> = { sign: ['sign'], decrypt: ['decrypt', 'unwrapKey'], deriveBits: ['deriveBits', 'deriveKey'] };

/** The key_ops oidc-provider picks a decryption key by, and jose then decrypts with (RSA-OAEP: "unwrapKey"), by key type. */
const DECRYPTION_OPS: Readonly<Record<string, { pick: string; decrypt: string }>> = { RSA: { pick: 'decrypt', decrypt: 'unwrapKey' }, EC: { pick: 'deriveBits', decrypt: 'deriveBits' } };

/** The ops a key's key_ops mark it for encryption by (a signing key kept to verify with names none). */
const ENCRYPTION_OPS = ['encrypt', 'decrypt', 'wrapKey', 'unwrapKey', 'deriveBits', 'deriveKey'];

/**
 * Why a key marked for encryption (by `use`, an encryption `alg` or its key_ops) cannot decrypt as its key_ops stand, or
 * undefined: oidc-provider lists it for encryption and offers its algs, but picks it to decrypt only by one op and jose
 * decrypts with it only under another, so every request object encrypted to it would fail.
 */
function decryptionOpsFault(key: JWK): string | undefined {
  const ops = key.key_ops;
  const needed = DECRYPTION_OPS[String(key.kty)];
  if (!Array.isArray(ops) || !needed) return undefined;
  const encryptionAlg = typeof key.alg === 'string' && /^(RSA-OAEP|ECDH-ES)/.test(key.alg);
  if (!(key.use === 'enc' || encryptionAlg || ops.some((op) => ENCRYPTION_OPS.includes(op)))) return undefined;
  const required = [...new Set([needed.pick, needed.decrypt])];
  const missing = required.filter((op) => !ops.includes(op));
  if (missing.length === 0) return undefined;
  const quoted = (list: string[]): string => list.map((op) => `"${op}"`).join(', ');
  return `is a decryption key whose key_ops ${JSON.stringify(ops)} lack ${missing.map((op) => `"${op}"`).join(' and ')}: oidc-provider picks it by "${needed.pick}" and decrypts with "${needed.decrypt}", so request objects encrypted to it would fail; give it key_ops [${quoted(required)}], or none`;
}

/** Why `key`'s labels or member sizes keep oidc-provider from using it (or the check below from being cheap), or undefined. */
function labelFault(key: JWK): string | undefined {
  if (key.key_ops !== undefined && !(Array.isArray(key.key_ops) && key.key_ops.every((op) => typeof op === 'string'))) return 'has key_ops that is not an array of strings';
  if (Array.isArray(key.key_ops) && key.key_ops.length === 0) return 'has an empty key_ops; leave it out, or name the ops the key is for';
  if (key.x5c !== undefined && !(Array.isArray(key.x5c) && key.x5c.length > 0 && key.x5c.every((c) => typeof c === 'string' && c.length > 0))) {
    return 'has an x5c that is not a list of certificates (base64 DER strings)';
  }
  // oidc-provider picks a key by one op of its key_ops; jose then imports it with all of them as WebCrypto usages.
  const ops = key.key_ops ?? [];
  const picked = ['sign', key.kty === 'RSA' ? 'decrypt' : 'deriveBits'].find((op) => ops.includes(op));
  const usages = picked === undefined ? undefined : PRIVATE_USAGES[picked];
  if (usages && ops.some((op) => !usages.includes(op))) return `has key_ops ${JSON.stringify(ops)}; a private key is imported with exactly its key_ops, which may then hold only ${usages.map((op) => `"${op}"`).join(' and ')}`;
  if (key.alg !== undefined) {
    const signing = key.kty === 'RSA' ? /^(RS|PS)(256|384|512)$/ : new RegExp(`^${EC_SIGNING_ALG[String(key.crv)] ?? 'none'}$`);
    const encryption = key.kty === 'RSA' ? /^RSA-OAEP(-256)?$/ : /^ECDH-ES(\+A(128|192|256)KW)?$/;
    const fits = key.use === 'sig' ? signing.test(String(key.alg)) : key.use === 'enc' ? encryption.test(String(key.alg)) : signing.test(String(key.alg)) || encryption.test(String(key.alg));
    if (!fits) return `has alg ${String(key.alg)}, which does not fit a${key.use ? ` use "${key.use}"` : 'n'} ${String(key.kty)} key`;
  }
  if (key.use === 'sig' && ops.some((op) => ENCRYPTION_OPS.includes(op))) return `has use "sig" and key_ops ${JSON.stringify(ops)}, which name decryption (RFC 7517 4.3: the two must agree); leave one of them out`;
  const opsFault = decryptionOpsFault(key);
  if (opsFault) return opsFault;
  // OpenSSL signs with RSA keys of at most 16384 bits; a longer member only makes the check below slow.
  const longest = key.kty === 'RSA' ? Math.ceil(16384 / 6) + 2 : 100;
  if ([key.n, key.e, key.d, key.p, key.q, key.dp, key.dq, key.qi, key.x, key.y].some((m) => typeof m === 'string' && m.length > longest)) return 'has a member longer than any key OpenSSL signs with';
  if (key.kty === 'RSA' && typeof key.e === 'string' && key.e.length > 11) return 'has a public exponent longer than 64 bits';
  return undefined;
}

const big = (member: unknown): bigint => BigInt(`0x${Buffer.from(typeof member === 'string' ? member : '', 'base64url').toString('hex') || '0'}`);

/** Why an RSA key's public exponent is unsafe (the rule client keys are judged by), or undefined. */
function exponentFault(key: JWK): string | undefined {
  if (key.kty !== 'RSA') return undefined;
  const defect = rsaExponentDefect(big(key.e));
  return defect === undefined ? undefined : `has an unsafe public exponent (${defect})`;
}

/**
 * Whether an RSA key's `d` inverts `e` modulo p − 1 and q − 1 and its CRT exponents are `d`'s: OpenSSL signs with p, q
 * and the CRT members alone, so a foreign `d` would pass the signature check and fail wherever `d` is used.
 */
function rsaExponentsAgree(key: JWK): boolean {
  const [e, d, p, q, dp, dq] = [key.e, key.d, key.p, key.q, key.dp, key.dq].map(big) as [bigint, bigint, bigint, bigint, bigint, bigint];
  if (p < 2n || q < 2n) return false;
  return (e * d) % (p - 1n) === 1n && (e * d) % (q - 1n) === 1n && d % (p - 1n) === dp && d % (q - 1n) === dq;
}

/**
 * Why `key`'s private part is not the private half of its public members, or undefined when it is: a signature made
 * with it must verify under them (else ID tokens stop verifying against the published keys, or signing fails).
 */
function keyPairFault(key: JWK): string | undefined {
  if (key.kty === 'RSA' && !rsaExponentsAgree(key)) return 'has a private part that does not belong to its public key';
  const message = Buffer.from('svc-connect key pair check');
  const hash = key.kty === 'EC' ? ({ 'P-256': 'sha256', 'P-384': 'sha384', 'P-521': 'sha512' } as Record<string, string>)[String(key.crv)] : 'sha256';
  try {
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...members } = key;
    const signature = sign(hash, message, createPrivateKey({ key: key as JsonWebKey, format: 'jwk' }));
    if (verify(hash, message, createPublicKey({ key: members as JsonWebKey, format: 'jwk' }), signature)) return undefined;
  } catch {
    // Unreadable or inconsistent members: the same answer.
  }
  return 'has a private part that does not belong to its public key';
}

/**
 * Checks a private JWKS (the rules below, each with its message) and returns its keys in the provider's
 * order (current, next, retiring) without their rotation members, each member spelled as RFC 7518 gives it
 * ({@link canonicalJwk}), and the kids of those not to publish (or to publish
 * for signing only).
 * @throws {@link SettingsError} naming `svc.keys.file` and the faulty key's position.
 */
export function validateProviderKeys(jwks: unknown, source: string): ProviderKeys {
  const fail = (reason: string): never => {
    throw new SettingsError(`invalid signing keys in ${source} (svc.keys.file): ${reason}`, ['svc.keys.file']);
  };
  if (!jwks || typeof jwks !== 'object' || !Array.isArray((jwks as PrivateJwks).keys)) return fail('expected a JSON object with a "keys" array');
  // Judged, used and published in the one spelling RFC 7518 gives each member, however the file wrote it.
  const keys = (jwks as PrivateJwks).keys.map((key, i) => {
    const spelled = key && typeof key === 'object' ? canonicalJwk(key) : fail(`key #${i + 1} is not an object`);
    return typeof spelled === 'string' ? fail(`key #${i + 1} ${spelled}`) : spelled;
  });
  const kids = new Set<string>();
  keys.forEach((key, i) => {
    const named = memberNameDefect(key);
    if (named !== undefined) fail(`key #${i + 1}: ${named}`);
    if (key.kty !== 'RSA' && key.kty !== 'EC') fail(`key #${i + 1} has kty ${String(key.kty)}; only RSA and EC are accepted`);
    if (!key.d) fail(`key #${i + 1} has no private part`);
    if (key.kty === 'RSA' && [key.p, key.q, key.dp, key.dq, key.qi].some((m) => !m)) {
      fail(`key #${i + 1} has d without p, q, dp, dq and qi, which the provider signs and decrypts with; export the key with all its private members`);
    }
    if (key.use !== undefined && key.use !== 'sig' && key.use !== 'enc') {
      fail(`key #${i + 1} has use ${String(key.use)}; keys need use "sig" (signing) or "enc" (request object decryption)`);
    }
    if (key.kty === 'RSA' && rsaBits(key) < MIN_RSA_BITS) fail(`key #${i + 1} is an RSA key of ${rsaBits(key)} bits; at least ${MIN_RSA_BITS} are needed`);
    if (key.kty === 'EC' && !(EC_CURVES as readonly unknown[]).includes(key.crv)) fail(`key #${i + 1} is on curve ${String(key.crv)}; EC keys need P-256, P-384 or P-521`);
    const fault = stateFault(key) ?? labelFault(key) ?? exponentFault(key) ?? keyPairFault(key);
    if (fault) fail(`key #${i + 1} ${fault}`);
    if (!key.kid) fail(`key #${i + 1} has no kid`);
    if (typeof key.kid !== 'string') fail(`key #${i + 1} has a kid that is not a string`);
    if (kids.has(key.kid as string)) fail(`kid ${key.kid} appears twice`);
    kids.add(key.kid as string);
  });
  if (!signingKeyFor('RS256', keys)) fail('no RSA signing key (RS256 is the default signing algorithm)');
  if (!signingKeyFor('RS256', keys.filter((k) => stateOf(k) === 'current'))) fail('no current RSA signing key (every RSA signing key is next or retiring)');
  const ordered = providerOrder(keys);
  if ('fault' in ordered) return fail(ordered.fault);
  return { keys: ordered.keys, unpublished: unpublishedKids(keys), signingOnly: signingOnlyKids(keys) };
}

/** The most a keys file holds: every key of a rotation, however large, takes a few kB. */
const KEYS_FILE_LIMIT = { maxBytes: 2 ** 20 };

/**
 * The JSON of the keys file, read by the one reader of the files the user names ({@link readJsonFile}: a regular file
 * as named and as opened, at most 1 MiB).
 * @throws {@link SettingsError} prefixed with `label`.
 */
export function readKeysJson(file: string, label: string): unknown {
  return readJsonFile(file, (reason) => new SettingsError(`${label}: ${reason}`, ['svc.keys.file']), KEYS_FILE_LIMIT);
}

/** Reads and validates the JWKS file named by `svc.keys.file` ({@link readKeysJson}). */
export function readSigningKeys(file: string): ProviderKeys {
  return validateProviderKeys(readKeysJson(file, 'svc.keys.file'), file);
}

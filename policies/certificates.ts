import { createHash, createPublicKey, X509Certificate, type JsonWebKey, type KeyObject } from 'node:crypto';

import type { JWK } from 'jose';

import { clientKeys } from './client-keys.js';
import { budgetedFetch } from './fetch-budget.js';
import { keyLabel, keySizeDefect } from './jwk-rules.js';
import { fetchText, reject, type PolicyDependencies, type RegistrationPolicy } from './types.js';

/** Most certificates an `x5c` or `x5u` chain may hold: each one is parsed and verified. */
const MAX_CHAIN = 8;

const BEGIN = '-----BEGIN CERTIFICATE-----';
const END = '-----END CERTIFICATE-----';

function parseDer(b64: unknown, where: string, field: string): X509Certificate {
  if (typeof b64 !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) reject(field, `${where} is not base64-encoded DER`);
  try {
    return new X509Certificate(Buffer.from(b64, 'base64'));
  } catch {
    return reject(field, `${where} is not a DER X.509 certificate`);
  }
}

/** The PEM certificates in `text`, found by a linear scan (a lazy regular expression is quadratic on BEGIN lines without END). */
function parsePem(text: string, url: string, field: string, label: string): X509Certificate[] {
  const blocks: string[] = [];
  let at = text.indexOf(BEGIN);
  while (at !== -1) {
    const end = text.indexOf(END, at + BEGIN.length);
    if (end === -1) break;
    blocks.push(text.slice(at, end + END.length));
    if (blocks.length > MAX_CHAIN) reject(field, `${label}: x5u ${url} holds more than ${MAX_CHAIN} certificates`);
    at = text.indexOf(BEGIN, end + END.length);
  }
  if (blocks.length === 0) reject(field, `x5u ${url} holds no PEM certificate`);
  return blocks.map((pem, i) => {
    try {
      return new X509Certificate(pem);
    } catch {
      return reject(field, `x5u ${url}: certificate #${i + 1} is not valid PEM`);
    }
  });
}

/** Why verifying with an issuer's key could cost more than a client key the rules accept ({@link keySizeDefect}), or `undefined`. */
function issuerKeyDefect(cert: X509Certificate): string | undefined {
  let jwk: JWK;
  try {
    jwk = cert.publicKey.export({ format: 'jwk' });
  } catch {
    return `a ${String(cert.publicKey.asymmetricKeyType)} key, which is not supported; only RSA, EC and OKP keys are`;
  }
  return keySizeDefect(jwk);
}

const spki = (key: KeyObject): Buffer => key.export({ type: 'spki', format: 'der' });

/** Checks a chain: leaf key = JWK, each certificate issued and signed by the next, all within validity. */
function checkChain(chain: X509Certificate[], jwk: JWK, label: string, what: string, field: string): void {
  const now = Date.now();
  let jwkSpki: Buffer;
  try {
    jwkSpki = spki(createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }));
  } catch {
    return reject(field, `${label} is not a valid public key`);
  }
  const leaf = chain[0] as X509Certificate;
  if (!spki(leaf.publicKey).equals(jwkSpki)) reject(field, `${label}: the ${what} leaf certificate's public key differs from the JWK`);
  chain.forEach((cert, i) => {
    if (Date.parse(cert.validFrom) > now || Date.parse(cert.validTo) < now) reject(field, `${label}: ${what} certificate #${i + 1} is expired or not yet valid`);
    const issuer = chain[i + 1];
    const cost = issuer && issuerKeyDefect(issuer);
    if (cost) reject(field, `${label}: ${what} certificate #${i + 2}'s public key: ${cost}`);
    if (issuer && !(cert.checkIssued(issuer) && cert.verify(issuer.publicKey))) {
      reject(field, `${label}: ${what} certificate #${i + 1} is not issued and signed by certificate #${i + 2}`);
    }
  });
}

async function vetKey(key: JWK, index: number, field: string, fetch: PolicyDependencies['fetch']): Promise<void> {
  const label = keyLabel(key, index);
  let leaf: X509Certificate | undefined;
  if (key.x5c !== undefined) {
    if (!Array.isArray(key.x5c) || key.x5c.length === 0) reject(field, `${label}: x5c must be a non-empty array`);
    if (key.x5c.length > MAX_CHAIN) reject(field, `${label}: x5c holds ${key.x5c.length} certificates, at most ${MAX_CHAIN}`);
    const chain = key.x5c.map((c, i) => parseDer(c, `${label}: x5c[${i}]`, field));
    checkChain(chain, key, label, 'x5c', field);
    leaf = chain[0];
  }
  if (key.x5u !== undefined) {
    if (typeof key.x5u !== 'string') reject(field, `${label}: x5u must be a URL string`);
    const text = await fetchText(fetch, key.x5u, 'application/pem-certificate-chain, application/x-pem-file, text/plain', field, `${label}: x5u `);
    const chain = parsePem(text, key.x5u, field, label);
    checkChain(chain, key, label, 'x5u', field);
    if (leaf && !leaf.raw.equals((chain[0] as X509Certificate).raw)) reject(field, `${label}: the x5u and x5c leaf certificates differ`);
    leaf = chain[0];
  }
  const x5tS256 = (key as Record<string, unknown>)['x5t#S256'];
  if ((key.x5t !== undefined || x5tS256 !== undefined) && !leaf) reject(field, `${label}: x5t and x5t#S256 need x5c or x5u to be checked against`);
  for (const [member, value, hash, name] of [['x5t', key.x5t, 'sha1', 'SHA-1'], ['x5t#S256', x5tS256, 'sha256', 'SHA-256']] as const) {
    const expected = leaf && createHash(hash).update(leaf.raw).digest('base64url');
    if (value !== undefined && value !== expected) reject(field, `${label}: ${member} does not match the ${name} thumbprint of the leaf certificate`);
  }
}

/**
 * Policy `svc/certificates`: for every client key with certificate members, the `x5c` (and fetched
 * `x5u`) leaf's public key equals the JWK, each certificate is issued and signed by the next and
 * currently valid, and `x5t` / `x5t#S256` equal the leaf's thumbprints. No trust anchor is required.
 * Cost is bounded: {@link MAX_CHAIN} certificates a chain, issuer keys held to client key sizes,
 * and one fetch budget per request ({@link budgetedFetch}).
 */
export function certificatesPolicy(deps: PolicyDependencies): RegistrationPolicy {
  return async (_ctx, properties) => {
    const loaded = await clientKeys(properties, deps);
    if (!loaded) return;
    const fetch = budgetedFetch(properties, deps);
    for (const [i, key] of loaded.keys.entries()) await vetKey(key, loaded.judgement.positions[i] ?? i, loaded.field, fetch);
  };
}

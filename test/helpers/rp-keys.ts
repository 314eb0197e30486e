import { createPublicKey, type JsonWebKey } from 'node:crypto';

import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

import { runShared } from './run-shared.js';

/** How many distinct keys of one algorithm the run shares. */
const POOL = 4;
const pools = new Map<string, Promise<JWK[]>>();
const drawn = new Map<string, number>();

async function privateJwk(alg: string): Promise<JWK> {
  const size = /^(RS|PS|RSA)/.test(alg) ? { modulusLength: 2048 } : alg.startsWith('ECDH') ? { crv: 'P-256' } : {};
  return exportJWK((await generateKeyPair(alg, { extractable: true, ...size })).privateKey);
}

/**
 * A relying party's key pair for `alg` (RSA 2048 or EC P-256), drawn in turn from a pool of {@link POOL} that the
 * whole run shares ({@link runShared}): up to {@link POOL} draws in a row in one file are distinct keys.
 */
export async function rpKeyPair(alg: string): Promise<{ privateKey: CryptoKey; publicJwk: JWK }> {
  let pool = pools.get(alg);
  if (!pool) {
    pool = runShared(`rp-keys-${alg}`, () => Promise.all(Array.from({ length: POOL }, () => privateJwk(alg))));
    pools.set(alg, pool);
  }
  const at = drawn.get(alg) ?? 0;
  drawn.set(alg, at + 1);
  const jwk = (await pool)[at % POOL] as JWK;
  const publicJwk = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }).export({ format: 'jwk' }) as JWK;
  return { privateKey: (await importJWK(jwk, alg, { extractable: true })) as CryptoKey, publicJwk };
}

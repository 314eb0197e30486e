import type { JWK } from 'jose';

import { encryptionLabels } from './key-usage.js';

const EC_CURVES = ['P-256', 'P-384', 'P-521'];

/**
 * Encryption key: `use=enc` or `key_ops` containing one of its {@link encryptionLabels} (RSA:
 * `encrypt`, `wrapKey`; EC and OKP also `deriveKey`, `deriveBits`).
 */
export const isEncryptionKey = (key: JWK): boolean => key.use === 'enc' || (Array.isArray(key.key_ops) && key.key_ops.some((op) => encryptionLabels(key).includes(op)));
/** Signature key: `use=sig` or `key_ops` containing `verify`. */
export const isSignatureKey = (key: JWK): boolean => key.use === 'sig' || (Array.isArray(key.key_ops) && key.key_ops.includes('verify'));

/** Bits of the modulus' value: leading zero bytes of `n` don't count. */
function rsaBits(key: JWK): number {
  if (typeof key.n !== 'string') return 0;
  const hex = Buffer.from(key.n, 'base64url').toString('hex');
  return hex === '' ? 0 : BigInt(`0x${hex}`).toString(2).length;
}

/**
 * Would oidc-provider consider `key` when it encrypts to the client with `alg`? Mirrors the filter
 * of its keystore's `selectForEncrypt` (9.x): the key type fits the alg family, `alg` is absent or
 * equal, `use` is absent or `enc`, and an RSA key's `key_ops`, when present, contain `encrypt`
 * (EC and OKP keys are taken whatever their `key_ops`). Every such key must fit ({@link fitReason}),
 * or the token endpoint may pick one that fails.
 */
export function isCandidateFor(key: JWK, alg: string): boolean {
  const families = alg.startsWith('RSA') ? ['RSA'] : ['EC', 'OKP'];
  if (!families.includes(String(key.kty))) return false;
  if (key.alg !== undefined && key.alg !== alg) return false;
  if (key.use !== undefined && key.use !== 'enc') return false;
  return !(key.kty === 'RSA' && Array.isArray(key.key_ops) && !key.key_ops.includes('encrypt'));
}

/**
 * Why the provider could not encrypt to `key` with `alg`, whatever the key's labels say, or
 * `undefined` when it can. Beyond type, curve and size, this follows what jose (which
 * oidc-provider hands the stored JWK to) accepts: it imports the JWK with its `key_ops` as the
 * WebCrypto usages, so an RSA-OAEP key's `key_ops` must be exactly `encrypt` and `wrapKey` (or
 * absent; oidc-provider also needs `encrypt`), and an ECDH-ES public key must carry no `key_ops`.
 */
export function fitReason(key: JWK, alg: string): string | undefined {
  if (key.alg !== undefined && key.alg !== alg) return `its alg is ${String(key.alg)}`;
  const ops = Array.isArray(key.key_ops) ? key.key_ops : undefined;
  if (alg.startsWith('RSA-OAEP')) {
    if (key.kty !== 'RSA') return `${String(key.kty)} key, but ${alg} needs RSA`;
    const bits = rsaBits(key);
    if (bits < 2048) return `RSA modulus of ${bits} bits, at least 2048 needed`;
    if (ops && !(ops.length === 2 && ops.includes('encrypt') && ops.includes('wrapKey'))) {
      return `key_ops ${JSON.stringify(ops)}, but ${alg} needs key_ops ["encrypt", "wrapKey"] or none (use "enc" instead)`;
    }
    return undefined;
  }
  if (alg.startsWith('ECDH-ES')) {
    const curveFits = (key.kty === 'EC' && typeof key.crv === 'string' && EC_CURVES.includes(key.crv)) || (key.kty === 'OKP' && key.crv === 'X25519');
    if (!curveFits) return `${String(key.kty)}${key.crv ? ` ${String(key.crv)}` : ''} key, but ${alg} needs EC P-256/384/521 or X25519`;
    if (ops) return `key_ops ${JSON.stringify(ops)}, but an ${alg} public key must carry no key_ops (use "enc" instead)`;
    return undefined;
  }
  return `${alg} is not supported`;
}

/** Why `key` cannot serve `alg` as an encryption key, or `undefined` when it can. */
export function unfitReason(key: JWK, alg: string): string | undefined {
  if (!isEncryptionKey(key)) return 'not an encryption key (needs use=enc or key_ops containing encrypt)';
  return fitReason(key, alg);
}

/** The key a JWS algorithm this provider verifies needs: its type and, for EC, its curve. */
const SIGNATURE_KEYS: Record<string, { kty: string; crv?: string }> = {
  RS256: { kty: 'RSA' },
  PS256: { kty: 'RSA' },
  ES256: { kty: 'EC', crv: 'P-256' },
};

/**
 * Why the provider could not verify `alg` signatures with `key`, whatever its labels say, or
 * `undefined` when it can: RS256 and PS256 need RSA (at least 2048 bits), ES256 an EC P-256 key; a
 * key's own `alg`, if present, must be `alg`; and `key_ops`, if present, must contain `verify`
 * (oidc-provider selects verification keys by it). Any other algorithm is not offered (EdDSA
 * included: Ed25519 keys are not judged for small-order points, so they verify nothing here).
 * The key itself (a point on its curve, a real modulus) is judged by `keyDefect`.
 */
export function signatureFitReason(key: JWK, alg: string): string | undefined {
  const needed = SIGNATURE_KEYS[alg];
  if (!needed) return `${alg} is not supported`;
  if (key.alg !== undefined && key.alg !== alg) return `its alg is ${String(key.alg)}`;
  const described = `${String(key.kty)}${key.crv ? ` ${String(key.crv)}` : ''} key`;
  if (key.kty !== needed.kty || (needed.crv !== undefined && key.crv !== needed.crv)) {
    return `${described}, but ${alg} needs ${needed.kty}${needed.crv ? ` ${needed.crv}` : ''}`;
  }
  if (key.kty === 'RSA' && rsaBits(key) < 2048) return `RSA modulus of ${rsaBits(key)} bits, at least 2048 needed`;
  if (Array.isArray(key.key_ops) && !key.key_ops.includes('verify')) return `key_ops ${JSON.stringify(key.key_ops)} lack "verify"`;
  return undefined;
}

/**
 * Why `key` cannot verify signatures made with any of `algs`, or `undefined` when it can verify
 * one of them: it must be a signature key (`use=sig` or `key_ops` containing `verify`) that fits
 * ({@link signatureFitReason}).
 */
export function unfitSignatureReason(key: JWK, algs: readonly string[]): string | undefined {
  if (!isSignatureKey(key)) return 'not a signature key (needs use=sig or key_ops containing verify)';
  const reasons = algs.map((alg) => signatureFitReason(key, alg));
  if (reasons.some((r) => r === undefined)) return undefined;
  return algs.length === 1 ? reasons[0] : algs.map((alg, i) => `${alg}: ${String(reasons[i])}`).join(', ');
}

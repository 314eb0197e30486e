import type { JWK } from 'jose';
import type { Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { ROUTE_NAMES } from '../seams.js';

/**
 * The public counterpart of each private key op: a relying party verifies with, encrypts to, or wraps a key to the
 * public key (RFC 7517 4.3). A public ECDH key takes no op (WebCrypto refuses one), so `deriveBits` and `deriveKey` have none.
 */
const PUBLIC_OP: Readonly<Record<string, string | undefined>> = { sign: 'verify', verify: 'verify', decrypt: 'encrypt', encrypt: 'encrypt', unwrapKey: 'wrapKey', wrapKey: 'wrapKey', deriveBits: undefined, deriveKey: undefined };

/**
 * `key` with its `key_ops` as the public key's ({@link PUBLIC_OP}; an op RFC 7517 does not define kept as it is), or
 * without `key_ops` when none is left, then with `use: "enc"` (an ECDH key: listed without either, it would be one to
 * verify with). oidc-provider lists the private key's ops, which jose and openid-client read as "not for verifying" (no
 * ID token verifies) and refuse to encrypt to.
 */
function withPublicOps(key: JWK): JWK {
  if (!Array.isArray(key.key_ops)) return key;
  const { key_ops: ops, ...rest } = key;
  const mapped = [...new Set(ops.flatMap((op) => (op in PUBLIC_OP ? (PUBLIC_OP[op] ?? []) : [op])))];
  if (mapped.length) return { ...rest, key_ops: mapped };
  return rest.use === undefined ? { ...rest, use: 'enc' } : rest;
}

/**
 * `provider.use` middleware: the JWKS answer leaves out the keys whose kids are `unpublished` (see `unpublishedKids`),
 * lists those whose kids are `signingOnly` with `use: "sig"` (see `signingOnlyKids`), and gives every key the
 * `key_ops` of its public half.
 */
export function publishedKeysOnly(unpublished: readonly string[], signingOnly: readonly string[] = []): Middleware {
  const hidden = new Set(unpublished);
  const verifyOnly = new Set(signingOnly);
  return async (ctx, next) => {
    await next();
    const body = ctx.body as { keys?: unknown } | undefined;
    if ((ctx as KoaContextWithOIDC).oidc?.route !== ROUTE_NAMES.jwks || !Array.isArray(body?.keys)) return;
    // A new array of new objects on oidc-provider's answer object: the provider's own list, served again next time, stays whole.
    body.keys = (body.keys as JWK[]).filter((k) => !hidden.has(String(k.kid))).map((k) => withPublicOps(verifyOnly.has(String(k.kid)) ? { ...k, use: 'sig' } : k));
  };
}

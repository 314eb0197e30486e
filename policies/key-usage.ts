import type { JWK } from 'jose';

/** RFC 7517 section 4.3 operations that belong to signatures. */
export const SIGNATURE_OPS = ['sign', 'verify'] as const;
/** RFC 7517 section 4.3 operations that belong to encryption and key agreement. */
export const ENCRYPTION_OPS = ['encrypt', 'decrypt', 'wrapKey', 'unwrapKey', 'deriveKey', 'deriveBits'] as const;
const KNOWN_OPS: readonly string[] = [...SIGNATURE_OPS, ...ENCRYPTION_OPS];

/**
 * The `key_ops` values that mark a public key for encryption (CONTRACT C6.2): for RSA `encrypt` or
 * `wrapKey`; for EC and OKP (ECDH) also `deriveKey` or `deriveBits`. `decrypt` and `unwrapKey`
 * belong to the private half and mark nothing here.
 */
export function encryptionLabels(key: JWK): readonly string[] {
  return key.kty === 'RSA' ? ['encrypt', 'wrapKey'] : ['encrypt', 'wrapKey', 'deriveKey', 'deriveBits'];
}

/**
 * The key as the provider stores and uses it, for an encryption key labelled any way C6.2 accepts
 * (the key already passed {@link usageDefect}): RSA keeps `key_ops: ["encrypt", "wrapKey"]` when it
 * has `key_ops` at all, EC and OKP lose `key_ops` and get `use: "enc"`. Other keys come back as
 * they are. Needed because the two libraries the provider encrypts with read labels differently:
 * oidc-provider picks an RSA key only when its `key_ops` (if any) contain `encrypt`, while jose
 * imports an RSA public key for `encrypt` and `wrapKey` together (WebCrypto refuses a JWK whose
 * `key_ops` lack one of them) and refuses an ECDH public key with any `key_ops` at all. A new object; `key` is not changed.
 */
export function normaliseKeyLabels(key: JWK): JWK {
  const ops = Array.isArray(key.key_ops) ? key.key_ops : undefined;
  const encryption = key.use === 'enc' || (ops !== undefined && ops.some((op) => encryptionLabels(key).includes(op)));
  if (!encryption) return key;
  const { key_ops: _ops, ...rest } = key;
  if (key.kty === 'RSA') return ops === undefined ? { ...key } : { ...rest, key_ops: ['encrypt', 'wrapKey'] };
  return { ...rest, use: 'enc' };
}

/** Registered asymmetric JWS algorithms (RFC 7518, RFC 8037, RFC 9864) by key type / curve. */
const SIGNATURE_ALGS: Record<string, readonly string[]> = {
  RSA: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
  'P-256': ['ES256'],
  'P-384': ['ES384'],
  'P-521': ['ES512'],
  Ed25519: ['EdDSA', 'Ed25519'],
  Ed448: ['EdDSA', 'Ed448'],
};
const ECDH = ['ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'];
/** Registered asymmetric JWE key-management algorithms by key type / curve. */
const ENCRYPTION_ALGS: Record<string, readonly string[]> = {
  RSA: ['RSA-OAEP', 'RSA-OAEP-256', 'RSA-OAEP-384', 'RSA-OAEP-512', 'RSA1_5'],
  'P-256': ECDH,
  'P-384': ECDH,
  'P-521': ECDH,
  X25519: ECDH,
  X448: ECDH,
};

/** What a key can do at all, from its type and curve. */
function capabilities(key: JWK): { sig: boolean; enc: boolean; family: string } {
  const family = key.kty === 'RSA' ? 'RSA' : String(key.crv);
  return { sig: family in SIGNATURE_ALGS, enc: family in ENCRYPTION_ALGS, family };
}

/** "an RSA", "an X25519", "a P-256": the article English wants before a key family. */
export const withArticle = (family: string): string => `${family.startsWith('P-') ? 'a' : 'an'} ${family}`;

const quoted = (values: readonly string[]): string => values.map((v) => `"${v}"`).join(', ');

/**
 * Why the key's `use`, `key_ops` and `alg` contradict each other or the key's type, or
 * `undefined` when they agree. `use` is `sig` or `enc`; `key_ops` is a list of distinct RFC 7517
 * operations, all for signatures or all for encryption, agreeing with `use`; `ext` is a boolean;
 * `alg` is a registered asymmetric algorithm for this key type and curve, agreeing with `use` and
 * `key_ops`; an Ed25519/Ed448 key only signs and an X25519/X448 key only encrypts. An encryption
 * key's `key_ops` must contain one of its {@link encryptionLabels} (an EC or OKP key may also carry
 * an empty list); the provider stores and uses it as {@link normaliseKeyLabels} makes it. Curves
 * outside these tables are left to the key's own judgement (`keyDefect`).
 */
export function usageDefect(key: JWK): string | undefined {
  const { use, key_ops: ops, alg } = key as { use?: unknown; key_ops?: unknown; alg?: unknown };
  if (use !== undefined && use !== 'sig' && use !== 'enc') return `use ${JSON.stringify(use)} is neither "sig" nor "enc"`;
  let purpose = use;
  if (ops !== undefined) {
    if (!Array.isArray(ops) || !ops.every((op): op is string => typeof op === 'string')) return 'key_ops must be an array of strings';
    const unknown = ops.find((op) => !KNOWN_OPS.includes(op));
    if (unknown !== undefined) return `key_ops value ${JSON.stringify(unknown)} is not an RFC 7517 operation (${KNOWN_OPS.join(', ')})`;
    const twice = ops.find((op, i) => ops.indexOf(op) !== i);
    if (twice !== undefined) return `key_ops lists "${twice}" more than once`;
    const sig = ops.filter((op) => (SIGNATURE_OPS as readonly string[]).includes(op));
    const enc = ops.filter((op) => (ENCRYPTION_OPS as readonly string[]).includes(op));
    if (sig.length > 0 && enc.length > 0) return `key_ops mixes signature operations (${quoted(sig)}) with encryption operations (${quoted(enc)})`;
    if (use === 'sig' && enc.length > 0) return `use "sig" contradicts key_ops ${quoted(enc)}`;
    if (use === 'enc' && sig.length > 0) return `use "enc" contradicts key_ops ${quoted(sig)}`;
    if (sig.length > 0) purpose ??= 'sig';
    else if (enc.length > 0) purpose ??= 'enc';
  }
  const ext = (key as { ext?: unknown }).ext;
  if (ext !== undefined && typeof ext !== 'boolean') return 'ext must be true or false';
  const can = capabilities(key);
  if (purpose === 'enc' && !can.enc && can.sig) return `${withArticle(can.family)} key can only sign, but it is marked for encryption`;
  if (purpose === 'sig' && !can.sig && can.enc) return `${withArticle(can.family)} key cannot sign, but it is marked for signatures`;
  if (purpose === 'enc' && Array.isArray(ops) && (key.kty === 'RSA' || ops.length > 0)) {
    const labels = encryptionLabels(key);
    if (!ops.some((op) => labels.includes(op))) {
      return `key_ops ${JSON.stringify(ops)}: ${key.kty === 'RSA' ? 'an RSA' : 'an ECDH'} public encryption key needs key_ops containing ${labels.map((l) => `"${l}"`).join(', ').replace(/, ([^,]*)$/, ' or $1')} (or none, with use "enc")`;
    }
  }
  if (alg === undefined) return undefined;
  if (typeof alg !== 'string') return 'alg must be a string';
  const sigAlgs = SIGNATURE_ALGS[can.family] ?? [];
  const encAlgs = ENCRYPTION_ALGS[can.family] ?? [];
  if (!sigAlgs.includes(alg) && !encAlgs.includes(alg)) {
    if (!(can.family in SIGNATURE_ALGS) && !(can.family in ENCRYPTION_ALGS)) return undefined;
    return `alg ${JSON.stringify(alg)} is not an algorithm for ${withArticle(can.family)} key (${[...sigAlgs, ...encAlgs].join(', ')})`;
  }
  if (purpose === 'enc' && sigAlgs.includes(alg)) return `alg "${alg}" is a signature algorithm, but the key is marked for encryption`;
  if (purpose === 'sig' && encAlgs.includes(alg)) return `alg "${alg}" is an encryption algorithm, but the key is marked for signatures`;
  return undefined;
}

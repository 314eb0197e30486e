/**
 * Most keys a client's JWK Set may hold. Judging a key imports it, so the cap keeps a 512 KiB
 * `jwks_uri` document or a stream of failing updates from buying seconds of CPU.
 */
export const MAX_KEYS = 32;

/**
 * What the RSA keys of one set may weigh together, in 2048-bit keys ({@link rsaWeight}): judging
 * them costs about 100 ms at most whatever their sizes (32 keys of 2048 bits, 13 of 3072, 4 of 4096;
 * `test/bench/key-judgement.ts`).
 */
export const RSA_WEIGHT_BUDGET = 40;

/**
 * What judging an RSA key costs in 2048-bit keys, from the length of its `n` alone (nothing is
 * decoded): the probable-prime test grows with the cube of the size, so a key of up to 2048 bits
 * weighs 1, up to 3072 bits 3, up to 4096 bits 10. A longer `n` weighs nothing: its length alone
 * refuses it, before any arithmetic.
 */
export function rsaWeight(key: unknown): number {
  const { kty, n } = (key ?? {}) as { kty?: unknown; n?: unknown };
  if (kty !== 'RSA' || typeof n !== 'string') return 0;
  const bytes = Math.floor((n.length * 3) / 4);
  if (bytes <= 256) return 1;
  if (bytes <= 384) return 3;
  return bytes <= 512 ? 10 : 0;
}

/**
 * Why a JWK Set is refused whole before any of its keys is judged, or `undefined`: more than
 * {@link MAX_KEYS} keys, or RSA keys that together weigh more than {@link RSA_WEIGHT_BUDGET}.
 * Registration and the provider's later `jwks_uri` fetches apply it alike.
 *
 * @param keys - the `keys` array of the set, as published (not trusted to be well-formed)
 */
export function keySetDefect(keys: readonly unknown[]): string | undefined {
  if (keys.length > MAX_KEYS) return `a JWK Set may hold at most ${MAX_KEYS} keys; this one holds ${keys.length}`;
  const weight = keys.reduce<number>((sum, key) => sum + rsaWeight(key), 0);
  if (weight > RSA_WEIGHT_BUDGET) {
    return `the RSA keys of a JWK Set may weigh at most ${RSA_WEIGHT_BUDGET} together (a key of up to 2048 bits weighs 1, up to 3072 bits 3, up to 4096 bits 10, as judging it costs); these weigh ${weight}`;
  }
  return undefined;
}

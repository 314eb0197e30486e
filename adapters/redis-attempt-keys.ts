import { refOf } from './inventory.js';
import { COUNTER_POOLS, COUNTER_SHARE, counterPool } from './store.js';

/**
 * What a counter takes in Redis with its entries in its bucket's indexes, keys under `prefix` (`used_memory` per
 * counter, Redis 7, at most): 603 bytes measured under `svc:`, and some 3.2 more for each further byte of the prefix,
 * as the key is written three times (held for prefixes up to 4000 bytes, and of 2- and 4-byte characters:
 * test/adapters/redis-eviction.test.ts). A long prefix would otherwise let counters outgrow their share.
 */
export const redisCounterBytes = (prefix: string): number => 640 + 4 * Buffer.byteLength(prefix);

/**
 * A counter's bucket: a hash tag it shares with the bucket's indexes (one Cluster slot), so its fail script may replace
 * the bucket's counters, and only counters of its own pool.
 */
export const attemptBucket = (key: string, ref: string): string => `{${counterPool(key).charAt(0)}${ref.charAt(0)}}`;

/** The hash tags of the buckets: a pool's letter and a first character of a reference (base64url). */
export const BUCKET_TAGS = COUNTER_POOLS.flatMap((pool) => [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'].map((c) => `${pool.charAt(0)}${c}`));

/** Buckets of attempt counters, each one hash tag ({@link BUCKET_TAGS}). */
export const ATTEMPT_BUCKETS = BUCKET_TAGS.length;

/** The Cluster slot of `key`: CRC16 (XMODEM) of its hash tag, or of the whole key without one, modulo 16384. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  let crc = 0;
  for (const byte of Buffer.from(hashed)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/**
 * Each bucket's counter cap: a 128th of the quarter (64 buckets a pool, each pool half the quarter) on a standalone server; on a Cluster, of each master the quarter of
 * its own `maxmemory` shared by the buckets whose slot it serves (a bucket whose master is unknown counted on each), the
 * least of them, as the 128 buckets fall unevenly on the masters (a hash tag prefix puts all of them on one). 0 (none)
 * unless every master has a `maxmemory`. Counters are sized by {@link redisCounterBytes} of `prefix`.
 */
export function counterCapOf(masters: { node: string; maxmemory: number }[], bucketOwners: (string | undefined)[] | undefined, prefix: string): number {
  if (!masters.length || !masters.every((m) => m.maxmemory > 0)) return 0;
  const perBucket = (bytes: number, buckets: number): number => Math.floor((bytes * COUNTER_SHARE) / redisCounterBytes(prefix) / buckets);
  if (!bucketOwners) return Math.max(1, perBucket(masters.reduce((sum, m) => sum + m.maxmemory, 0), ATTEMPT_BUCKETS));
  const unknown = bucketOwners.filter((owner) => !masters.some((m) => m.node === owner)).length;
  const caps = masters.map((m) => {
    const buckets = unknown + bucketOwners.filter((owner) => owner === m.node).length;
    return buckets > 0 ? perBucket(m.maxmemory, buckets) : Infinity;
  });
  return Math.max(1, Math.min(...caps));
}

/** The Redis key of attempt counter `key` under `prefix`. */
export function attemptCounterKey(prefix: string, key: string): string {
  const ref = refOf(key);
  return `${prefix}attempts:${attemptBucket(key, ref)}:${ref}`;
}

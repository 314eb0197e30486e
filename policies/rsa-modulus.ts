import { constants, createPublicKey, publicEncrypt, type KeyObject } from 'node:crypto';

/**
 * Every prime factor of an RSA modulus below this bound is found (NIST SP 800-89 5.3.3 asks for
 * 752), in well under a millisecond; one above it would need elliptic-curve factoring.
 */
const SMALL_FACTOR_BOUND = 1 << 18;

/** Largest modulus whose probable-prime test OpenSSL runs in one RSA operation (it refuses e > 64 bits above). */
const ONE_OPERATION_BITS = 3072;

let primes: { list: Uint32Array; product: bigint } | undefined;

/** The odd primes below {@link SMALL_FACTOR_BOUND}, ascending, and their product: computed on first use (about 10 ms). */
function smallPrimes(): NonNullable<typeof primes> {
  if (primes) return primes;
  const composite = new Uint8Array(SMALL_FACTOR_BOUND);
  const found: number[] = [];
  for (let i = 3; i < SMALL_FACTOR_BOUND; i += 2) {
    if (composite[i]) continue;
    found.push(i);
    for (let j = i * i; j < SMALL_FACTOR_BOUND; j += 2 * i) composite[j] = 1;
  }
  // A product tree keeps every multiplication balanced (a running product would be quadratic).
  let level = found.map(BigInt);
  while (level.length > 1) {
    const next: bigint[] = [];
    for (let i = 0; i < level.length; i += 2) next.push((level[i] as bigint) * (level[i + 1] ?? 1n));
    level = next;
  }
  primes = { list: Uint32Array.from(found), product: level[0] ?? 1n };
  return primes;
}

function gcd(a: bigint, b: bigint): bigint {
  let [x, y] = [a, b];
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

/** Bits of a non-negative value. */
const bitLength = (value: bigint): number => (value === 0n ? 0 : value.toString(2).length);

/** The smallest odd prime factor of `n` below {@link SMALL_FACTOR_BOUND}, or `undefined` (one gcd, not a division per prime). */
export function smallFactor(n: bigint): number | undefined {
  const { list, product } = smallPrimes();
  const common = gcd(n, product % n);
  if (common === 1n) return undefined;
  // `common` is the product of the small primes that divide n; name the smallest.
  if (common <= BigInt(Number.MAX_SAFE_INTEGER)) {
    const value = Number(common);
    return list.find((p) => value % p === 0);
  }
  return list.find((p) => common % BigInt(p) === 0n);
}

/** a^e mod m for m < 2^26, in doubles (every product stays below 2^53). */
function powMod(a: number, e: number, m: number): number {
  let [result, base, rest] = [1, a % m, e];
  while (rest > 0) {
    if (rest % 2 === 1) result = (result * base) % m;
    base = (base * base) % m;
    rest = Math.floor(rest / 2);
  }
  return result;
}

const isSmallPrime = (value: number): boolean => {
  if (value < 2 || value % 2 === 0) return value === 2;
  for (let d = 3; d * d <= value; d += 2) if (value % d === 0) return false;
  return true;
};

const witnesses = new Map<number, number[]>();

/** Eight primes l = 1 (mod k) below 2^26: modulo each, only one residue in k is a k-th power. */
function witnessesFor(k: number): number[] {
  let found = witnesses.get(k);
  if (!found) {
    found = [];
    for (let l = 2 * k + 1; found.length < 8; l += 2 * k) if (isSmallPrime(l)) found.push(l);
    witnesses.set(k, found);
  }
  return found;
}

/** The integer k-th root of `n`, rounded down (Newton's method from a power of two above it). */
function integerRoot(n: bigint, k: number): bigint {
  const big = BigInt(k);
  let x = 1n << BigInt(Math.ceil(bitLength(n) / k));
  for (;;) {
    const next = ((big - 1n) * x + n / x ** (big - 1n)) / big;
    if (next >= x) return x;
    x = next;
  }
}

/**
 * The prime k when `n` is a perfect k-th power, or `undefined`. `n` has no prime factor below
 * {@link SMALL_FACTOR_BOUND}, so only primes k up to log2(n) / 18 need trying; residues modulo
 * small primes rule almost every k out before a root is taken.
 */
export function perfectPower(n: bigint): number | undefined {
  const maxK = Math.floor(bitLength(n) / Math.log2(SMALL_FACTOR_BOUND));
  for (let k = 2; k <= maxK; k += 1) {
    if (!isSmallPrime(k)) continue;
    const ruledOut = witnessesFor(k).some((l) => {
      const a = Number(n % BigInt(l));
      return a !== 0 && powMod(a, (l - 1) / k, l) !== 1;
    });
    if (!ruledOut && integerRoot(n, k) ** BigInt(k) === n) return k;
  }
  return undefined;
}

const octetsOf = (value: bigint, length: number): Buffer => Buffer.from(value.toString(16).padStart(length * 2, '0'), 'hex');
/** The unsigned integer in big-endian `bytes` (none: 0). */
export const valueOf = (bytes: Buffer): bigint => (bytes.length === 0 ? 0n : BigInt(`0x${bytes.toString('hex')}`));

/** An RSA public key for raw exponentiation: OpenSSL's public operation without padding is m^e mod n. */
function exponentiator(n: bigint, e: bigint, length: number): (m: bigint) => bigint {
  const jwk = { kty: 'RSA', n: octetsOf(n, length).toString('base64url'), e: octetsOf(e, Math.ceil(bitLength(e) / 8)).toString('base64url') };
  const key: KeyObject = createPublicKey({ key: jwk, format: 'jwk' });
  return (m) => valueOf(publicEncrypt({ key, padding: constants.RSA_NO_PADDING }, octetsOf(m, length)));
}

/**
 * 2^(n-1) mod n for an odd n of 2048–4096 bits (1 when n is prime: Fermat's test), computed by
 * OpenSSL's RSA public operation: up to 3072 bits one with e = n - 1 (about 2 ms); above, where
 * OpenSSL takes exponents of at most 64 bits, one 256th power per byte of n - 1. Should OpenSSL
 * refuse, {@link fermatResidueSlow} gives the same answer more slowly.
 */
export function fermatResidue(n: bigint): bigint {
  const length = Math.ceil(bitLength(n) / 8);
  try {
    if (bitLength(n) <= ONE_OPERATION_BITS) return exponentiator(n, n - 1n, length)(2n);
    const toThe256th = exponentiator(n, 256n, length);
    let x = 1n;
    for (const digit of octetsOf(n - 1n, length)) {
      if (x !== 1n) x = toThe256th(x);
      x = (x << BigInt(digit)) % n;
    }
    return x;
  } catch {
    return fermatResidueSlow(n);
  }
}

/** 2^(n-1) mod n by square-and-double in BigInt: the reference {@link fermatResidue} is tested against. */
export function fermatResidueSlow(n: bigint): bigint {
  let x = 1n;
  for (const bit of (n - 1n).toString(2)) {
    x = (x * x) % n;
    if (bit === '1') {
      x <<= 1n;
      if (x >= n) x -= n;
    }
  }
  return x;
}

/**
 * Why `n` (odd, 2048–4096 bits) cannot be an RSA modulus, or `undefined`: NIST SP 800-89 5.3.3
 * partial validation (not prime, not a perfect power, no prime factor below 2^18). Three or more
 * primes, or a factor just above the bound, pass: nothing cheap tells them apart.
 */
export function modulusDefect(n: bigint): string | undefined {
  const factor = smallFactor(n);
  if (factor !== undefined) return `RSA modulus is divisible by ${factor}, so it is not a product of two large primes`;
  const k = perfectPower(n);
  if (k !== undefined) return `RSA modulus is a perfect power (x^${k}), so it is not a product of two distinct primes`;
  if (fermatResidue(n) === 1n) return 'RSA modulus is a probable prime, so anyone can compute the private key';
  return undefined;
}

/**
 * What judging a client key costs (issue 14 follow-up), printed, not asserted:
 * `npx tsx test/bench/key-judgement.ts [runs]` (default 20 per case; median and worst in ms).
 *
 * 1. `keyDefect` on good keys of every accepted RSA size, EC and OKP, and on the worst hostile
 *    inputs: a prime modulus (the probable-prime test runs to the end), oversized members (refused by
 *    their length), a factor just below 2^18.
 * 2. A whole worst-case set as the provider judges it at a later `jwks_uri` fetch: RSA keys up to the
 *    weight budget (4 × 4096 bits, or 32 × 2048 bits), every key judged.
 */
import { generateKeyPairSync, generatePrimeSync } from 'node:crypto';

import type { JWK } from 'jose';

import { keyDefect, keySetDefect } from '../../policies/jwk-rules.js';
import { b64uint } from '../helpers/hostile-keys.js';

const N = Number(process.argv[2] ?? 20);
const out = (line = ''): boolean => process.stdout.write(`${line}\n`);

function measure(label: string, work: () => string | undefined): void {
  work(); // warm-up: the small primes are computed once per process
  const times: number[] = [];
  let verdict: string | undefined;
  for (let i = 0; i < N; i += 1) {
    const start = performance.now();
    verdict = work();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] as number;
  const worst = times[times.length - 1] as number;
  out(`${label.padEnd(58)} median ${median.toFixed(2).padStart(7)} ms   worst ${worst.toFixed(2).padStart(7)} ms   ${(verdict ?? 'accepted').slice(0, 60)}`);
}

const rsa = (bits: number): JWK => ({ ...(generateKeyPairSync('rsa', { modulusLength: bits }).publicKey.export({ format: 'jwk' }) as JWK), use: 'enc' });
const ec = (crv: string): JWK => ({ ...(generateKeyPairSync('ec', { namedCurve: crv }).publicKey.export({ format: 'jwk' }) as JWK), use: 'enc' });
const okp = (): JWK => ({ ...(generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }) as JWK), use: 'enc' });

const keys = { 2048: rsa(2048), 3072: rsa(3072), 4096: rsa(4096) };
const ones = (bytes: number): string => Buffer.alloc(bytes, 0xff).toString('base64url');

out(`keyDefect, ${N} runs each`);
for (const [bits, key] of Object.entries(keys)) measure(`RSA ${bits}, good`, () => keyDefect(key));
const p256 = ec('P-256');
const p521 = ec('P-521');
const x25519 = okp();
measure('EC P-256, good', () => keyDefect(p256));
measure('EC P-521, good', () => keyDefect(p521));
measure('X25519, good (low-order check: one key agreement)', () => keyDefect(x25519));
const prime2048 = generatePrimeSync(2048, { bigint: true });
measure('RSA 2048, prime modulus', () => keyDefect({ ...keys[2048], n: b64uint(prime2048) }));
measure('RSA 3217, prime modulus (2^3217 - 1: the byte-by-byte path)', () => keyDefect({ ...keys[2048], n: b64uint((1n << 3217n) - 1n) }));
const factored = b64uint(262139n * generatePrimeSync(2040, { bigint: true }));
measure('RSA 2058, factor 262139 (largest prime below 2^18)', () => keyDefect({ ...keys[2048], n: factored }));
measure('RSA, 64 KiB exponent', () => keyDefect({ ...keys[2048], e: ones(64 * 1024) }));
measure('RSA, 380 KiB exponent', () => keyDefect({ ...keys[2048], e: ones(380 * 1024) }));
measure('RSA, 512 KiB modulus', () => keyDefect({ ...keys[2048], n: ones(512 * 1024) }));

out();
out('a whole set, as a later jwks_uri fetch judges it (every key)');
const judgeSet = (set: JWK[]): string => keySetDefect(set) ?? `${set.filter((k) => keyDefect(k) === undefined).length} of ${set.length} accepted`;
measure('4 × RSA 4096 + 28 × EC P-521 (the heaviest allowed)', () => judgeSet([...Array.from({ length: 4 }, () => keys[4096]), ...Array.from({ length: 28 }, () => p521)]));
measure('13 × RSA 3072', () => judgeSet(Array.from({ length: 13 }, () => keys[3072])));
measure('32 × RSA 2048', () => judgeSet(Array.from({ length: 32 }, () => keys[2048])));
measure('5 × RSA 4096 (over the weight: refused unjudged)', () => judgeSet(Array.from({ length: 5 }, () => keys[4096])));

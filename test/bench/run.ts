/**
 * `npm run bench [-- --quick] [-- --out FILE] [-- --compare FILE] [-- --no-docs]`: svc-connect
 * against vanilla oidc-provider under the same driver, in alternating rounds of one run:
 * - the headline: vanilla with the store a user picks (oidc-provider's memory adapter on the
 *   embedded store, the plain Redis adapter of its published example on Redis);
 * - a second, labelled line: vanilla on svc-connect's own adapter;
 * then ES256, the cryptographic floor, registration throughput with key vetting, and the
 * 100 000-record scale check (empty and loaded Redis in alternating rounds). Prints a table, writes
 * the figures into docs/performance.md, and with `--compare` the drift from an earlier `--out` file.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { Redis } from 'ioredis';

import { generateSigningKeys } from '../../lib/provider/keys.js';
import { freePort } from '../helpers/processes.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';
import { measureThrottle } from './throttle.js';
import { makeCertificateChain } from '../helpers/registration.js';
import type { ServerSpec } from './common.js';
import { cryptoFloor } from './floor.js';
import { emptyMeasured, measure, runDriver, startServer, stopServer, type Kind, type Measured, type Target } from './measure.js';
import { report, type Settings } from './report.js';
import { preload } from './scale.js';

const { values: args } = parseArgs({
  options: { out: { type: 'string' }, quick: { type: 'boolean' }, 'no-docs': { type: 'boolean' }, compare: { type: 'string' } },
});
const quick = args.quick === true;
const settings: Settings = {
  quick,
  seconds: quick ? 3 : 8,
  warmup: quick ? 1 : 2,
  rounds: quick ? 1 : 4,
  es256Rounds: quick ? 1 : 2,
  scaleRounds: quick ? 1 : 3,
  concurrency: 8,
  scaleCount: quick ? 10_000 : 100_000,
};
const KINDS: Kind[] = ['ours', 'vanilla', 'vanilla-our-adapter'];

/** Round `r`'s order: rotated and, every other round, reversed, so drift hits every kind alike. */
function orderOf<T>(items: T[], round: number): T[] {
  const rotated = items.map((_, i) => items[(i + round) % items.length] as T);
  return round % 2 === 0 ? rotated : rotated.reverse();
}

async function redisPid(redis: Redis): Promise<number> {
  return Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1] ?? 0);
}

async function main(): Promise<void> {
  const started = performance.now();
  const redisServer = await startOwnRedis();
  let loadedServer: OwnRedis | undefined;
  const redis = new Redis(redisServer.url);
  const rsaKeys = await generateSigningKeys();
  const rp = await generateKeyPair('RSA-OAEP-256', { modulusLength: 2048, extractable: true });
  const encryptionJwk: JWK = { ...(await exportJWK(rp.publicKey)), use: 'enc', kid: 'bench-enc' };
  const cookieKey = randomBytes(32).toString('hex');
  const spec = async (redisUrl?: string, signingAlg: 'RS256' | 'ES256' = 'RS256'): Promise<ServerSpec> => ({
    port: await freePort(),
    jwks: rsaKeys,
    encryptionJwk,
    signingAlg,
    cookieKey,
    keyPrefix: 'bench:',
    ...(redisUrl ? { redisUrl } : {}),
  });
  const timing = { warmup: settings.warmup, seconds: settings.seconds, concurrency: settings.concurrency };
  const onRedis: Target = { redis, redisPid: await redisPid(redis) };

  try {
    const results: Record<string, Partial<Record<Kind, Measured>>> = {};
    for (const store of ['memory', 'redis'] as const) {
      const into = (results[store] = Object.fromEntries(KINDS.map((k) => [k, emptyMeasured()])) as Record<Kind, Measured>);
      for (let round = 0; round < settings.rounds; round += 1) {
        for (const kind of orderOf(KINDS, round)) {
          process.stderr.write(`bench: ${store} round ${round + 1}/${settings.rounds} ${kind}\n`);
          await measure(kind, await spec(store === 'redis' ? redisServer.url : undefined), store === 'redis' ? onRedis : {}, into[kind], timing);
        }
      }
    }
    const es = (results.es256 = { ours: emptyMeasured(), vanilla: emptyMeasured() });
    for (let round = 0; round < settings.es256Rounds; round += 1) {
      for (const kind of orderOf<'ours' | 'vanilla'>(['vanilla', 'ours'], round)) {
        process.stderr.write(`bench: es256 round ${round + 1}/${settings.es256Rounds} ${kind}\n`);
        await measure(kind, await spec(undefined, 'ES256'), {}, es[kind], timing);
      }
    }

    const rsaJwk = rsaKeys.keys.find((k) => k.kty === 'RSA') as JWK;
    const ecJwk = rsaKeys.keys.find((k) => k.kty === 'EC') as JWK;
    const throttle = await measureThrottle(redisServer.url, redis);
    const floorRs = await cryptoFloor(rsaJwk, 'RS256', encryptionJwk, quick ? 2 : 4);
    const floorEs = await cryptoFloor(ecJwk, 'ES256', encryptionJwk, quick ? 2 : 4);

    // Registration throughput with key vetting.
    const registration: Record<string, number> = {};
    const chain = makeCertificateChain();
    const dir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
    for (const [name, jwks] of [
      ['inline_jwks', { keys: [encryptionJwk] }],
      ['x5c', { keys: [{ ...chain.jwk, x5c: chain.x5c }] }],
    ] as const) {
      const iatFile = join(dir, `${name}.json`);
      const s = { ...(await spec()), iats: quick ? 3000 : 8000, iatFile };
      const server = await startServer('ours', s);
      try {
        const result = await runDriver({
          mode: 'register',
          discoveryUrl: `http://127.0.0.1:${s.port}/oidc/v1/.well-known/openid-configuration`,
          concurrency: 4,
          warmupSeconds: 0.5,
          seconds: quick ? 2 : 4,
          iatFile,
          registrationBody: { redirect_uris: ['https://rp.example/cb'], userinfo_encrypted_response_alg: 'RSA-OAEP-256', id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks },
          login: '',
          password: '',
          scope: '',
        });
        if (result.errors) throw new Error(`registration errors: ${result.firstError}`);
        registration[name] = result.flows / result.seconds;
      } finally {
        await stopServer(server);
      }
    }

    // Scale: an empty Redis and one holding many clients, sessions and grants, in alternating rounds.
    loadedServer = await startOwnRedis();
    const loadedRedis = new Redis(loadedServer.url);
    const loaded: Awaited<ReturnType<typeof preload>> & { keysAfter?: number } = await preload(loadedServer.url, 'bench:', settings.scaleCount);
    const scaleEmpty = emptyMeasured();
    const scaleFull = emptyMeasured();
    try {
      for (let round = 0; round < settings.scaleRounds; round += 1) {
        for (const which of orderOf(['empty', 'loaded'], round)) {
          process.stderr.write(`bench: scale round ${round + 1}/${settings.scaleRounds} ${which}\n`);
          if (which === 'empty') await measure('ours', await spec(redisServer.url), onRedis, scaleEmpty, timing);
          else await measure('ours', await spec(loadedServer.url), { redis: loadedRedis, flush: false }, scaleFull, timing);
        }
      }
      loaded.keysAfter = await loadedRedis.dbsize();
    } finally {
      loadedRedis.disconnect();
    }

    report({ settings, results, floorRs, floorEs, registration, throttle, scaleEmpty, scaleFull, loaded, totalSeconds: (performance.now() - started) / 1000 }, args);
  } finally {
    redis.disconnect();
    redisServer.dispose();
    loadedServer?.dispose();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

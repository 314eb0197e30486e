/**
 * `npm run bench [-- --out FILE] [-- --quick]`: svc-connect against vanilla oidc-provider under the
 * same driver, alternating A/B rounds on the embedded store and on Redis, the cryptographic floor,
 * ES256, registration throughput with key vetting, and a 100 000-record scale check. Prints a table
 * and rewrites the figures in docs/performance.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { Redis } from 'ioredis';

import { generateSigningKeys } from '../../lib/index.js';
import { freePort } from '../helpers/processes.js';
import { startOwnRedis } from '../helpers/redis.js';
import { makeCertificateChain } from '../helpers/registration.js';
import { percentile, type DriverResult, type ServerSpec } from './common.js';
import { cryptoFloor } from './floor.js';
import { preload } from './scale.js';

const { values: args } = parseArgs({ options: { out: { type: 'string' }, quick: { type: 'boolean' }, 'no-docs': { type: 'boolean' } } });
const quick = args.quick === true;
const SECONDS = quick ? 3 : 8;
const WARMUP = quick ? 1 : 2;
const ROUNDS = quick ? 1 : 2;
const CONCURRENCY = 8;
const SCALE_COUNT = quick ? 10_000 : 100_000;
const root = new URL('../..', import.meta.url).pathname;
const CLK_TCK = 100;

type Kind = 'ours' | 'baseline';

function startServer(kind: Kind, spec: ServerSpec): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `test/bench/server-${kind}.ts`], {
      cwd: root,
      env: { ...process.env, NODE_OPTIONS: '', BENCH_SERVER: JSON.stringify(spec) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`${kind} server exited ${code}: ${err.slice(-500)}`)));
  });
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.removeAllListeners('exit');
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(fields[11]) + Number(fields[12]);
}

function runDriver(spec: Record<string, unknown>): Promise<DriverResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/bench/driver.ts'], {
      cwd: root,
      env: { ...process.env, NODE_OPTIONS: '', BENCH_DRIVER: JSON.stringify(spec) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop() as string) as DriverResult) : reject(new Error(`driver exited ${code}`))));
  });
}

async function commandCalls(redis: Redis | undefined): Promise<number> {
  if (!redis) return 0;
  const info = await redis.info('commandstats');
  let total = 0;
  for (const m of info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)) if (m[1] !== 'info') total += Number(m[2]);
  return total;
}

interface Measured {
  flows: number;
  seconds: number;
  cpuMs: number;
  redisCalls: number;
  errors: number;
  latencies: Record<string, number[]>;
  firstError?: string;
}

const empty = (): Measured => ({ flows: 0, seconds: 0, cpuMs: 0, redisCalls: 0, errors: 0, latencies: {} });

async function measure(kind: Kind, spec: ServerSpec, redis: Redis | undefined, into: Measured, driverExtra: Record<string, unknown> = {}): Promise<void> {
  if (redis) await redis.flushall();
  const server = await startServer(kind, spec);
  try {
    const base = kind === 'ours' ? `http://127.0.0.1:${spec.port}/oidc/v1` : `http://127.0.0.1:${spec.port}`;
    const driver = {
      mode: 'flow',
      discoveryUrl: `${base}/.well-known/openid-configuration`,
      concurrency: CONCURRENCY,
      login: 'demo',
      password: 'demo',
      scope: 'openid profile email',
      ...driverExtra,
    };
    await runDriver({ ...driver, warmupSeconds: 0, seconds: WARMUP });
    const ticks = cpuTicks(server.pid as number);
    const calls = await commandCalls(redis);
    const result = await runDriver({ ...driver, warmupSeconds: 0, seconds: SECONDS });
    into.cpuMs += ((cpuTicks(server.pid as number) - ticks) * 1000) / CLK_TCK;
    into.redisCalls += (await commandCalls(redis)) - calls - 0;
    into.flows += result.flows;
    into.seconds += result.seconds;
    into.errors += result.errors;
    into.firstError ??= result.firstError;
    for (const [step, values] of Object.entries(result.latencies)) (into.latencies[step] ??= []).push(...values);
  } finally {
    await stopServer(server);
  }
}

const fmt = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const perSecond = (m: Measured): number => m.flows / m.seconds;

async function main(): Promise<void> {
  const started = performance.now();
  const redisServer = await startOwnRedis();
  const redis = new Redis(redisServer.url);
  const rsaKeys = await generateSigningKeys();
  const rp = await generateKeyPair('RSA-OAEP-256', { modulusLength: 2048, extractable: true });
  const encryptionJwk: JWK = { ...(await exportJWK(rp.publicKey)), use: 'enc', kid: 'bench-enc' };
  const cookieKey = randomBytes(32).toString('hex');
  const spec = async (store: 'memory' | 'redis', signingAlg: 'RS256' | 'ES256' = 'RS256'): Promise<ServerSpec> => ({
    port: await freePort(),
    jwks: rsaKeys,
    encryptionJwk,
    signingAlg,
    cookieKey,
    keyPrefix: 'bench:',
    ...(store === 'redis' ? { redisUrl: redisServer.url } : {}),
  });

  const results: Record<string, Record<Kind, Measured>> = {};
  try {
    // A/B rounds on each store, alternating the order so drift hits both.
    for (const store of ['memory', 'redis'] as const) {
      results[store] = { ours: empty(), baseline: empty() };
      for (let round = 0; round < ROUNDS; round += 1) {
        const order: Kind[] = round % 2 === 0 ? ['ours', 'baseline'] : ['baseline', 'ours'];
        for (const kind of order) await measure(kind, await spec(store), store === 'redis' ? redis : undefined, results[store][kind]);
      }
    }
    results.es256 = { ours: empty(), baseline: empty() };
    for (let round = 0; round < ROUNDS; round += 1) {
      const order: Kind[] = round % 2 === 0 ? ['baseline', 'ours'] : ['ours', 'baseline'];
      for (const kind of order) await measure(kind, await spec('memory', 'ES256'), undefined, results.es256[kind]);
    }

    const rsaJwk = rsaKeys.keys.find((k) => k.kty === 'RSA') as JWK;
    const ecJwk = rsaKeys.keys.find((k) => k.kty === 'EC') as JWK;
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
      const s = { ...(await spec('memory')), iats: quick ? 3000 : 8000, iatFile };
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

    // Scale: token and UserInfo latency on an empty Redis, then with many clients, sessions and grants.
    const scaleEmpty = empty();
    const scaleFull = empty();
    const scaleSpec = await spec('redis');
    await measure('ours', scaleSpec, redis, scaleEmpty);
    await redis.flushall();
    const loaded = await preload(redisServer.url, 'bench:', SCALE_COUNT);
    const server = await startServer('ours', scaleSpec);
    try {
      const driver = { mode: 'flow', discoveryUrl: `http://127.0.0.1:${scaleSpec.port}/oidc/v1/.well-known/openid-configuration`, concurrency: CONCURRENCY, login: 'demo', password: 'demo', scope: 'openid profile email' };
      await runDriver({ ...driver, warmupSeconds: 0, seconds: WARMUP });
      const r = await runDriver({ ...driver, warmupSeconds: 0, seconds: SECONDS });
      scaleFull.flows = r.flows;
      scaleFull.seconds = r.seconds;
      scaleFull.latencies = r.latencies;
    } finally {
      await stopServer(server);
    }

    report({ results, floorRs, floorEs, registration, scaleEmpty, scaleFull, loaded, totalSeconds: (performance.now() - started) / 1000 });
  } finally {
    redis.disconnect();
    redisServer.dispose();
  }
}

interface Report {
  results: Record<string, Record<Kind, Measured>>;
  floorRs: number;
  floorEs: number;
  registration: Record<string, number>;
  scaleEmpty: Measured;
  scaleFull: Measured;
  loaded: Awaited<ReturnType<typeof preload>>;
  totalSeconds: number;
}

const STEPS = ['authorize', 'interaction_page', 'login_submit', 'authorize_resume', 'consent_submit', 'token', 'userinfo'];

function report(r: Report): void {
  const cores = availableParallelism();
  const date = new Date().toISOString().slice(0, 10);
  const json: Record<string, unknown> = { date, cores, cpu: cpus()[0]?.model, concurrency: CONCURRENCY, seconds_per_round: SECONDS, rounds: ROUNDS, bench_seconds: Math.round(r.totalSeconds) };
  const lines: string[] = [];
  for (const [name, floor] of [
    ['memory', r.floorRs],
    ['redis', r.floorRs],
    ['es256', r.floorEs],
  ] as const) {
    const { ours, baseline } = r.results[name] as Record<Kind, Measured>;
    const entry = {
      ours_flows_per_s: perSecond(ours),
      baseline_flows_per_s: perSecond(baseline),
      ratio: perSecond(ours) / perSecond(baseline),
      redis_cmds_per_flow_ours: ours.redisCalls / ours.flows,
      redis_cmds_per_flow_baseline: baseline.redisCalls / baseline.flows,
      cpu_ms_per_flow_ours: ours.cpuMs / ours.flows,
      cpu_ms_per_flow_baseline: baseline.cpuMs / baseline.flows,
      floor_flows_per_s: floor,
      ours_to_floor_per_core: perSecond(ours) / cores / floor,
      errors: ours.errors + baseline.errors,
      latency_ms: Object.fromEntries(
        (['ours', 'baseline'] as const).map((k) => [
          k,
          Object.fromEntries(STEPS.map((s) => [s, { p50: percentile(r.results[name]?.[k].latencies[s] ?? [], 50), p99: percentile(r.results[name]?.[k].latencies[s] ?? [], 99) }])),
        ]),
      ),
    };
    json[name] = entry;
    lines.push(
      `| ${name === 'es256' ? 'memory, ES256' : `${name}, RS256`} | ${fmt(entry.ours_flows_per_s)} | ${fmt(entry.baseline_flows_per_s)} | **${fmt(entry.ratio, 2)}** | ${fmt(entry.cpu_ms_per_flow_ours)} / ${fmt(entry.cpu_ms_per_flow_baseline)} | ${name === 'redis' ? `${fmt(entry.redis_cmds_per_flow_ours)} / ${fmt(entry.redis_cmds_per_flow_baseline)}` : '–'} | ${fmt(floor)} | ${fmt(entry.ours_to_floor_per_core, 2)} |`,
    );
    if (entry.errors) process.stderr.write(`${name}: ${entry.errors} errors, first: ${ours.firstError ?? baseline.firstError}\n`);
  }
  const latencyRows = STEPS.map((s) => {
    const cell = (name: string, k: Kind): string => {
      const l = r.results[name]?.[k].latencies[s] ?? [];
      return `${fmt(percentile(l, 50))} / ${fmt(percentile(l, 99))}`;
    };
    return `| ${s} | ${cell('memory', 'ours')} | ${cell('memory', 'baseline')} | ${cell('redis', 'ours')} | ${cell('redis', 'baseline')} |`;
  });
  const scale = (m: Measured, step: string, p: number): number => percentile(m.latencies[step] ?? [], p);
  const scaleRows = ['token', 'userinfo'].map(
    (s) => `| ${s} | ${fmt(scale(r.scaleEmpty, s, 50))} / ${fmt(scale(r.scaleEmpty, s, 99))} | ${fmt(scale(r.scaleFull, s, 50))} / ${fmt(scale(r.scaleFull, s, 99))} | ${fmt(scale(r.scaleFull, s, 99) / scale(r.scaleEmpty, s, 99), 2)} |`,
  );
  json.registration_per_s = r.registration;
  json.scale = {
    records: SCALE_COUNT,
    token_p50_ms: [scale(r.scaleEmpty, 'token', 50), scale(r.scaleFull, 'token', 50)],
    token_p99_ms: [scale(r.scaleEmpty, 'token', 99), scale(r.scaleFull, 'token', 99)],
    userinfo_p50_ms: [scale(r.scaleEmpty, 'userinfo', 50), scale(r.scaleFull, 'userinfo', 50)],
    userinfo_p99_ms: [scale(r.scaleEmpty, 'userinfo', 99), scale(r.scaleFull, 'userinfo', 99)],
    bytes_per_client: r.loaded.bytesPerClient,
    bytes_per_session: r.loaded.bytesPerSession,
    bytes_per_grant: r.loaded.bytesPerGrant,
    preload_seconds: r.loaded.seconds,
  };

  const markdown = `Measured with \`npm run bench${quick ? ' -- --quick' : ''}\` on ${date}: ${cores} cores (${String(json.cpu)}), Node ${process.version}, Redis 7 (own instance),
${CONCURRENCY} concurrent flows, ${ROUNDS} alternating A/B round(s) of ${SECONDS} s per server and store after a ${WARMUP} s warm-up; the
whole run took ${Math.round(r.totalSeconds)} s. A flow is: authorization request with PKCE → login page → login → consent page
→ consent → code exchange → UserInfo, for a client with encrypted ID token and UserInfo (RSA-OAEP-256,
A128CBC-HS256). The baseline is vanilla oidc-provider with the same keys, client, encryption settings
and store adapter, its built-in dev interactions, and an account model returning the same claims.

| Store, signing | ours flows/s | baseline flows/s | ratio | CPU ms/flow (ours / baseline) | Redis cmds/flow (ours / baseline) | floor flows/s/core | ours ÷ cores ÷ floor |
|---|---|---|---|---|---|---|---|
${lines.join('\n')}

Latency per step, p50 / p99 in ms (RS256):

| Step | memory ours | memory baseline | redis ours | redis baseline |
|---|---|---|---|---|
${latencyRows.join('\n')}

Registration with key vetting (ours, embedded store, 4 concurrent): ${fmt(r.registration.inline_jwks ?? NaN)} registrations/s with an
inline JWKS, ${fmt(r.registration.x5c ?? NaN)}/s with an \`x5c\` chain.

Scale: ${SCALE_COUNT.toLocaleString('en')} clients, ${SCALE_COUNT.toLocaleString('en')} sessions and ${SCALE_COUNT.toLocaleString('en')} grants preloaded into Redis (${fmt(r.loaded.seconds)} s):

| Endpoint | empty p50 / p99 ms | loaded p50 / p99 ms | p99 loaded ÷ empty |
|---|---|---|---|
${scaleRows.join('\n')}

Memory per record (Redis \`used_memory\` delta): client ${r.loaded.bytesPerClient} B, session ${r.loaded.bytesPerSession} B, grant ${r.loaded.bytesPerGrant} B.`;

  process.stdout.write(`\n${markdown}\n`);
  if (args.out) writeFileSync(args.out, `${JSON.stringify(json, null, 2)}\n`);
  if (!args['no-docs']) {
    const path = join(root, 'docs/performance.md');
    const doc = readFileSync(path, 'utf8');
    const start = doc.indexOf('<!-- bench:start -->');
    const end = doc.indexOf('<!-- bench:end -->');
    if (start >= 0 && end > start) writeFileSync(path, `${doc.slice(0, start + '<!-- bench:start -->'.length)}\n${markdown}\n${doc.slice(end)}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

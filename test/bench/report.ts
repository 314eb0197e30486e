/**
 * The benchmark's output: a markdown report (printed, and written between the bench markers of
 * docs/performance.md), every figure as JSON (`--out`), and the drift of the headline figures from
 * an earlier JSON (`--compare`), to check that two runs agree.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join } from 'node:path';

import { percentile } from './common.js';
import { totalCalls, type Kind, type Measured } from './measure.js';
import type { PreloadResult } from './scale.js';
import type { ThrottleCost } from './throttle.js';

/** How the run was set up. */
export interface Settings {
  quick: boolean;
  seconds: number;
  warmup: number;
  rounds: number;
  es256Rounds: number;
  scaleRounds: number;
  concurrency: number;
  scaleCount: number;
}

/** Everything a run measured. */
export interface Report {
  settings: Settings;
  results: Record<string, Partial<Record<Kind, Measured>>>;
  floorRs: number;
  floorEs: number;
  registration: Record<string, number>;
  /** The sign-in throttle's share of a flow on Redis (one correct sign-in, no device cookie). */
  throttle: ThrottleCost;
  scaleEmpty: Measured;
  scaleFull: Measured;
  loaded: PreloadResult & { keysAfter?: number };
  totalSeconds: number;
}

const STEPS = ['authorize', 'interaction_page', 'login_submit', 'authorize_resume', 'consent_submit', 'token', 'userinfo'];
const root = new URL('../..', import.meta.url).pathname;
const fmt = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const perSecond = (m: Measured): number => m.flows / m.seconds;
const cpuPerFlow = (m: Measured): number => m.cpuMs / m.flows;
const callsPerFlow = (m: Measured): number => totalCalls(m) / m.flows;
const tripsPerFlow = (m: Measured): number => m.roundTrips / m.flows;
const p = (m: Measured | undefined, step: string, q: number): number => percentile(m?.latencies[step] ?? [], q);

/** The headline figures of one comparison. */
function compare(ours: Measured, vanilla: Measured, floor: number, cores: number, redis: boolean): Record<string, number> {
  return {
    ratio_cpu: cpuPerFlow(vanilla) / cpuPerFlow(ours),
    cpu_ms_per_flow_ours: cpuPerFlow(ours),
    cpu_ms_per_flow_vanilla: cpuPerFlow(vanilla),
    flows_per_s_ours: perSecond(ours),
    flows_per_s_vanilla: perSecond(vanilla),
    ratio_flows: perSecond(ours) / perSecond(vanilla),
    ...(redis
      ? {
          redis_cmds_per_flow_ours: callsPerFlow(ours),
          redis_cmds_per_flow_vanilla: callsPerFlow(vanilla),
          round_trips_per_flow_ours: tripsPerFlow(ours),
          round_trips_per_flow_vanilla: tripsPerFlow(vanilla),
          redis_cpu_ms_per_flow_ours: ours.redisCpuMs / ours.flows,
          redis_cpu_ms_per_flow_vanilla: vanilla.redisCpuMs / vanilla.flows,
        }
      : {}),
    floor_flows_per_s_per_core: floor,
    ours_to_floor_per_core: perSecond(ours) / cores / floor,
    crypto_share_of_ours_cpu: 1000 / floor / cpuPerFlow(ours),
    errors: ours.errors + vanilla.errors,
  };
}

function commandBreakdown(m: Measured): string {
  return Object.entries(m.redisCalls)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${fmt(n / m.flows)}`)
    .join(', ');
}

/** Prints the report, writes `--out` and the docs, and compares with `--compare`. */
export function report(r: Report, args: { out?: string; compare?: string; 'no-docs'?: boolean }): void {
  const s = r.settings;
  const cores = availableParallelism();
  const date = new Date().toISOString().slice(0, 10);
  const json: Record<string, unknown> = { date, cores, cpu: cpus()[0]?.model, load_average_at_end: loadavg()[0], settings: s, bench_seconds: Math.round(r.totalSeconds) };
  const rows: string[] = [];
  const lines: [string, string, Kind, number, boolean][] = [
    ['memory, RS256', 'memory', 'vanilla', r.floorRs, false],
    ['redis, RS256', 'redis', 'vanilla', r.floorRs, true],
    ['memory, ES256', 'es256', 'vanilla', r.floorEs, false],
    ['memory, RS256 — vanilla on our memory store', 'memory', 'vanilla-our-adapter', r.floorRs, false],
    ['redis, RS256 — vanilla on our Redis adapter', 'redis', 'vanilla-our-adapter', r.floorRs, true],
  ];
  for (const [label, name, against, floor, redis] of lines) {
    const ours = r.results[name]?.ours;
    const vanilla = r.results[name]?.[against];
    if (!ours || !vanilla) continue;
    const c = compare(ours, vanilla, floor, cores, redis);
    json[`${name}${against === 'vanilla' ? '' : '_vs_vanilla_on_our_adapter'}`] = c;
    if (c.errors) process.stderr.write(`${label}: ${c.errors} errors, first: ${ours.firstError ?? vanilla.firstError}\n`);
    rows.push(
      `| ${label} | ${fmt(c.cpu_ms_per_flow_ours ?? NaN, 2)} / ${fmt(c.cpu_ms_per_flow_vanilla ?? NaN, 2)} | **${fmt(c.ratio_cpu ?? NaN, 2)}** | ${fmt(c.flows_per_s_ours ?? NaN)} / ${fmt(c.flows_per_s_vanilla ?? NaN)} | ${
        redis ? `${fmt(c.redis_cmds_per_flow_ours ?? NaN)} / ${fmt(c.redis_cmds_per_flow_vanilla ?? NaN)}` : '–'
      } | ${redis ? `${fmt(c.round_trips_per_flow_ours ?? NaN)} / ${fmt(c.round_trips_per_flow_vanilla ?? NaN)}` : '–'} | ${redis ? `${fmt(c.redis_cpu_ms_per_flow_ours ?? NaN, 2)} / ${fmt(c.redis_cpu_ms_per_flow_vanilla ?? NaN, 2)}` : '–'} |`,
    );
  }
  const latencyRows = STEPS.map((step) => {
    const cell = (name: string, k: Kind): string => `${fmt(p(r.results[name]?.[k], step, 50))} / ${fmt(p(r.results[name]?.[k], step, 99))}`;
    return `| ${step} | ${cell('memory', 'ours')} | ${cell('memory', 'vanilla')} | ${cell('redis', 'ours')} | ${cell('redis', 'vanilla')} |`;
  });
  json.latency_ms = Object.fromEntries(
    ['memory', 'redis'].map((name) => [
      name,
      Object.fromEntries(kindsOf(r, name).map((k) => [k, Object.fromEntries(STEPS.map((step) => [step, { p50: p(r.results[name]?.[k], step, 50), p99: p(r.results[name]?.[k], step, 99) }]))])),
    ]),
  );
  const redisOurs = r.results.redis?.ours;
  const redisVanilla = r.results.redis?.vanilla;
  const redisOurAdapter = r.results.redis?.['vanilla-our-adapter'];
  json.redis_commands_per_flow = Object.fromEntries(
    (['ours', 'vanilla', 'vanilla-our-adapter'] as const).map((k) => {
      const m = r.results.redis?.[k];
      return [k, m ? Object.fromEntries(Object.entries(m.redisCalls).map(([n, v]) => [n, v / m.flows])) : {}];
    }),
  );
  const scaleSteps = ['token', 'userinfo'];
  const scaleRows = scaleSteps.map(
    (step) =>
      `| ${step} | ${fmt(p(r.scaleEmpty, step, 50))} / ${fmt(p(r.scaleEmpty, step, 99))} | ${fmt(p(r.scaleFull, step, 50))} / ${fmt(p(r.scaleFull, step, 99))} | ${fmt(p(r.scaleFull, step, 99) / p(r.scaleEmpty, step, 99), 2)} | ${r.scaleEmpty.latencies[step]?.length ?? 0} / ${r.scaleFull.latencies[step]?.length ?? 0} |`,
  );
  json.registration_per_s = r.registration;
  json.throttle_per_sign_in = r.throttle;
  json.scale = {
    records: s.scaleCount,
    keys_in_loaded_redis_at_end: r.loaded.keysAfter,
    ...Object.fromEntries(scaleSteps.flatMap((step) => [50, 99].map((q) => [`${step}_p${q}_ms`, [p(r.scaleEmpty, step, q), p(r.scaleFull, step, q)]]))),
    cpu_ms_per_flow: [cpuPerFlow(r.scaleEmpty), cpuPerFlow(r.scaleFull)],
    bytes_per_client: r.loaded.bytesPerClient,
    bytes_per_session: r.loaded.bytesPerSession,
    bytes_per_grant: r.loaded.bytesPerGrant,
    preload_seconds: r.loaded.seconds,
  };

  const markdown = `Measured with \`npm run bench${s.quick ? ' -- --quick' : ''}\` on ${date}: ${cores} cores (${String(json.cpu)}), Node ${process.version}, Redis 7 (own
instance), ${s.concurrency} concurrent flows from a driver in its own process; ${s.rounds} alternating rounds of ${s.seconds} s per server and
store after a ${s.warmup} s warm-up (ES256: ${s.es256Rounds}); the whole run took ${Math.round(r.totalSeconds)} s, load average ${fmt(loadavg()[0] ?? NaN, 2)} at the end. A flow:
authorization request with PKCE → login page → login → consent page → consent → code exchange →
UserInfo, for a static client with encrypted ID token and UserInfo (RSA-OAEP-256, A128CBC-HS256).
**vanilla** is oidc-provider 9 with the same keys, client, encryption, PKCE, contract-shaped login and
consent pages (same HTML) and an account model returning the same claims, on the store a user picks:
oidc-provider's built-in memory adapter, or on Redis the plain adapter of its published example (one
JSON string per record, MULTI/EXEC writes). CPU is the server process tree's (\`/proc/<pid>/stat\`).

| Store, signing | CPU ms/flow (ours / vanilla) | vanilla ÷ ours CPU | flows/s (ours / vanilla) | Redis cmds/flow (ours / vanilla) | round trips/flow (ours / vanilla) | Redis server CPU ms/flow (ours / vanilla) |
|---|---|---|---|---|---|---|
${rows.join('\n')}

Redis commands per flow (\`INFO commandstats\`, commands inside scripts and MULTI counted):
- ours: ${redisOurs ? commandBreakdown(redisOurs) : '–'}
- vanilla (plain adapter): ${redisVanilla ? commandBreakdown(redisVanilla) : '–'}
- vanilla on our adapter: ${redisOurAdapter ? commandBreakdown(redisOurAdapter) : '–'}
- of ours, the C8 sign-in throttle (one correct sign-in without a device cookie: two counters entered, then left): ${fmt(r.throttle.commands, 1)} commands in ${fmt(r.throttle.roundTrips, 1)} round trips

Latency per step, p50 / p99 in ms (RS256, ${s.concurrency} concurrent flows on ${cores} cores shared with the driver):

| Step | memory ours | memory vanilla | redis ours | redis vanilla |
|---|---|---|---|---|
${latencyRows.join('\n')}

Cryptographic floor (PKCE hash, ID token and UserInfo signed and encrypted, one core): ${fmt(r.floorRs)} flows/s with RS256
(${fmt(1000 / r.floorRs, 2)} ms), ${fmt(r.floorEs)} with ES256; ours runs at ${fmt(perSecond(r.results.memory?.ours as Measured) / cores / r.floorRs, 2)} of it per core on the embedded store, the
cryptography being ${fmt((100 * (1000 / r.floorRs)) / cpuPerFlow(r.results.memory?.ours as Measured), 0)} % of our CPU per flow.

Registration with key vetting (ours, embedded store, 4 concurrent): ${fmt(r.registration.inline_jwks ?? NaN)} registrations/s with an
inline JWKS, ${fmt(r.registration.x5c ?? NaN)}/s with an \`x5c\` chain.

Scale: an empty Redis against one preloaded with ${s.scaleCount.toLocaleString('en')} clients, ${s.scaleCount.toLocaleString('en')} sessions and ${s.scaleCount.toLocaleString('en')} grants (${fmt(r.loaded.seconds)} s),
ours, ${s.scaleRounds} alternating rounds each:

| Endpoint | empty p50 / p99 ms | loaded p50 / p99 ms | p99 loaded ÷ empty | samples (empty / loaded) |
|---|---|---|---|---|
${scaleRows.join('\n')}

Memory per record (Redis \`used_memory\` delta): client ${r.loaded.bytesPerClient} B, session ${r.loaded.bytesPerSession} B, grant ${r.loaded.bytesPerGrant} B.`;

  process.stdout.write(`\n${markdown}\n`);
  if (args.out) writeFileSync(args.out, `${JSON.stringify(json, null, 2)}\n`);
  if (args.compare && existsSync(args.compare)) process.stdout.write(`\n${drift(JSON.parse(readFileSync(args.compare, 'utf8')) as Record<string, unknown>, json)}\n`);
  if (!args['no-docs']) {
    const path = join(root, 'docs/performance.md');
    const doc = readFileSync(path, 'utf8');
    const start = doc.indexOf('<!-- bench:start -->');
    const end = doc.indexOf('<!-- bench:end -->');
    if (start >= 0 && end > start) writeFileSync(path, `${doc.slice(0, start + '<!-- bench:start -->'.length)}\n${markdown}\n${doc.slice(end)}`);
  }
}

function kindsOf(r: Report, name: string): Kind[] {
  return Object.keys(r.results[name] ?? {}) as Kind[];
}

/** The headline figures of two runs side by side, with their difference in percent. */
function drift(before: Record<string, unknown>, after: Record<string, unknown>): string {
  const out = ['| Figure | earlier run | this run | difference |', '|---|---|---|---|'];
  for (const section of ['memory', 'redis', 'es256', 'memory_vs_vanilla_on_our_adapter', 'redis_vs_vanilla_on_our_adapter']) {
    const a = before[section] as Record<string, number> | undefined;
    const b = after[section] as Record<string, number> | undefined;
    if (!a || !b) continue;
    for (const key of ['ratio_cpu', 'cpu_ms_per_flow_ours', 'cpu_ms_per_flow_vanilla', 'flows_per_s_ours', 'redis_cmds_per_flow_ours', 'round_trips_per_flow_ours']) {
      const x = a[key];
      const y = b[key];
      if (typeof x !== 'number' || typeof y !== 'number') continue;
      out.push(`| ${section} ${key} | ${fmt(x, 2)} | ${fmt(y, 2)} | ${fmt((100 * (y - x)) / x, 1)} % |`);
    }
  }
  return out.join('\n');
}

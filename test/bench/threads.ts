/**
 * `npm run bench:threads [-- rounds]`: where a flow's CPU goes by thread, ours against vanilla
 * oidc-provider on the embedded store (RS256), alternating rounds in one run. The server runs
 * without a profiler (a sampling profiler distorts what it measures); each thread's CPU is read from
 * `/proc/<pid>/task/<tid>/stat` before and after a measured round: the JavaScript main thread, the
 * libuv workers (asynchronous crypto: signing and encryption), the V8 workers (garbage collection).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

import { flowDriver, rs256ServerSpec } from './measure.js';

const root = new URL('../..', import.meta.url).pathname;
/** Kernel clock ticks per second (`getconf CLK_TCK`). */
const CLK_TCK = 100;

/** CPU ticks of a process by thread name (numbered threads of one kind summed). */
function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended between the listing and the read
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '').trim();
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(name, (out.get(name) ?? 0) + Number(fields[11]) + Number(fields[12]));
  }
  return out;
}

/** One round: CPU ms per flow by thread name. */
async function round(kind: 'ours' | 'vanilla'): Promise<Map<string, number>> {
  const spec = await rs256ServerSpec(kind === 'vanilla' ? { adapter: 'builtin' } : {});
  const server = spawn(process.execPath, ['--import', 'tsx', `test/bench/server-${kind}.ts`], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: '', BENCH_SERVER: JSON.stringify(spec) },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve) => server.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
  const warmupSeconds = 2;
  const driver = spawn(process.execPath, ['--import', 'tsx', 'test/bench/driver.ts'], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: '', BENCH_DRIVER: JSON.stringify({ ...flowDriver(kind, spec.port, 8), warmupSeconds, seconds: 10 }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  driver.stdout.on('data', (d: Buffer) => (out += d.toString()));
  // The driver measures after its warm-up: read the threads then (a little after, never before).
  await new Promise((resolve) => setTimeout(resolve, warmupSeconds * 1000));
  const before = threadTicks(server.pid as number);
  await new Promise((resolve) => driver.on('exit', resolve));
  const after = threadTicks(server.pid as number);
  server.kill('SIGTERM');
  const { flows } = JSON.parse(out.trim()) as { flows: number };
  return new Map([...after].map(([name, ticks]) => [name, ((ticks - (before.get(name) ?? 0)) * 1000) / CLK_TCK / flows]));
}

const rounds = Number(process.argv[2] ?? 3);
const sums = { ours: new Map<string, number>(), vanilla: new Map<string, number>() };
for (let i = 0; i < rounds; i += 1) {
  for (const kind of ['ours', 'vanilla'] as const) {
    for (const [name, ms] of await round(kind)) sums[kind].set(name, (sums[kind].get(name) ?? 0) + ms / rounds);
  }
}
const names = [...new Set([...sums.ours.keys(), ...sums.vanilla.keys()])].filter((n) => (sums.ours.get(n) ?? 0) + (sums.vanilla.get(n) ?? 0) >= 0.01);
process.stdout.write(`CPU ms per flow by thread, ${rounds} alternating round(s) of 10 s (embedded store, RS256):\n\n| thread | ours | vanilla | ours − vanilla |\n|---|---|---|---|\n`);
let [ours, vanilla] = [0, 0];
for (const name of names.sort((a, b) => (sums.ours.get(b) ?? 0) - (sums.ours.get(a) ?? 0))) {
  const [o, v] = [sums.ours.get(name) ?? 0, sums.vanilla.get(name) ?? 0];
  ours += o;
  vanilla += v;
  process.stdout.write(`| ${name} | ${o.toFixed(2)} | ${v.toFixed(2)} | ${(o - v).toFixed(2)} |\n`);
}
process.stdout.write(`| all | ${ours.toFixed(2)} | ${vanilla.toFixed(2)} | ${(ours - vanilla).toFixed(2)} |\n`);

/**
 * `npm run bench:profile [-- ours|vanilla] [-- redis]`: runs one bench server under `node --cpu-prof`
 * (vanilla: oidc-provider with the store a user picks) with the driver against it for 8 s, on the
 * embedded store or, with `redis`, on a Redis of its own, then prints where the CPU went per flow:
 * self time by package and by function, and inclusive time of the functions that own the most
 * (the middleware layers). `npm run bench:profile -- diff` compares the last `ours` and `vanilla`
 * profiles (same store) function by function, in ms per flow.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startOwnRedis } from '../helpers/redis.js';
import { flowDriver, rs256ServerSpec } from './measure.js';

interface Summary {
  kind: string;
  flows: number;
  /** ms of CPU (samples that were not idle) per flow. */
  busyMsPerFlow: number;
  self: Record<string, number>;
  inclusive: Record<string, number>;
}

const root = new URL('../..', import.meta.url).pathname;
const summaryFile = (kind: string): string => join(tmpdir(), `svc-profile-${kind}.json`);
const ms = (n: number): string => n.toFixed(3).padStart(7);

function diff(): void {
  const [ours, vanilla] = ['ours', 'vanilla'].map((k) => (existsSync(summaryFile(k)) ? (JSON.parse(readFileSync(summaryFile(k), 'utf8')) as Summary) : undefined));
  if (!ours || !vanilla) throw new Error('run `npm run bench:profile -- ours` and `-- vanilla` first');
  process.stdout.write(`busy CPU per flow: ours ${ours.busyMsPerFlow.toFixed(2)} ms, vanilla ${vanilla.busyMsPerFlow.toFixed(2)} ms\n\n`);
  for (const part of ['self', 'inclusive'] as const) {
    const keys = new Set([...Object.keys(ours[part]), ...Object.keys(vanilla[part])]);
    const rows = [...keys].map((k) => [k, (ours[part][k] ?? 0) - (vanilla[part][k] ?? 0), ours[part][k] ?? 0, vanilla[part][k] ?? 0] as const);
    rows.sort((a, b) => Math.abs(b[1]) - Math.abs(a[1]));
    process.stdout.write(`${part} time, ms per flow (ours − vanilla, ours, vanilla):\n`);
    for (const [k, d, o, v] of rows.slice(0, 40)) process.stdout.write(`${ms(d)} ${ms(o)} ${ms(v)}  ${k}\n`);
    process.stdout.write('\n');
  }
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

function summarize(kind: string, flows: number, profile: { nodes: Node[]; startTime: number; endTime: number }): Summary {
  const total = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0);
  const msPerHit = (profile.endTime - profile.startTime) / 1000 / total;
  const keyOf = (n: Node): string => {
    const url = n.callFrame.url.replace(/^file:\/\//, '').replace(root, '');
    const where = url.includes('node_modules/') ? url.slice(url.indexOf('node_modules/') + 13) : url || '(native)';
    return `${n.callFrame.functionName || '(anonymous)'} ${where}:${n.callFrame.lineNumber + 1}:${n.callFrame.columnNumber + 1}`;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self: Record<string, number> = {};
  const inclusive: Record<string, number> = {};
  let idle = 0;
  // Depth-first from the root, counting a function's inclusive time once per path (no recursion double count).
  const walk = (id: number, onPath: Set<string>): number => {
    const n = byId.get(id) as Node;
    const key = keyOf(n);
    if (key.startsWith('(idle)')) idle += n.hitCount ?? 0;
    let hits = n.hitCount ?? 0;
    self[key] = (self[key] ?? 0) + hits;
    const fresh = !onPath.has(key);
    if (fresh) onPath.add(key);
    for (const child of n.children ?? []) hits += walk(child, onPath);
    if (fresh) {
      onPath.delete(key);
      inclusive[key] = (inclusive[key] ?? 0) + hits;
    }
    return hits;
  };
  walk(profile.nodes[0]?.id as number, new Set());
  const perFlow = (m: Record<string, number>): Record<string, number> => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, (v * msPerHit) / flows]));
  return { kind, flows, busyMsPerFlow: ((total - idle) * msPerHit) / flows, self: perFlow(self), inclusive: perFlow(inclusive) };
}

async function profileOne(kind: 'ours' | 'vanilla', onRedis: boolean): Promise<void> {
  const ownRedis = onRedis ? await startOwnRedis() : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'svc-prof-'));
  const spec = await rs256ServerSpec({
    ...(ownRedis ? { redisUrl: ownRedis.url } : {}),
    ...(kind === 'vanilla' ? { adapter: 'builtin' as const } : {}),
  });
  const server = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, '--import', 'tsx', `test/bench/server-${kind}.ts`], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: '', BENCH_SERVER: JSON.stringify(spec) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => server.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
  const driver = spawn(process.execPath, ['--import', 'tsx', 'test/bench/driver.ts'], {
    cwd: root,
    env: { ...process.env, NODE_OPTIONS: '', BENCH_DRIVER: JSON.stringify({ ...flowDriver(kind, spec.port, 8), warmupSeconds: 1, seconds: 8 }) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let driverOut = '';
  driver.stdout.on('data', (d: Buffer) => (driverOut += d.toString()));
  await new Promise((resolve) => driver.on('exit', resolve));
  const driven = JSON.parse(driverOut.trim()) as { flows: number; errors: number; seconds: number };
  process.stdout.write(`${kind}: ${driven.flows} flows in ${driven.seconds.toFixed(1)} s (${(driven.flows / driven.seconds).toFixed(1)}/s), ${driven.errors} errors\n`);
  server.kill('SIGTERM');
  await new Promise((resolve) => server.on('exit', resolve));
  ownRedis?.dispose();

  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile')) as string;
  // The warm-up second's flows are in the profile too (the driver counts only the measured ones).
  const flows = Math.round(driven.flows * ((driven.seconds + 1) / driven.seconds));
  const summary = summarize(kind, flows, JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: Node[]; startTime: number; endTime: number });
  writeFileSync(summaryFile(kind), JSON.stringify(summary));
  const byPackage = new Map<string, number>();
  for (const [k, v] of Object.entries(summary.self)) {
    const where = k.split(' ')[1] ?? '';
    const pkg = where.split('/').slice(0, where.startsWith('@') ? 2 : 1).join('/').split(':')[0] as string;
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + v);
  }
  const top = (m: Iterable<[string, number]>, n: number): string =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${ms(v)}  ${k}`)
      .join('\n');
  const own = Object.entries(summary.self).filter(([k]) => / (lib|adapters|policies|examples)\/|pino|koa-compose|koa-mount|@koa\/router|prom-client/.test(k));
  process.stdout.write(
    `\n${kind}: busy CPU ${summary.busyMsPerFlow.toFixed(2)} ms per flow\n\nself time by package, ms per flow\n${top(byPackage, 15)}\n\nself time by function\n${top(Object.entries(summary.self), 30)}\n\ninclusive time by function\n${top(Object.entries(summary.inclusive), 40)}\n\nin svc-connect's own code and its extra packages (self)\n${top(own, 25)}\n`,
  );
}

const args = process.argv.slice(2);
if (args.includes('diff')) diff();
else await profileOne(args.includes('vanilla') || args.includes('baseline') ? 'vanilla' : 'ours', args.includes('redis'));

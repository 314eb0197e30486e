/**
 * One measured round of the benchmark: start a bench server in its own process, warm it up with the
 * driver (another process), then run the driver for the measured seconds while reading the server
 * process tree's CPU time from /proc, Redis `INFO commandstats` deltas, the Redis server's own CPU
 * time, and the round trips the server's Redis client sent (over IPC).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

import { exportJWK, generateKeyPair } from 'jose';

import type { Redis } from 'ioredis';

import { generateSigningKeys } from '../../lib/provider/keys.js';
import { freePort } from '../helpers/processes.js';

import type { DriverResult, ServerSpec } from './common.js';
import type { RoundTrips } from './round-trips.js';

const root = new URL('../..', import.meta.url).pathname;
/** Kernel clock ticks per second (`getconf CLK_TCK`, 100 on Linux). */
const CLK_TCK = 100;

/** What is measured: svc-connect, vanilla oidc-provider with the store a user picks, or vanilla on our adapter. */
export type Kind = 'ours' | 'vanilla' | 'vanilla-our-adapter';

/** Sums of a kind's measured rounds. */
export interface Measured {
  flows: number;
  seconds: number;
  /** CPU of the server process tree. */
  cpuMs: number;
  /** CPU of the Redis server. */
  redisCpuMs: number;
  /** `INFO commandstats` calls by command (commands inside scripts and MULTI included). */
  redisCalls: Record<string, number>;
  /** What the server's Redis client sent. */
  roundTrips: number;
  clientCommands: number;
  errors: number;
  latencies: Record<string, number[]>;
  firstError?: string;
  rounds: number;
}

export const emptyMeasured = (): Measured => ({ flows: 0, seconds: 0, cpuMs: 0, redisCpuMs: 0, redisCalls: {}, roundTrips: 0, clientCommands: 0, errors: 0, latencies: {}, rounds: 0 });

/** Total Redis commands of a measurement (INFO excluded). */
export const totalCalls = (m: Measured): number => Object.values(m.redisCalls).reduce((a, b) => a + b, 0);

function serverScript(kind: Kind): string {
  return kind === 'ours' ? 'test/bench/server-ours.ts' : 'test/bench/server-vanilla.ts';
}

/** Starts a bench server; resolves once it listens. */
export function startServer(kind: Kind, spec: ServerSpec): Promise<ChildProcess> {
  const full: ServerSpec = kind === 'ours' ? spec : { ...spec, adapter: kind === 'vanilla' ? 'builtin' : 'ours' };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', serverScript(kind)], {
      cwd: root,
      env: { ...process.env, NODE_OPTIONS: '', BENCH_SERVER: JSON.stringify(full) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let err = '';
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout?.on('data', (d: Buffer) => {
      if (d.toString().includes('ready')) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`${kind} server exited ${code}: ${err.slice(-500)}`)));
  });
}

/** Stops a bench server (SIGTERM, then SIGKILL after 3 s). */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.removeAllListeners('exit');
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  });
}

function ticksOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0; // the process is gone
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone
  }
  return out;
}

/** utime + stime of a process and all its descendants, in ms (the driver is not among them). */
export function treeCpuMs(pid: number): number {
  let ticks = 0;
  const queue = [pid];
  while (queue.length) {
    const p = queue.pop() as number;
    ticks += ticksOf(p);
    queue.push(...childrenOf(p));
  }
  return (ticks * 1000) / CLK_TCK;
}

/** Runs the load driver in its own process. */
export function runDriver(spec: Record<string, unknown>): Promise<DriverResult> {
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

async function commandStats(redis: Redis | undefined): Promise<Record<string, number>> {
  if (!redis) return {};
  const info = await redis.info('commandstats');
  const out: Record<string, number> = {};
  for (const m of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)) if (m[1] !== 'info') out[m[1] as string] = Number(m[2]);
  return out;
}

function askStats(child: ChildProcess): Promise<RoundTrips> {
  return new Promise((resolve) => {
    child.once('message', (message) => resolve(message as RoundTrips));
    child.send({ stats: true });
  });
}

/** Where a measured round points its driver and store. */
export interface Target {
  redis?: Redis;
  /** pid of the Redis server (for its CPU time). */
  redisPid?: number;
  /** Flush the Redis before starting the server. */
  flush?: boolean;
}

/** The flow driver's settings for a server at `spec.port`. */
export function flowDriver(kind: Kind, port: number, concurrency: number): Record<string, unknown> {
  const base = kind === 'ours' ? `http://127.0.0.1:${port}/oidc/v1` : `http://127.0.0.1:${port}`;
  return { mode: 'flow', discoveryUrl: `${base}/.well-known/openid-configuration`, concurrency, login: 'demo', password: 'demo', scope: 'openid profile email' };
}

/** The spec of one bench server for the RS256 flow: fresh keys, a free port, the RP's encryption key. */
export async function rs256ServerSpec(extra: Partial<ServerSpec> = {}): Promise<ServerSpec> {
  const rp = await generateKeyPair('RSA-OAEP-256', { modulusLength: 2048 });
  return {
    port: await freePort(),
    jwks: await generateSigningKeys(),
    encryptionJwk: { ...(await exportJWK(rp.publicKey)), use: 'enc', kid: 'bench-enc' },
    signingAlg: 'RS256',
    cookieKey: randomBytes(32).toString('hex'),
    keyPrefix: 'bench:',
    ...extra,
  };
}

/** One measured round, added to `into`. */
export async function measure(kind: Kind, spec: ServerSpec, target: Target, into: Measured, timing: { warmup: number; seconds: number; concurrency: number }): Promise<void> {
  if (target.redis && target.flush !== false) await target.redis.flushall();
  const server = await startServer(kind, spec);
  try {
    const driver = flowDriver(kind, spec.port, timing.concurrency);
    await runDriver({ ...driver, warmupSeconds: 0, seconds: timing.warmup });
    const pid = server.pid as number;
    const cpu = treeCpuMs(pid);
    const redisCpu = target.redisPid ? treeCpuMs(target.redisPid) : 0;
    const calls = await commandStats(target.redis);
    const trips = await askStats(server);
    const result = await runDriver({ ...driver, warmupSeconds: 0, seconds: timing.seconds });
    into.cpuMs += treeCpuMs(pid) - cpu;
    into.redisCpuMs += target.redisPid ? treeCpuMs(target.redisPid) - redisCpu : 0;
    const after = await commandStats(target.redis);
    for (const [name, n] of Object.entries(after)) {
      const delta = n - (calls[name] ?? 0);
      if (delta > 0) into.redisCalls[name] = (into.redisCalls[name] ?? 0) + delta;
    }
    const tripsAfter = await askStats(server);
    into.roundTrips += tripsAfter.roundTrips - trips.roundTrips;
    into.clientCommands += tripsAfter.commands - trips.commands;
    into.flows += result.flows;
    into.seconds += result.seconds;
    into.errors += result.errors;
    into.rounds += 1;
    into.firstError ??= result.firstError;
    for (const [step, values] of Object.entries(result.latencies)) (into.latencies[step] ??= []).push(...values);
  } finally {
    await stopServer(server);
  }
}

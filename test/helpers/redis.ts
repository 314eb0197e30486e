import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';

import { Redis } from 'ioredis';

import { freePort } from './processes.js';
import { startRelay, type RedisRelay } from './redis-relay.js';

/**
 * The test run's own Redis, started by Jest's global setup (test/redis-setup.js); the benchmarks,
 * which run outside Jest, use the one at 127.0.0.1:6379.
 */
export const SHARED_REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other test uses. */
export function testPrefix(label: string): string {
  return `svc-test:${label}:${randomUUID().slice(0, 8)}:`;
}

/** Deletes every key under `prefix` (and nothing else) on a standalone Redis. */
export async function deletePrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A redis-server of the test's own, on a free loopback port. */
export interface OwnRedis {
  port: number;
  url: string;
  /** With `tls`: the PEM of the test authority that issued its certificate. */
  ca?: string;
  stop(): void;
  start(): void;
  dispose(): void;
}

function waitForPing(port: number, auth: string[] = []): void {
  for (let i = 0; i < 100; i += 1) {
    const r = spawnSync('redis-cli', ['-p', String(port), ...auth, 'ping'], { encoding: 'utf8' });
    if (r.stdout.trim() === 'PONG') return;
    spawnSync('sleep', ['0.05']);
  }
  throw new Error(`redis-server on ${port} did not answer`);
}

function launch(port: number, dir: string, extra: string[] = [], auth: string[] = []): void {
  execFileSync('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'yes',
    '--dir', dir, '--logfile', join(dir, `redis-${port}.log`), ...extra,
  ]);
  waitForPing(port, auth);
}

/** Options of {@link startOwnRedis}. */
export interface OwnRedisOptions {
  /** `requirepass`: every client must sign in with it (`url` does not carry it). */
  password?: string;
  /** More redis-server arguments (`--rename-command SET ""` for a server that refuses a command). */
  extra?: string[];
  /** Listen only over TLS, with a certificate for 127.0.0.1 from {@link OwnRedis.ca}'s test authority. */
  tls?: boolean;
}

/** A certificate authority of the test's own and a certificate it issued for 127.0.0.1, in `dir`. */
function issueServerCertificate(dir: string): { args: string[]; cli: string[] } {
  const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=svc-test-redis-ca', '-days', '1');
  openssl('req', ...ec, '-keyout', 'node.key', '-out', 'node.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'san.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', 'node.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'node.pem', '-days', '1', '-extfile', 'san.cnf');
  const files = ['--tls-cert-file', join(dir, 'node.pem'), '--tls-key-file', join(dir, 'node.key'), '--tls-ca-cert-file', join(dir, 'ca.pem')];
  return { args: [...files, '--tls-auth-clients', 'no'], cli: ['--tls', '--cacert', join(dir, 'ca.pem')] };
}

/** Starts a standalone redis-server (Debian's) on a free port. */
export async function startOwnRedis(options: OwnRedisOptions = {}): Promise<OwnRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const tls = options.tls ? issueServerCertificate(dir) : undefined;
  const auth = [...(options.password ? ['-a', options.password, '--no-auth-warning'] : []), ...(tls?.cli ?? [])];
  const extra = [
    ...(options.password ? ['--requirepass', options.password] : []),
    ...(tls ? ['--port', '0', '--tls-port', String(port), ...tls.args] : []),
    ...(options.extra ?? []),
  ];
  const shutdown = (): void => {
    spawnSync('redis-cli', ['-p', String(port), ...auth, 'shutdown', 'nosave']);
  };
  launch(port, dir, extra, auth);
  return {
    port,
    url: `${tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    ...(tls ? { ca: readFileSync(join(dir, 'ca.pem'), 'utf8') } : {}),
    stop: shutdown,
    start: () => launch(port, dir, extra, auth),
    dispose: () => {
      shutdown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A 3-master Redis Cluster on free loopback ports (with `replicas`, one replica of each master after them). */
export interface OwnCluster {
  nodes: { host: string; port: number }[];
  /** With `tls`: the PEM of the test authority that issued the nodes' certificate. */
  ca?: string;
  /** With `relayed`: the relay in front of each node, which `nodes` and the Cluster's own answers name. */
  relays?: RedisRelay[];
  /** Shuts one node down (0–2 the masters as created, 3–5 their replicas with `replicas`). */
  stopNode(index: number): void;
  /** The node `index`'s role as the other nodes see it now: `master`, `slave`, or `fail` when they count it failed. */
  roleOf(index: number): string;
  startNode(index: number): void;
  /** Each node's own view, for a failure message: `port state known-nodes flags`. */
  describe(): string[];
  dispose(): void;
}

/**
 * Starts a 3-master cluster with `redis-cli --cluster create` (~3 s); with `password`, every node requires it; with
 * `tls`, nodes and their bus speak only TLS.
 */
export async function startOwnCluster(options: Pick<OwnRedisOptions, 'password' | 'tls'> & { relayed?: boolean; replicas?: boolean } = {}): Promise<OwnCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cluster-'));
  const tls = options.tls ? issueServerCertificate(dir) : undefined;
  const auth = [...(options.password ? ['-a', options.password, '--no-auth-warning'] : []), ...(tls?.cli ?? [])];
  const count = options.replicas ? 6 : 3;
  const ports: number[] = [];
  // Each node's bus port is free too: the default (its port + 10 000) may be another process's.
  const busPorts: number[] = [];
  for (let i = 0; i < count; i += 1) {
    ports.push(await freePort());
    busPorts.push(await freePort());
  }
  // Relayed: each node announces its relay's port, so clients reach it through the relay only.
  const relays = options.relayed ? await Promise.all(ports.map((port) => startRelay(port))) : undefined;
  const nodeArgs = (i: number): string[] => [
    ...(relays ? ['--cluster-announce-port', String(relays[i]?.port), '--cluster-announce-bus-port', String(busPorts[i])] : []),
    '--cluster-enabled', 'yes', '--cluster-port', String(busPorts[i]), '--cluster-config-file', join(dir, `nodes-${ports[i]}.conf`), '--cluster-node-timeout', '2000',
    ...(options.password ? ['--requirepass', options.password, '--masterauth', options.password] : []),
    ...(tls ? ['--port', '0', '--tls-port', String(ports[i]), '--tls-cluster', 'yes', ...tls.args] : []),
  ];
  ports.forEach((port, i) => launch(port, dir, nodeArgs(i), auth));
  // Not blocking the event loop: redis-cli reaches the nodes by what they announce, the relays of this process.
  await promisify(execFile)('redis-cli', [...auth, '--cluster', 'create', ...ports.slice(0, 3).map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
  const clusterNodes = (port: number): string => spawnSync('redis-cli', ['-p', String(port), ...auth, 'cluster', 'nodes'], { encoding: 'utf8' }).stdout;
  const idOf = (port: number): string => clusterNodes(port).split('\n').find((line) => line.includes('myself'))?.split(' ')[0] ?? '';
  // Each replica joins and follows its master (redis-cli --cluster-replicas would pair them as it likes).
  for (let i = 3; i < count; i += 1) {
    await promisify(execFile)('redis-cli', [...auth, '--cluster', 'add-node', `127.0.0.1:${ports[i]}`, `127.0.0.1:${ports[0]}`, '--cluster-slave', '--cluster-master-id', idOf(ports[i - 3] as number)]);
  }
  for (let i = 0; i < 200; i += 1) {
    const info = ports.map((p) => spawnSync('redis-cli', ['-p', String(p), ...auth, 'cluster', 'info'], { encoding: 'utf8' }).stdout);
    const synced = ports.slice(3).every((p) => /master_link_status:up/.test(spawnSync('redis-cli', ['-p', String(p), ...auth, 'info', 'replication'], { encoding: 'utf8' }).stdout));
    if (info.every((text) => text.includes('cluster_state:ok')) && synced) break;
    spawnSync('sleep', ['0.1']);
  }
  const ids = ports.map(idOf);
  return {
    nodes: (relays?.map((r) => r.port) ?? ports).map((port) => ({ host: '127.0.0.1', port })),
    ...(tls ? { ca: readFileSync(join(dir, 'ca.pem'), 'utf8') } : {}),
    ...(relays ? { relays } : {}),
    stopNode: (i) => {
      spawnSync('redis-cli', ['-p', String(ports[i]), ...auth, 'shutdown', 'nosave']);
    },
    startNode: (i) => launch(ports[i] as number, dir, nodeArgs(i), auth),
    roleOf: (i) => {
      const id = ids[i];
      const seen = ports.filter((_, j) => j !== i).map(clusterNodes).find((text) => text.includes('myself'));
      const flags = seen?.split('\n').find((line) => id && line.startsWith(id))?.split(' ')[2] ?? '';
      return flags.includes('fail') && !flags.includes('fail?') ? 'fail' : flags.includes('master') ? 'master' : flags.includes('slave') ? 'slave' : 'unknown';
    },
    describe: () =>
      ports.map((p) => {
        const info = spawnSync('redis-cli', ['-p', String(p), ...auth, 'cluster', 'info'], { encoding: 'utf8' }).stdout;
        const nodes = spawnSync('redis-cli', ['-p', String(p), ...auth, 'cluster', 'nodes'], { encoding: 'utf8' }).stdout;
        const state = /cluster_state:(\w+)/.exec(info)?.[1] ?? 'unreachable';
        const flags = nodes.split('\n').filter(Boolean).map((line) => line.split(' ').slice(1, 3).join(' '));
        return `${p} ${state} ${flags.join(' | ')}`;
      }),
    dispose: () => {
      for (const p of ports) spawnSync('redis-cli', ['-p', String(p), ...auth, 'shutdown', 'nosave']);
      for (const relay of relays ?? []) {
        relay.drop();
        relay.close();
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The bytes a stored key holds: a record's string (header and payload JSON), or for a hash (an
 * attempt counter) its field names and values; `undefined` for index keys (sets, sorted sets).
 */
export async function recordBytes(redis: Redis, key: string): Promise<number | undefined> {
  const type = await redis.type(key);
  if (type === 'string') return Buffer.byteLength((await redis.get(key)) ?? '');
  if (type !== 'hash') return undefined;
  return Object.entries(await redis.hgetall(key)).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
}

/** Every key under `prefix` on a standalone Redis with its value(s) as JSON text. */
export async function dumpPrefix(url: string, prefix: string): Promise<Map<string, string>> {
  const redis = new Redis(url);
  const out = new Map<string, string>();
  try {
    for (const key of await redis.keys(`${prefix}*`)) {
      const type = await redis.type(key);
      const value = type === 'hash' ? await redis.hgetall(key) : type === 'set' ? await redis.smembers(key) : type === 'zset' ? await redis.zrange(key, '0', '-1') : await redis.get(key);
      out.set(key, JSON.stringify(value));
    }
  } finally {
    redis.disconnect();
  }
  return out;
}

/**
 * The Redis operation timeout test stores use: generous, so a busy machine does not fail a test
 * (the production default of 800 ms is for failing fast while Redis is away; the fault suites set
 * it back explicitly).
 */
export const TEST_STORE_TIMEOUT_MS = 10_000;

/**
 * `npx tsx test/bench/trace.ts [ours|vanilla]`: one flow against a bench server on a Redis of its
 * own, printing every Redis command (MONITOR) grouped by the HTTP step that caused it. A
 * development aid for finding store work per request.
 */
import { spawn } from 'node:child_process';

import { Redis } from 'ioredis';

import { startOwnRedis } from '../helpers/redis.js';
import { flowDriver, rs256ServerSpec, startServer, stopServer } from './measure.js';

const kind = process.argv.includes('vanilla') ? 'vanilla' : 'ours';
const redisServer = await startOwnRedis();
const spec = await rs256ServerSpec({ redisUrl: redisServer.url });
const server = await startServer(kind, spec);
const admin = new Redis(redisServer.url);
const monitor = await admin.monitor();
const lines: string[] = [];
monitor.on('monitor', (_time: string, args: string[], source: string) => {
  if (args[0]?.toLowerCase() === 'echo') return void lines.push(`${args[1]}`);
  lines.push(`${source.includes('lua') ? '    (lua) ' : '  '}${args.map((a) => (a.length > 40 ? `${a.slice(0, 37)}…` : a)).join(' ')}`);
});
const driver = spawn(process.execPath, ['--import', 'tsx', 'test/bench/driver.ts'], {
  cwd: new URL('../..', import.meta.url).pathname,
  env: { ...process.env, NODE_OPTIONS: '', BENCH_DRIVER: JSON.stringify({ ...flowDriver(kind, spec.port, 1), warmupSeconds: 0, seconds: 0.001, traceRedis: redisServer.url }) },
  stdio: ['ignore', 'ignore', 'inherit'],
});
await new Promise((resolve) => driver.on('exit', resolve));
await new Promise((resolve) => setTimeout(resolve, 300));
process.stdout.write(`${lines.join('\n')}\n`);
monitor.disconnect();
admin.disconnect();
await stopServer(server);
redisServer.dispose();

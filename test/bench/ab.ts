/**
 * `npm run bench:ab -- [--store memory] [--rounds N] [--seconds S] TREE...`: svc-connect's flow (the bench's, RS256) in
 * alternating rounds of one run for each checkout TREE (a worktree of another commit, its node_modules linked), each
 * with its own bench code, on one Redis of its own (or the embedded store): server CPU, Redis commands by name (`INFO
 * commandstats`), commands and round trips the server's client sent, and Redis CPU, per flow. No vanilla, no docs.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { Redis } from 'ioredis';

import { startOwnRedis } from '../helpers/redis.js';
import type * as Measure from './measure.js';

const { values: args, positionals } = parseArgs({
  options: { store: { type: 'string', default: 'redis' }, rounds: { type: 'string', default: '4' }, seconds: { type: 'string', default: '8' } },
  allowPositionals: true,
});
const trees = positionals.map((tree) => resolve(tree));
if (trees.length === 0) throw new Error('name the checkouts to compare');
const onRedis = args.store !== 'memory';
const modules = (await Promise.all(trees.map((tree) => import(`${tree}/test/bench/measure.ts`)))) as (typeof Measure)[];
const results = modules.map((m) => m.emptyMeasured());
const redisServer = await startOwnRedis();
const redis = new Redis(redisServer.url);
try {
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1] ?? 0);
  for (let round = 0; round < Number(args.rounds); round += 1) {
    // Rotated and, every other round, reversed (as `npm run bench` orders its rounds): each checkout runs in each place.
    const order = trees.map((_, i) => (i + round) % trees.length);
    for (const i of round % 2 ? order.reverse() : order) {
      process.stderr.write(`bench:ab round ${round + 1}/${args.rounds} ${trees[i]}\n`);
      const m = modules[i] as typeof Measure;
      const spec = await m.rs256ServerSpec(onRedis ? { redisUrl: redisServer.url } : {});
      await m.measure('ours', spec, onRedis ? { redis, redisPid } : {}, results[i] as Measure.Measured, { warmup: 2, seconds: Number(args.seconds), concurrency: 8 });
    }
  }
  for (const [i, m] of results.entries()) {
    const per = (n: number): string => (n / m.flows).toFixed(2);
    const calls = Object.entries(m.redisCalls).sort((a, b) => b[1] - a[1]);
    process.stdout.write(`${trees[i]}: ${m.flows} flows in ${m.rounds} rounds, ${m.errors} errors, ${(m.flows / m.seconds).toFixed(1)} flows/s\n`);
    process.stdout.write(`  per flow: server CPU ${per(m.cpuMs)} ms, Redis CPU ${per(m.redisCpuMs)} ms, commands ${per(calls.reduce((a, [, n]) => a + n, 0))} (sent ${per(m.clientCommands)}), round trips ${per(m.roundTrips)}\n`);
    if (calls.length) process.stdout.write(`  ${calls.map(([name, n]) => `${name} ${per(n)}`).join(', ')}\n`);
  }
} finally {
  redis.disconnect();
  redisServer.dispose();
}

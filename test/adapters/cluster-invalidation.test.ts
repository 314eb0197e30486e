import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { refOf } from '../../adapters/inventory.js';
import { createRedisStore } from '../../adapters/redis.js';
import { startOwnCluster, testPrefix, TEST_STORE_TIMEOUT_MS, type OwnCluster } from '../helpers/redis.js';

/**
 * On a Redis Cluster a cached record's invalidation must reach every process's subscriber before
 * the write is answered. The write's own PUBLISH runs on the node of the record's slot and reaches
 * the subscribers' node (the first seed) through the cluster bus only afterwards, so the store
 * publishes once more there. MONITOR on the seed node shows only what was sent to it: a record of
 * another node's slot appears there only through that second publish.
 */
let cluster: OwnCluster;
let monitor: Awaited<ReturnType<Redis['monitor']>>;
let secondMonitor: Awaited<ReturnType<Redis['monitor']>>;
let admin: Redis;
let secondAdmin: Redis;
/** What the first seed node (and, below, the second) was sent, lower-cased. */
const seen: string[][] = [];
const seenOnSecond: string[][] = [];

beforeAll(async () => {
  cluster = await startOwnCluster();
  admin = new Redis(cluster.nodes[0]?.port as number, '127.0.0.1');
  secondAdmin = new Redis(cluster.nodes[1]?.port as number, '127.0.0.1');
  monitor = await admin.monitor();
  secondMonitor = await secondAdmin.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => seen.push(args.map((a) => a.toLowerCase())));
  secondMonitor.on('monitor', (_time: string, args: string[]) => seenOnSecond.push(args.map((a) => a.toLowerCase())));
}, 30_000);
afterAll(() => {
  monitor?.disconnect();
  secondMonitor?.disconnect();
  admin?.disconnect();
  secondAdmin?.disconnect();
  cluster?.dispose();
});

const until = async (check: () => boolean): Promise<void> => {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
};

it('publishes every client invalidation on the subscribers\' node, also for records of other nodes\' slots', async () => {
  const prefix = testPrefix('cluster-inval');
  const store = createRedisStore({ clusterNodes: cluster.nodes, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
  try {
    const channel = `${prefix}invalidate`.toLowerCase();
    // The cache serves (and the store publishes near it) once its subscriber is subscribed there.
    await until(() => seen.some((args) => args[0] === 'subscribe' && args[1] === channel));
    // Which slots the seed node owns: at least one record must live elsewhere for this to prove anything.
    const myself = (await admin.call('CLUSTER', 'NODES') as string).split('\n').find((line) => line.includes('myself')) ?? '';
    const ranges = myself.split(' ').slice(8).map((r) => r.split('-').map(Number));
    const onSeed = async (key: string): Promise<boolean> => {
      const slot = Number(await admin.call('CLUSTER', 'KEYSLOT', key));
      return ranges.some(([lo = -1, hi = lo]) => slot >= lo && slot <= hi);
    };
    const ids = Array.from({ length: 8 }, (_v, i) => `client-${i}-${refOf(prefix).slice(0, 6)}`);
    const names = ids.map((id) => `Client:${refOf(id)}`);
    expect((await Promise.all(names.map((name) => onSeed(`${prefix}${name}`)))).includes(false)).toBe(true);
    for (const id of ids) await store.adapter('Client').upsert(id, { client_id: id });
    // MONITOR lines arrive on their own connection: wait for them (a store that does not publish
    // on the seed fails by the test timeout).
    const published = (): Set<string> => new Set(seen.filter((args) => args[0] === 'publish' && args[1] === channel).map((args) => args[2] ?? ''));
    await until(() => names.every((name) => published().has(name.toLowerCase())));
    expect(names.filter((name) => !published().has(name.toLowerCase()))).toEqual([]);
  } finally {
    await store.close();
  }
}, 30_000);

// Each process subscribes on the first node of its own seed list (each zone may list its local node first): a write
// publishes on every node, so a reader seeded elsewhere drops it before the write is answered.
it("publishes every client write on the other process's subscriber node too", async () => {
  const prefix = testPrefix('seed-order');
  const [n0, n1, n2] = cluster.nodes as [{ host: string; port: number }, { host: string; port: number }, { host: string; port: number }];
  const writer = createRedisStore({ clusterNodes: [n0, n1, n2], keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
  const reader = createRedisStore({ clusterNodes: [n1, n0, n2], keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
  try {
    const channel = `${prefix}invalidate`.toLowerCase();
    await until(() => seenOnSecond.some((args) => args[0] === 'subscribe' && args[1] === channel));
    const ids = Array.from({ length: 8 }, (_v, i) => `client-${i}-${refOf(prefix).slice(0, 6)}`);
    const names = ids.map((id) => `client:${refOf(id)}`.toLowerCase());
    for (const id of ids) await writer.adapter('Client').upsert(id, { client_id: id });
    const published = (): Set<string> => new Set(seenOnSecond.filter((args) => args[0] === 'publish' && args[1] === channel).map((args) => args[2] ?? ''));
    // MONITOR shows commands sent to the node, not messages the bus brought: a store that does not publish
    // there fails by the test timeout.
    await until(() => names.every((name) => published().has(name)));
    expect(names.filter((name) => !published().has(name))).toEqual([]);
  } finally {
    await Promise.all([writer.close(), reader.close()]);
  }
}, 30_000);

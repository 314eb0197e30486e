import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { createRedisStore } from '../../adapters/redis.js';
import { loadSettings } from '../../lib/index.js';
import { startOwnCluster, startOwnRedis, testPrefix, TEST_STORE_TIMEOUT_MS, type OwnCluster, type OwnRedis } from '../helpers/redis.js';

/** The nodes listen only over TLS (no plain port): whatever a store gets done there went over TLS. */
describe('Redis over TLS: a Cluster named by rediss:// seeds, a standalone rediss:// URL', () => {
  let cluster: OwnCluster;
  let standalone: OwnRedis;
  beforeAll(async () => {
    [cluster, standalone] = await Promise.all([startOwnCluster({ tls: true }), startOwnRedis({ tls: true })]);
  }, 60_000);
  afterAll(() => {
    cluster?.dispose();
    standalone?.dispose();
  });

  /**
   * What a store that never gets a connection logs (`store_unavailable`): a standalone store the TLS fault; a Cluster only
   * that every seed failed (ioredis drops the node's TLS error), which its honest twin above tells apart.
   */
  const tlsFault = async (options: Parameters<typeof createRedisStore>[0]): Promise<unknown> => {
    const lines: Record<string, unknown>[] = [];
    const keep = (event: string, fields?: Record<string, unknown>): void => void (event === 'store_unavailable' && lines.push(fields ?? {}));
    const store = createRedisStore({ ...options, keyPrefix: testPrefix('tls-refused'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS, logger: { info: keep, warn: keep, error: keep } });
    try {
      while (lines.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
      return options.clusterNodes ? lines[0]?.name : lines[0]?.cause_code;
    } finally {
      await store.close();
    }
  };

  it('honest: a Cluster named by rediss:// seeds (svc.redis.cluster-nodes) keeps, finds and consumes once over TLS, and a client changed through one process is seen at once by another (its invalidation travels over TLS too)', async () => {
    const { clusterNodes } = loadSettings({ env: { SVC_REDIS_CLUSTER_NODES: cluster.nodes.map((n) => `rediss://${n.host}:${n.port}`).join(',') } }).redis;
    const prefix = testPrefix('tls-cluster');
    const open = (): ReturnType<typeof createRedisStore> => createRedisStore({ clusterNodes, tls: { ca: cluster.ca }, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    const [a, b] = [open(), open()];
    const seed = new Redis({ host: '127.0.0.1', port: cluster.nodes[0]?.port, tls: { ca: cluster.ca } });
    try {
      await a.ping();
      for (let i = 0; i < 12; i += 1) await a.adapter('AuthorizationCode').upsert(`code-${i}`, { grantId: `grant-${i}`, accountId: 'her' }, 60);
      expect(await b.adapter('AuthorizationCode').find('code-7')).toMatchObject({ accountId: 'her' });
      const consumed = await Promise.allSettled([a.adapter('AuthorizationCode').consume('code-3'), b.adapter('AuthorizationCode').consume('code-3')]);
      expect(consumed.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      // Both processes' cache subscribers are on the first seed, over TLS.
      for (let subscribers = 0; subscribers < 2; ) subscribers = Number(((await seed.call('PUBSUB', 'NUMSUB', `${prefix}invalidate`)) as [string, number])[1]);
      await a.adapter('Client').upsert('rp', { client_id: 'rp', client_name: 'Before' });
      expect(await b.adapter('Client').find('rp')).toMatchObject({ client_name: 'Before' });
      await a.adapter('Client').upsert('rp', { client_id: 'rp', client_name: 'After' });
      expect(await b.adapter('Client').find('rp')).toMatchObject({ client_name: 'After' });
    } finally {
      await a.close();
      await b.close();
      seed.disconnect();
    }
  }, 30_000);

  it('honest: a standalone rediss:// URL with the authority given in code keeps and finds records', async () => {
    const store = createRedisStore({ url: standalone.url, tls: { ca: standalone.ca }, keyPrefix: testPrefix('tls-standalone'), operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
    try {
      await store.ping();
      await store.adapter('Session').upsert('s', { uid: 'u', accountId: 'her' }, 60);
      expect(await store.adapter('Session').findByUid('u')).toMatchObject({ accountId: 'her' });
    } finally {
      await store.close();
    }
  });

  it('attack: a node whose certificate no trusted authority issued (a man in the middle) gets no connection, a Cluster and a standalone alike', async () => {
    const nodes = cluster.nodes.map((n) => ({ ...n, tls: true }));
    expect(await tlsFault({ clusterNodes: nodes })).toBe('ClusterAllFailedError');
    expect(await tlsFault({ url: standalone.url })).toBe('SELF_SIGNED_CERT_IN_CHAIN');
  });

  it('attack: a certificate from the trusted authority for another name (the seed named localhost, the certificate for 127.0.0.1) gets no connection', async () => {
    expect(await tlsFault({ clusterNodes: cluster.nodes.map((n) => ({ host: 'localhost', port: n.port, tls: true })), tls: { ca: cluster.ca } })).toBe('ClusterAllFailedError');
    expect(await tlsFault({ url: standalone.url.replace('127.0.0.1', 'localhost'), tls: { ca: standalone.ca } })).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });
});

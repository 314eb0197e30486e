import { afterAll, beforeAll, describe } from '@jest/globals';

import { deletePrefix, SHARED_REDIS_URL, startOwnCluster, testPrefix, type OwnCluster } from './redis.js';

/** The stores a feature suite runs against. */
export type StoreKind = 'memory' | 'redis standalone' | 'redis cluster';

/**
 * Runs `body` once per store of `kinds`: the embedded memory store, the shared standalone Redis
 * (own key prefix, cleaned afterwards) or a 3-master Cluster started for this file. `properties()`
 * gives the svc.* properties selecting the store (call it inside hooks or tests; on a Cluster each
 * call draws a new key prefix). Feature suites run on the memory store alone; this is for the
 * whole-flow files, test/e2e/flows-redis.test.ts and flows-cluster.test.ts.
 */
export function describeEachStore(
  title: string,
  body: (kind: StoreKind, properties: () => Record<string, string>) => void,
  kinds: StoreKind[] = ['memory', 'redis standalone', 'redis cluster'],
): void {
  if (kinds.includes('memory')) describe(`${title} [memory]`, () => body('memory', () => ({})));

  if (kinds.includes('redis standalone')) describe(`${title} [redis standalone]`, () => {
    const prefix = testPrefix('suite');
    afterAll(async () => deletePrefix(SHARED_REDIS_URL, prefix));
    body('redis standalone', () => ({ 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix }));
  });

  if (kinds.includes('redis cluster')) describe(`${title} [redis cluster]`, () => {
    let cluster: OwnCluster | undefined;
    beforeAll(async () => {
      cluster = await startOwnCluster();
    }, 30_000);
    afterAll(() => cluster?.dispose());
    body('redis cluster', () => {
      if (!cluster) throw new Error('cluster not started');
      return { 'svc.redis.cluster-nodes': cluster.nodes.map((n) => `${n.host}:${n.port}`).join(','), 'svc.redis.key-prefix': testPrefix('suite') };
    });
  });
}

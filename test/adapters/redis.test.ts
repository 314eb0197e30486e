import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createRedisStore } from '../../adapters/redis.js';
import { deletePrefix, SHARED_REDIS_URL, startOwnCluster, testPrefix, type OwnCluster } from '../helpers/redis.js';
import { describeAdapterContract } from './contract.js';

const standalonePrefix = testPrefix('contract');
afterAll(async () => deletePrefix(SHARED_REDIS_URL, standalonePrefix));

describeAdapterContract('redis standalone', async () => createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: standalonePrefix }));

let cluster: OwnCluster;
beforeAll(async () => {
  cluster = await startOwnCluster();
}, 30_000);
afterAll(() => cluster?.dispose());

describeAdapterContract('redis cluster (3 masters)', async () => createRedisStore({ clusterNodes: cluster.nodes, keyPrefix: testPrefix('cluster') }));

describe('redis store key layout', () => {
  it('keeps ids out of keys and payloads: keys hold a SHA-256 of the id, jti is restored on find', async () => {
    const prefix = testPrefix('layout');
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix });
    try {
      const token = 'secret-access-token-value-1234567890';
      await store.adapter('AccessToken').upsert(token, { jti: token, grantId: 'g1', kind: 'AccessToken' }, 60);
      const keys = await store.client.keys(`${prefix}*`);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key).not.toContain(token);
        const type = await store.client.type(key);
        const dump = type === 'hash' ? JSON.stringify(await store.client.hgetall(key)) : type === 'set' ? JSON.stringify(await store.client.smembers(key)) : String(await store.client.get(key));
        expect(dump).not.toContain(token);
      }
      expect((await store.adapter('AccessToken').find(token))?.jti).toBe(token);
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await store.close();
    }
  });

  it('expires a grant index with its longest-lived member', async () => {
    const prefix = testPrefix('index-ttl');
    const store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix });
    try {
      await store.adapter('AuthorizationCode').upsert('code-1', { grantId: 'grant-x' }, 30);
      await store.adapter('AccessToken').upsert('at-1', { grantId: 'grant-x' }, 300);
      await store.adapter('AuthorizationCode').upsert('code-2', { grantId: 'grant-x' }, 10);
      const [indexKey] = await store.client.keys(`${prefix}grant:*`);
      const ttl = await store.client.ttl(indexKey as string);
      expect(ttl).toBeGreaterThan(290);
      expect(ttl).toBeLessThanOrEqual(300);
    } finally {
      await deletePrefix(SHARED_REDIS_URL, prefix);
      await store.close();
    }
  });
});

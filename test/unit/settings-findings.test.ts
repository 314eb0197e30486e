import { describe, expect, it } from '@jest/globals';

import { loadSettings } from '../../lib/index.js';
import { captureError } from '../helpers/settings-errors.js';

describe('svc.redis.cluster-nodes: honest seed nodes the host rule must keep accepting', () => {
  it('a fully qualified host name with its trailing dot (as Kubernetes and resolv.conf search lists use it)', () => {
    const settings = loadSettings({ env: { SVC_REDIS_CLUSTER_NODES: 'redis-0.redis.default.svc.cluster.local.:6379,redis-1.internal.:6380' } });
    expect(settings.redis.clusterNodes).toEqual([
      { host: 'redis-0.redis.default.svc.cluster.local.', port: 6379 },
      { host: 'redis-1.internal.', port: 6380 },
    ]);
  });

  it('a link-local IPv6 address with its zone, bracketed or bare', () => {
    const settings = loadSettings({ env: { SVC_REDIS_CLUSTER_NODES: '[fe80::7%eth0]:7000,fe80::8%eth0:7001' } });
    expect(settings.redis.clusterNodes).toEqual([
      { host: 'fe80::7%eth0', port: 7000 },
      { host: 'fe80::8%eth0', port: 7001 },
    ]);
  });

  it('still refuses a URL, a lone dot and a host with two dots at its end', () => {
    for (const raw of ['redis://:hunter2@redis.internal.:6379', '.:6379', 'redis..:6379', '[fe80::7%]:7000']) {
      const err = captureError(() => loadSettings({ env: { SVC_REDIS_CLUSTER_NODES: raw } }));
      expect(err.properties).toEqual(['svc.redis.cluster-nodes']);
      expect(err.message).not.toContain('hunter2');
    }
  });
});

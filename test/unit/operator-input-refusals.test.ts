import { describe, expect, it } from '@jest/globals';

import { loadSettings } from '../../lib/index.js';
import { validateProviderKeys } from '../../lib/provider/keys.js';
import { testProviderKeys } from '../helpers/provider-keys.js';
import { captureError, scratchFiles } from '../helpers/settings-errors.js';

const file = scratchFiles('svc-operator-input-');

describe('a malformed JSON configuration file', () => {
  const SECRET = 'Tr0ub4dor-and-3-horses';

  it('is refused without repeating any part of a secret value written next to the fault', () => {
    const path = file('unquoted.json', `{\n  "svc.port": 3000,\n  "svc.management.password": ${SECRET},\n  "svc.base-url": "https://id.example.com"\n}\n`);
    const err = captureError(() => loadSettings({ env: {}, file: path }));
    expect(err.properties).toEqual(['SVC_CONFIG']);
    expect(err.message).toContain(path);
    expect(err.message).not.toMatch(/Tr0u|ub4d|dor-/);
  });

  it('still says where the fault is, by line and column', () => {
    const path = file('trailing.json', '{\n  "svc.port": 3000,\n}\n');
    const err = captureError(() => loadSettings({ env: {}, file: path }));
    expect(err.message).toMatch(/line 3, column 1/);
    expect(err.message).not.toContain('position');
  });
});

describe('svc.base-url', () => {
  it.each(['https://id.example.com/#', 'https://id.example.com/?', 'https://id.example.com/path?#'])('refuses %s: an empty query or fragment would end up inside the issuer', (raw) => {
    const err = captureError(() => loadSettings({ env: { SVC_BASE_URL: raw } }));
    expect(err.properties).toEqual(['svc.base-url']);
  });

  it.each([
    ['https://ID.Example.com/', 'https://id.example.com'],
    ['https://id.example.com/auth/', 'https://id.example.com/auth'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
  ])('keeps accepting %s', (raw, expected) => {
    expect(loadSettings({ env: { SVC_BASE_URL: raw } }).baseUrl).toBe(expected);
  });
});

describe('svc.redis.cluster-nodes', () => {
  it('honest: takes redis:// seed URLs carrying the user name and password every node is reached with, and rediss:// ones for TLS', () => {
    const settings = loadSettings({ env: { SVC_REDIS_CLUSTER_NODES: 'redis://svc:hunter2%2Ccluster@node-1:7000, redis://svc:hunter2%2Ccluster@node-2' } });
    expect(settings.redis.clusterNodes).toEqual([
      { host: 'node-1', port: 7000, username: 'svc', password: 'hunter2,cluster' },
      { host: 'node-2', port: 6379, username: 'svc', password: 'hunter2,cluster' },
    ]);
    expect(loadSettings({ env: { SVC_REDIS_CLUSTER_NODES: 'rediss://svc:pw@node-1:7000,rediss://svc:pw@node-2:7000' } }).redis.clusterNodes).toEqual([
      { host: 'node-1', port: 7000, username: 'svc', password: 'pw', tls: true },
      { host: 'node-2', port: 7000, username: 'svc', password: 'pw', tls: true },
    ]);
  });

  it.each([
    ['a node reached without the password the others carry', 'node-1:6379,redis://default:hunter2-cluster@node-2:6379'],
    ['two passwords', 'redis://:hunter2-cluster@node-1:6379,redis://:hunter2-other@node-2:6379'],
    ['a database number, which a Cluster does not have', 'redis://:hunter2-cluster@node-1:6379/1'],
    ['one node over TLS and another in clear', 'rediss://:hunter2-cluster@node-1:6379,redis://:hunter2-cluster@node-2:6379'],
    ['one node over TLS and another as host:port', 'rediss://node-1:6379,node-2:6379'],
    ['another scheme', 'http://:hunter2-cluster@node-1:6379'],
    ['a password that is not percent-encoding', 'redis://:hunter2-cluster%zz@node-1:6379'],
  ])('refuses %s without repeating a password', (_case, raw) => {
    const err = captureError(() => loadSettings({ env: { SVC_REDIS_CLUSTER_NODES: raw } }));
    expect(err.properties).toEqual(['svc.redis.cluster-nodes']);
    expect(err.message).toMatch(/item #\d/);
    expect(err.message).not.toContain('hunter2');
  });

  it('refuses a host with a space', () => {
    expect(captureError(() => loadSettings({ env: { SVC_REDIS_CLUSTER_NODES: 'redis one:6379' } })).properties).toEqual(['svc.redis.cluster-nodes']);
  });

  it('keeps accepting host names, IPv4 and bracketed IPv6 seed nodes', () => {
    const settings = loadSettings({ env: { SVC_REDIS_CLUSTER_NODES: 'redis-0.redis.svc.cluster.local:7000, 10.0.0.7:7001,[fd00::7]:7002' } });
    expect(settings.redis.clusterNodes).toEqual([
      { host: 'redis-0.redis.svc.cluster.local', port: 7000 },
      { host: '10.0.0.7', port: 7001 },
      { host: 'fd00::7', port: 7002 },
    ]);
  });

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

  it('still refuses a lone dot and a host with two dots at its end, also in a URL', () => {
    for (const raw of ['redis://:hunter2@redis..:6379', '.:6379', 'redis..:6379', '[fe80::7%]:7000']) {
      const err = captureError(() => loadSettings({ env: { SVC_REDIS_CLUSTER_NODES: raw } }));
      expect(err.properties).toEqual(['svc.redis.cluster-nodes']);
      expect(err.message).not.toContain('hunter2');
    }
  });
});

describe('svc.keys.file kids', () => {
  it('refuses a kid that is not a string, naming svc.keys.file (oidc-provider would stop the start naming none of ours)', async () => {
    const { keys } = await testProviderKeys();
    const jwks = { keys: keys.map((key, i) => (i === 0 ? { ...key, kid: 1 as unknown as string } : key)) };
    const err = captureError(() => validateProviderKeys(jwks, 'keys.json'));
    expect(err.properties).toEqual(['svc.keys.file']);
    expect(err.message).toContain('key #1');
  });

  it('keeps accepting the generated keys', async () => {
    expect(validateProviderKeys(await testProviderKeys(), 'keys.json').keys).toHaveLength(4);
  });
});

import { describe, expect, it } from '@jest/globals';

import { createStore, loadSettings } from '../../lib/index.js';

describe('createStore', () => {
  it('refuses the whole Settings object (its former argument) instead of quietly giving a process-local memory store for a Redis configuration', async () => {
    const settings = loadSettings({ env: {}, properties: { 'svc.redis.url': 'redis://127.0.0.1:1/0' } });
    let store: { close(): Promise<void> } | undefined;
    let failure: unknown;
    try {
      // A JavaScript embedder written against the former signature, createStore(settings, logger).
      store = createStore(settings as never);
    } catch (err) {
      failure = err;
    }
    await store?.close();
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure as Error).message).toMatch(/settings\.redis/);
  });

  it('gives the memory store for a slice without url or clusterNodes', async () => {
    const store = createStore(loadSettings({ env: {} }).redis);
    expect(store.inventory).toBeDefined();
    await store.close();
  });
});

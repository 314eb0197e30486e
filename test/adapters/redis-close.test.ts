import { AsyncLocalStorage, createHook } from 'node:async_hooks';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { setImmediate as checkTurn, setTimeout as timerTurn } from 'node:timers/promises';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createRedisStore } from '../../adapters/redis.js';
import { freePort } from '../helpers/processes.js';
import { deletePrefix, SHARED_REDIS_URL, testPrefix, TEST_STORE_TIMEOUT_MS } from '../helpers/redis.js';

/**
 * The timers and sockets made by `run` (in its asynchronous context) that still hold the process open after it: Jest's
 * own come and go beside it, so a count of `process.getActiveResourcesInfo()` would not tell. ioredis drops a connection on a timer of
 * `disconnectTimeout` ms made during `close()`: one zero-delay timer after `run` has let it run (Node runs timers of one
 * delay in the order they were made), and one check turn has delivered the destroy hooks of what ended.
 */
async function outliving(run: () => Promise<void>): Promise<string[]> {
  const alive = new Map<number, { type: string; resource: { hasRef?: () => boolean } }>();
  const scope = new AsyncLocalStorage<true>();
  const hook = createHook({
    init: (id, type, _trigger, resource: { hasRef?: () => boolean }) => void ((type === 'Timeout' || type === 'TCPWRAP') && scope.getStore() && alive.set(id, { type, resource })),
    destroy: (id) => void alive.delete(id),
  }).enable();
  try {
    await scope.run(true, run);
    await timerTurn(0);
    await checkTurn();
  } finally {
    hook.disable();
  }
  return [...alive.values()].filter(({ resource }) => resource.hasRef?.() !== false).map(({ type }) => type);
}

describe('redis store close: leaves nothing holding the process while Redis is away or silent (a CLI check exits when done)', () => {
  let silent: Server;
  const accepted = new Set<Socket>();
  beforeAll(async () => {
    // Takes connections and never answers nor closes them: a hung Redis.
    silent = createServer({ allowHalfOpen: true }, (socket) => {
      accepted.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of accepted) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('Redis away (closed between reconnects): no timer and no socket outlive close()', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const left = await outliving(async () => {
      const store = createRedisStore({ url, keyPrefix: 'svc-test:close-away:' });
      await new Promise((resolve) => store.client.once('reconnecting', resolve));
      await store.close();
    });
    expect(left).toEqual([]);
  });

  it('Redis silent (connected, never ready): the connection ends and no timer outlives close()', async () => {
    const port = (silent.address() as { port: number }).port;
    const store = createRedisStore({ url: `redis://127.0.0.1:${port}`, keyPrefix: 'svc-test:close-silent:' });
    const left = await outliving(async () => {
      await once(store.client, 'connect');
      await store.close();
    });
    expect(left).toEqual([]);
    if (store.client.status !== 'end') await once(store.client, 'end');
  });

  it('Cluster seeds away: no timer and no socket outlive close()', async () => {
    const port = await freePort();
    const left = await outliving(async () => {
      const store = createRedisStore({ clusterNodes: [{ host: '127.0.0.1', port }], keyPrefix: 'svc-test:close-cluster:' });
      await new Promise((resolve) => store.client.once('error', resolve));
      await store.close();
    });
    expect(left).toEqual([]);
  });
});

describe('redis store close: what was sent before it still lands and is answered', () => {
  const prefix = testPrefix('close-in-flight');
  const open = () => createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
  afterAll(async () => deletePrefix(SHARED_REDIS_URL, prefix));

  it('a consume sent just before close() resolves, and Redis holds it (QUIT follows it on the connection)', async () => {
    const before = open();
    await before.adapter('AuthorizationCode').upsert('code-1', { jti: 'code-1', kind: 'AuthorizationCode' }, 60);
    const consumed = before.adapter('AuthorizationCode').consume('code-1');
    await expect(Promise.all([consumed, before.close()])).resolves.toEqual([undefined, undefined]);
    const after = open();
    try {
      await expect(after.adapter('AuthorizationCode').consume('code-1')).rejects.toMatchObject({ name: 'AlreadyConsumedError' });
    } finally {
      await after.close();
    }
  });

  // A write or a counter failure first asks the masters' INFO memory: close() waits for the operations under way.
  it('a write and a counter failure issued just before close() resolve, and Redis holds them', async () => {
    const rule = { limit: 5, windowSeconds: 60, coolDownSeconds: 60, maxCoolDownSeconds: 60 };
    const before = open();
    const written = before.adapter('Session').upsert('session-1', { jti: 'session-1', kind: 'Session' }, 60);
    const failed = before.attempts.fail('login:someone', rule);
    await expect(Promise.all([written, failed, before.close()])).resolves.toEqual([undefined, 0, undefined]);
    const after = open();
    try {
      expect(await after.adapter('Session').find('session-1')).toMatchObject({ jti: 'session-1' });
    } finally {
      await after.close();
    }
  });

  // A batch is a whole request (storeBatch wraps `next`): close() waits for the store's own commands, not for a request
  // still reading a slow client's body, and not for the batch it is itself called in (which would wait for it forever).
  it('close() called inside a batch settles, and so does the batch', async () => {
    const store = open();
    const batch = store.batch?.bind(store);
    if (!batch) throw new Error('a Redis store batches');
    const inside = batch(async () => {
      await store.adapter('Session').find('session-none');
      await store.close();
      return 'closed';
    });
    await expect(inside).resolves.toBe('closed');
  });

  it('close() settles while a batch still waits on something outside the store (a client sending its body)', async () => {
    const store = open();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const batch = store.batch?.bind(store);
    if (!batch) throw new Error('a Redis store batches');
    const request = batch(async () => {
      await store.adapter('Session').upsert('session-held', { jti: 'session-held', kind: 'Session' }, 60);
      await held;
    });
    await store.close();
    release();
    await expect(request).rejects.toMatchObject({ name: 'StoreUnavailableError' });
  });
});

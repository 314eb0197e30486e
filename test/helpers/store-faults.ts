import { Redis } from 'ioredis';

import { createMemoryStore } from '../../adapters/memory.js';
import { refOf } from '../../adapters/inventory.js';
import { createRedisStore } from '../../adapters/redis.js';
import { attemptCounterKey } from '../../adapters/redis-attempt-keys.js';
import { decorateAdapter, type SvcStore } from '../../adapters/store.js';
import { StoreUnavailableError } from '../../lib/errors.js';
import { startOwnRedis, testPrefix, TEST_STORE_TIMEOUT_MS, type OwnRedis } from './redis.js';
import { withAdapter } from './store-with-adapter.js';

/**
 * Partial store faults on demand, as in a Redis Cluster with one master away: the keys of one
 * request live in different slots, so some of its writes land and others fail.
 */
export interface StoreFaults {
  readonly kind: 'redis (ACL)' | 'memory (injected)';
  /** The store to run the app on. */
  readonly store: SvcStore;
  /**
   * Every write to a registration access token fails (also its deletion and consumption), except
   * to the record of the token value `except`; reads work. Initial access tokens and clients are
   * written as usual.
   */
  failRegistrationTokenWrites(except?: string): Promise<void>;
  /**
   * Deleting a single-use token's key fails (a whole-record rewrite deletes it first, so it fails
   * too); writing one field of it works.
   */
  failTokenDeletes(): Promise<void>;
  /**
   * Every attempt counter fails (reserving, giving back, resetting) except those named in `except`
   * (counter names as the store gets them, e.g. `login-name:…`).
   */
  failAttemptCounters(except?: string[]): Promise<void>;
  /** The store is healthy again. */
  heal(): Promise<void>;
  /** How many client records the store holds. */
  storedClients(): Promise<number>;
  /** Stops what the faults need (the app that runs on {@link StoreFaults.store} closes the store). */
  dispose(): Promise<void>;
}

const TOKEN_MODELS = ['InitialAccessToken', 'RegistrationAccessToken'];

/**
 * A real redis-server of the test's own; the app connects as an ACL user whose key permissions
 * are narrowed to produce the faults (commands inside Lua scripts are checked too).
 */
export async function redisAclFaults(): Promise<StoreFaults> {
  const server: OwnRedis = await startOwnRedis();
  const admin = new Redis(server.url);
  const prefix = testPrefix('faults');
  const user = 'svc-app';
  const password = 'fault-test-password';
  const acl = (...rules: string[]): Promise<unknown> => admin.call('ACL', 'SETUSER', user, ...rules);
  const healthy = (): Promise<unknown> => acl('on', `>${password}`, 'clearselectors', '+@all', 'resetkeys', '~*', '&*');
  await healthy();
  const store = createRedisStore({ url: `redis://${user}:${password}@127.0.0.1:${server.port}`, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
  const writable = ['Client', 'InitialAccessToken', 'Interaction', 'Session', 'Grant', 'attempts', 'attempt-rank', 'attempt-expiry', 'attempt-floor'].map((m) => `~${prefix}${m}:*`);
  return {
    kind: 'redis (ACL)',
    store,
    failRegistrationTokenWrites: async (except) => {
      await acl('resetkeys', '%R~*', ...writable, ...(except ? [`~${prefix}RegistrationAccessToken:${refOf(except)}`] : []));
    },
    failTokenDeletes: async () => {
      const others = writable.filter((k) => !TOKEN_MODELS.some((m) => k.includes(`${m}:`)));
      await acl('-del', `(+del ${others.join(' ')})`);
    },
    failAttemptCounters: async (except = []) => {
      const others = writable.filter((k) => !k.includes('attempts:'));
      await acl('resetkeys', '%R~*', ...others, ...except.map((counter) => `~${attemptCounterKey(prefix, counter)}`));
    },
    heal: async () => {
      await healthy();
      // The store's circuit breaker may be open after the fault: one probe closes it.
      await store.ping();
    },
    storedClients: async () => (await admin.keys(`${prefix}Client:*`)).length,
    dispose: async () => {
      admin.disconnect();
      server.dispose();
    },
  };
}

type Operation = 'upsert' | 'destroy' | 'consume' | 'unconsume';

/**
 * The memory store with the same faults injected in the adapter (a mock of a fault: the memory
 * store cannot fail by itself). Failing operations reject as the Redis store does: 503.
 */
export function memoryFaults(): StoreFaults {
  const inner = createMemoryStore();
  let failing: (model: string, operation: Operation, id: string) => boolean = () => false;
  const clients = new Set<string>();
  const check = (model: string, operation: Operation, id: string): void => {
    if (failing(model, operation, id)) throw new StoreUnavailableError({ cause: Object.assign(new Error(`injected: ${operation} refused`), { code: 'NOPERM' }) });
  };
  let attemptFails: (key: string) => boolean = () => false;
  const checkAttempt = (key: string): void => {
    if (attemptFails(key)) throw new StoreUnavailableError({ cause: Object.assign(new Error('injected: attempt counter refused'), { code: 'NOPERM' }) });
  };
  const store: SvcStore = {
    adapter(model) {
      const adapter = inner.adapter(model);
      return decorateAdapter(adapter, {
        upsert: async (id, payload, expiresIn) => {
          check(model, 'upsert', id);
          if (model === 'Client') clients.add(id);
          return adapter.upsert(id, payload, expiresIn);
        },
        destroy: async (id) => {
          check(model, 'destroy', id);
          return adapter.destroy(id);
        },
        consume: async (id) => {
          check(model, 'consume', id);
          return adapter.consume(id);
        },
      });
    },
    unconsume: async (model, id) => {
      check(model, 'unconsume', id);
      return inner.unconsume(model, id);
    },
    insert: async (model, id, payload, expiresIn) => {
      check(model, 'upsert', id);
      return inner.insert(model, id, payload, expiresIn);
    },
    attempts: {
      check: async (key, rule) => {
        checkAttempt(key);
        return inner.attempts.check(key, rule);
      },
      fail: async (key, rule) => {
        checkAttempt(key);
        return inner.attempts.fail(key, rule);
      },
      forget: async (key, options) => {
        checkAttempt(key);
        return inner.attempts.forget(key, options);
      },
    },
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return {
    kind: 'memory (injected)',
    store,
    failRegistrationTokenWrites: async (except) => {
      failing = (model, _operation, id) => model === 'RegistrationAccessToken' && id !== except;
    },
    failTokenDeletes: async () => {
      failing = (model, operation) => TOKEN_MODELS.includes(model) && (operation === 'upsert' || operation === 'destroy');
    },
    failAttemptCounters: async (except = []) => {
      attemptFails = (key) => !except.includes(key);
    },
    heal: async () => {
      failing = () => false;
      attemptFails = () => false;
    },
    storedClients: async () => {
      let n = 0;
      for (const id of clients) if (await inner.adapter('Client').find(id)) n += 1;
      return n;
    },
    dispose: async () => undefined,
  };
}

/** Like {@link memoryFaults}, and deleting a client fails as well (memory only). */
export function memoryFaultsWithClientDeletes(): StoreFaults & { failClientDeletes(): void } {
  let clientDeletesFail = false;
  const faults = memoryFaults();
  const store = withAdapter(faults.store, 'Client', (adapter) => ({
    destroy: async (id) => {
      if (clientDeletesFail) throw new StoreUnavailableError({ cause: Object.assign(new Error('injected: destroy refused'), { code: 'NOPERM' }) });
      return adapter.destroy(id);
    },
  }));
  return {
    ...faults,
    store,
    failClientDeletes: () => {
      clientDeletesFail = true;
    },
    heal: async () => {
      clientDeletesFail = false;
      await faults.heal();
    },
  };
}

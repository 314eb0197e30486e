import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';

import { createRedisStore } from '../../adapters/redis.js';
import { deleteClientRecords, revokeGrantsWhere } from '../../lib/management/client-deletion.js';
import { wrappedAdapter } from '../../lib/provider/wrapping.js';
import { deletePrefix, SHARED_REDIS_URL, testPrefix, TEST_STORE_TIMEOUT_MS } from '../helpers/redis.js';

/**
 * Her consent saved by a request that runs as one unit of store work (a Redis batch, as every request does) while its
 * client deletes itself: the grant's write is deferred to the end of the request, so the deletion-mark check that
 * follows the write in the `Grant` adapter reads the store before the write has reached it.
 */
describe('a grant saved while its client is deleted, on Redis (request batch)', () => {
  const prefix = testPrefix('grant-deletion-race');
  let store: ReturnType<typeof createRedisStore>;
  beforeAll(() => {
    store = createRedisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, operationTimeoutMs: TEST_STORE_TIMEOUT_MS });
  });
  afterEach(async () => deletePrefix(SHARED_REDIS_URL, prefix));
  afterAll(async () => store.close());

  /** Runs a request (batch) that saves grant `id` of `clientId`, then waits for `gate` before its writes go out. */
  function consentHeld(id: string, clientId: string): { saved: Promise<void>; release: () => void; done: Promise<unknown> } {
    const grants = wrappedAdapter({ store })('Grant');
    let release: () => void = () => undefined;
    let saved: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const savedP = new Promise<void>((resolve) => (saved = resolve));
    if (!store.batch) throw new Error('the Redis store batches requests');
    const done = store.batch(async () => {
      await grants.upsert(id, { accountId: 'her', clientId, openid: { scope: 'openid' }, exp: Math.floor(Date.now() / 1000) + 600 }, 600);
      saved();
      await gate;
    }).then(
      () => 'stored',
      (err: unknown) => (err as { error?: string }).error,
    );
    return { saved: savedP, release, done };
  }

  it('attack: the client deletes itself between the consent saving the grant and the end of that request: no grant of it is left', async () => {
    const consent = consentHeld('g-race', 'c-race');
    await consent.saved;
    await deleteClientRecords(store, 'c-race', 'client', async () => undefined);
    consent.release();
    await consent.done;
    expect(await store.adapter('Grant').find('g-race')).toBeUndefined();
  });

  it('attack: the operator revokes the grant (toolbox) between a consent writing it back and the end of that request: it is not left', async () => {
    await store.adapter('Grant').upsert('g-revoked', { accountId: 'her', clientId: 'c-kept' }, 600);
    const consent = consentHeld('g-revoked', 'c-kept');
    await consent.saved;
    expect(await revokeGrantsWhere(store, store.inventory, (grant) => grant.accountId === 'her')).toMatchObject({ revoked_grants: 1 });
    consent.release();
    await consent.done;
    expect(await store.adapter('Grant').find('g-revoked')).toBeUndefined();
  });

  it('honest: a consent saved while another client is deleted keeps its grant', async () => {
    const consent = consentHeld('g-kept', 'c-kept');
    await consent.saved;
    await deleteClientRecords(store, 'c-other', 'client', async () => undefined);
    consent.release();
    expect(await consent.done).toBe('stored');
    expect(await store.adapter('Grant').find('g-kept')).toMatchObject({ clientId: 'c-kept' });
  });
});

import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { AlreadyConsumedError } from '../../lib/errors.js';
import { afterWrites, type SvcStore } from '../../adapters/store.js';

/**
 * The store contract of `SvcStore.batch` (one request as one unit of store work), run against every
 * store that has it: whatever a store defers, reads inside the batch see the batch's writes,
 * single-use claims and revocations act on them, and once the batch resolves everything is stored.
 */
export function describeBatchContract(name: string, makeStore: () => Promise<SvcStore>): void {
  describe(`batch contract: ${name}`, () => {
    let store: SvcStore;
    const id = (): string => randomUUID();
    const batch = <T>(fn: () => Promise<T>): Promise<T> => (store.batch ? store.batch(fn) : fn());

    beforeAll(async () => {
      store = await makeStore();
    });
    afterAll(async () => store.close());

    it('reads inside a batch see its writes and deletions; once it resolves, they are stored', async () => {
      const [session, uid, interaction, gone] = [id(), id(), id(), id()];
      await store.adapter('Interaction').upsert(gone, { kind: 'Interaction', uid: gone }, 60);
      await batch(async () => {
        await store.adapter('Session').upsert(session, { kind: 'Session', uid, accountId: 'a', loginTs: 1, jti: session }, 60);
        await store.adapter('Interaction').upsert(interaction, { kind: 'Interaction', uid: interaction }, 60);
        await store.adapter('Interaction').destroy(gone);
        expect(await store.adapter('Session').find(session)).toMatchObject({ uid, accountId: 'a', jti: session });
        expect(await store.adapter('Session').findByUid(uid)).toEqual({ kind: 'Session', uid, accountId: 'a', loginTs: 1 });
        expect(await store.adapter('Interaction').find(interaction)).toMatchObject({ uid: interaction });
        expect(await store.adapter('Interaction').find(gone)).toBeUndefined();
      });
      expect(await store.adapter('Session').find(session)).toMatchObject({ uid, accountId: 'a' });
      expect(await store.adapter('Session').findByUid(uid)).toEqual({ kind: 'Session', uid, accountId: 'a', loginTs: 1 });
      expect(await store.adapter('Interaction').find(interaction)).toBeDefined();
      expect(await store.adapter('Interaction').find(gone)).toBeUndefined();
    });

    it('finds a session by uid after it was rotated to a new id inside the batch, never under the old id', async () => {
      const [before, after, uid] = [id(), id(), id()];
      // Told apart by `loginTs`: a session found by uid comes without its id (`jti`, her cookie's value).
      await store.adapter('Session').upsert(before, { kind: 'Session', uid, jti: before, accountId: 'a', loginTs: 1 }, 60);
      await batch(async () => {
        expect(await store.adapter('Session').findByUid(uid)).toEqual({ kind: 'Session', uid, accountId: 'a', loginTs: 1 });
        await store.adapter('Session').destroy(before);
        await store.adapter('Session').upsert(after, { kind: 'Session', uid, jti: after, accountId: 'a', loginTs: 2 }, 60);
        expect(await store.adapter('Session').findByUid(uid)).toEqual({ kind: 'Session', uid, accountId: 'a', loginTs: 2 });
        expect(await store.adapter('Session').find(before)).toBeUndefined();
      });
      expect(await store.adapter('Session').findByUid(uid)).toEqual({ kind: 'Session', uid, accountId: 'a', loginTs: 2 });
      expect(await store.adapter('Session').find(before)).toBeUndefined();
    });

    it('consumes a record written earlier in the batch exactly once, and revokes a grant written in it', async () => {
      const [code, token, grantId] = [id(), id(), id()];
      await batch(async () => {
        await store.adapter('AuthorizationCode').upsert(code, { kind: 'AuthorizationCode', grantId }, 60);
        await store.adapter('AuthorizationCode').consume(code);
        await expect(store.adapter('AuthorizationCode').consume(code)).rejects.toBeInstanceOf(AlreadyConsumedError);
        expect((await store.adapter('AuthorizationCode').find(code))?.consumed).toEqual(expect.any(Number));
        await store.adapter('AccessToken').upsert(token, { kind: 'AccessToken', grantId }, 60);
        await store.adapter('AccessToken').revokeByGrantId(grantId);
        expect(await store.adapter('AccessToken').find(token)).toBeUndefined();
      });
      expect(await store.adapter('AccessToken').find(token)).toBeUndefined();
      expect(await store.adapter('AuthorizationCode').find(code)).toBeUndefined();
    });

    it('returns copies inside a batch too', async () => {
      const grant = id();
      await batch(async () => {
        await store.adapter('Grant').upsert(grant, { kind: 'Grant', openid: { scope: 'openid' } }, 60);
        const found = await store.adapter('Grant').find(grant);
        (found?.openid as { scope: string }).scope = 'changed';
        expect((await store.adapter('Grant').find(grant))?.openid).toEqual({ scope: 'openid' });
      });
    });

    it('joins an outer batch, and still stores what a failing batch wrote before it failed', async () => {
      const [outer, inner, failed] = [id(), id(), id()];
      await batch(async () => {
        await store.adapter('Grant').upsert(outer, { kind: 'Grant' }, 60);
        await batch(async () => store.adapter('Grant').upsert(inner, { kind: 'Grant' }, 60));
      });
      expect(await store.adapter('Grant').find(outer)).toBeDefined();
      expect(await store.adapter('Grant').find(inner)).toBeDefined();
      const boom = new Error('request failed');
      await expect(
        batch(async () => {
          await store.adapter('Grant').upsert(failed, { kind: 'Grant' }, 60);
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await store.adapter('Grant').find(failed)).toBeDefined();
    });

    it('runs a read once the writes deferred before it are stored (a mark checked after a write), and answers what it read', async () => {
      const [grant, other] = [id(), id()];
      await store.adapter('Grant').upsert(other, { kind: 'Grant', accountId: 'b' }, 60);
      await batch(async () => {
        await store.adapter('Grant').upsert(grant, { kind: 'Grant', accountId: 'a' }, 60);
        await store.adapter('Grant').upsert(other, { kind: 'Grant', accountId: 'c' }, 60);
        const read = await afterWrites(store, () => Promise.all([store.adapter('Grant').find(grant), store.adapter('Grant').find(other)]));
        expect(read.map((g) => g?.accountId)).toEqual(['a', 'c']);
      });
      expect((await store.adapter('Grant').find(other))?.accountId).toBe('c');
    });

    it('lands attempt settlements made inside a batch', async () => {
      const rule = { limit: 2, windowSeconds: 60, coolDownSeconds: 30, maxCoolDownSeconds: 100 };
      const [a, b] = [id(), id()];
      await store.attempts.fail(a, rule);
      await batch(async () => {
        expect(await Promise.all([store.attempts.check(a, rule), store.attempts.check(b, rule)])).toEqual([0, 0]);
        expect(await Promise.all([store.attempts.forget(a, { afterSuccess: true }), store.attempts.fail(b, rule), store.attempts.fail(b, rule)])).toEqual([undefined, 0, 0]);
      });
      expect(await store.attempts.fail(a, rule)).toBe(0);
      expect(await store.attempts.check(a, rule)).toBe(0);
      expect(await store.attempts.check(b, rule)).toBeGreaterThan(0);
    });
  });
}

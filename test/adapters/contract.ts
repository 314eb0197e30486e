import { randomUUID } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { AdapterPayload } from 'oidc-provider';

import { refOf, type ListedRecord } from '../../adapters/inventory.js';
import { InvalidCursorError } from '../../lib/errors.js';
import type { SvcStore } from '../../adapters/store.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The adapter contract: every store (memory, Redis standalone, Redis Cluster) runs this same suite.
 * `makeStore` is called once; ids are random so stores that hold other data are not disturbed.
 * `uidIndexed` says whether the store holds a uid index entry for `uid`, where that index is a key of its own (Redis):
 * a stale entry finds nothing through the adapter, but stays stored.
 */
export function describeAdapterContract(name: string, makeStore: () => Promise<SvcStore>, uidIndexed?: (store: SvcStore, uid: string) => Promise<boolean>): void {
  describe(`adapter contract: ${name}`, () => {
    let store: SvcStore;
    const id = (): string => randomUUID();

    beforeAll(async () => {
      store = await makeStore();
    });
    afterAll(async () => store.close());

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('returns what was written, as a copy', async () => {
      const a = store.adapter('AccessToken');
      const key = id();
      const payload: AdapterPayload = { accountId: 'acc', clientId: 'c', grantId: id(), scope: 'openid', kind: 'AccessToken', jti: key };
      await a.upsert(key, payload, 60);
      const found = await a.find(key);
      expect(found).toEqual(payload);
      (found as AdapterPayload).scope = 'changed';
      expect((await a.find(key))?.scope).toBe('openid');
      payload.scope = 'mutated-after-write';
      expect((await a.find(key))?.scope).toBe('openid');
    });

    it('returns undefined for unknown ids', async () => {
      expect(await store.adapter('AccessToken').find(id())).toBeUndefined();
      expect(await store.adapter('Session').findByUid(id())).toBeUndefined();
      expect(await store.adapter('DeviceCode').findByUserCode(id())).toBeUndefined();
    });

    it('keeps models apart', async () => {
      const key = id();
      await store.adapter('AccessToken').upsert(key, { kind: 'AccessToken' }, 60);
      expect(await store.adapter('AuthorizationCode').find(key)).toBeUndefined();
    });

    it('overwrites on upsert', async () => {
      const a = store.adapter('Grant');
      const key = id();
      await a.upsert(key, { accountId: 'one' }, 60);
      await a.upsert(key, { accountId: 'two' }, 60);
      expect((await a.find(key))?.accountId).toBe('two');
    });

    it('expires records after their TTL, with their indexes', async () => {
      const session = store.adapter('Session');
      const key = id();
      const uid = id();
      await session.upsert(key, { uid, accountId: 'a' }, 1);
      expect((await session.findByUid(uid))?.accountId).toBe('a');
      // The store expires it by its own clock (a Redis TTL): poll until both are gone (a store
      // that never expires them fails by the test timeout), never a fixed sleep.
      while ((await session.find(key)) || (await session.findByUid(uid))) await sleep(50);
      expect(await session.find(key)).toBeUndefined();
      expect(await session.findByUid(uid)).toBeUndefined();
    });

    it('a record written with a lifetime of zero or less is gone at once, never kept forever', async () => {
      // A token saved at its expiry moment (a save that crossed its last second, a clock step)
      // arrives with expiresIn 0 or below: "no expiry" is only for an absent lifetime.
      const tokens = store.adapter('InitialAccessToken');
      const keys = [id(), id()];
      await tokens.upsert(keys[0] as string, { exp: Math.floor(Date.now() / 1000) }, 0);
      await tokens.upsert(keys[1] as string, { exp: Math.floor(Date.now() / 1000) - 5 }, -5);
      // Polled: a store that kept them without expiry fails by the test timeout.
      for (const key of keys) while (await tokens.find(key)) await sleep(50);
      for (const key of keys) expect(await tokens.find(key)).toBeUndefined();
    });

    it('keeps records without a TTL', async () => {
      const client = store.adapter('Client');
      const key = id();
      await client.upsert(key, { client_id: key });
      expect((await client.find(key))?.client_id).toBe(key);
      await client.destroy(key);
    });

    it('finds sessions by uid (without their id: her cookie\'s value) and device codes by user code', async () => {
      const sessionKey = id();
      const uid = id();
      await store.adapter('Session').upsert(sessionKey, { uid, accountId: 'x', jti: sessionKey }, 60);
      expect(await store.adapter('Session').findByUid(uid)).toEqual({ uid, accountId: 'x' });
      const deviceKey = id();
      const userCode = id();
      await store.adapter('DeviceCode').upsert(deviceKey, { userCode, clientId: 'c' }, 60);
      expect((await store.adapter('DeviceCode').findByUserCode(userCode))?.clientId).toBe('c');
    });

    it('drops the old uid index when a session is rewritten with a new uid', async () => {
      const session = store.adapter('Session');
      const key = id();
      const oldUid = id();
      const newUid = id();
      await session.upsert(key, { uid: oldUid }, 60);
      await session.upsert(key, { uid: newUid }, 60);
      expect(await session.findByUid(oldUid)).toBeUndefined();
      expect((await session.findByUid(newUid))?.uid).toBe(newUid);
    });

    it('destroys a record and its indexes', async () => {
      const session = store.adapter('Session');
      const key = id();
      const uid = id();
      await session.upsert(key, { uid }, 60);
      await session.destroy(key);
      expect(await session.find(key)).toBeUndefined();
      expect(await session.findByUid(uid)).toBeUndefined();
    });

    it('a session destroyed (her sign-out, in a request or outside one) leaves no uid index behind; honest: one replaced by a new id keeps its uid found', async () => {
      const session = store.adapter('Session');
      const inRequest = <T>(fn: () => Promise<T>): Promise<T> => (store.batch ? store.batch(fn) : fn());
      const [signedOut, destroyed, replaced] = [id(), id(), id()];
      const [key, other, renewed] = [id(), id(), id()];
      await session.upsert(key, { uid: signedOut, accountId: 'a' }, 60);
      await session.upsert(other, { uid: destroyed, accountId: 'a' }, 60);
      await session.upsert(renewed, { uid: replaced, accountId: 'a' }, 60);
      await inRequest(async () => {
        await session.find(key);
        await session.destroy(key);
      });
      await session.destroy(other);
      // oidc-provider's `resetIdentifier`: the old id destroyed, the same uid saved under a new id, in one request.
      const next = id();
      await inRequest(async () => {
        await session.find(renewed);
        await session.destroy(renewed);
        await session.upsert(next, { uid: replaced, accountId: 'a' }, 60);
      });
      for (const uid of [signedOut, destroyed]) expect({ uid, found: await session.findByUid(uid), indexed: await uidIndexed?.(store, uid) }).toEqual({ uid, found: undefined, indexed: uidIndexed && false });
      expect({ found: (await session.findByUid(replaced))?.uid, indexed: await uidIndexed?.(store, replaced) }).toEqual({ found: replaced, indexed: uidIndexed && true });
    });

    it('consumes once: marks the record consumed, a second consume rejects with invalid_grant', async () => {
      const codes = store.adapter('AuthorizationCode');
      const key = id();
      await codes.upsert(key, { grantId: id(), kind: 'AuthorizationCode' }, 60);
      await codes.consume(key);
      const consumed = await codes.find(key);
      expect(typeof consumed?.consumed).toBe('number');
      await expect(codes.consume(key)).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    it('lets exactly one of 50 concurrent consumers win', async () => {
      const codes = store.adapter('AuthorizationCode');
      const key = id();
      await codes.upsert(key, { grantId: id(), kind: 'AuthorizationCode' }, 60);
      const results = await Promise.allSettled(Array.from({ length: 50 }, () => codes.consume(key)));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const losers = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(losers).toHaveLength(49);
      for (const loser of losers) expect(loser.reason).toMatchObject({ error: 'invalid_grant' });
    });

    it('rejects consuming an unknown record with invalid_grant', async () => {
      await expect(store.adapter('AuthorizationCode').consume(id())).rejects.toMatchObject({ error: 'invalid_grant' });
    });

    describe('insert (a record written only when none lives under its id)', () => {
      it('lets exactly one of 50 concurrent inserts of one id write, the first payload kept', async () => {
        const key = id();
        const results = await Promise.all(Array.from({ length: 50 }, (_v, i) => store.insert('ReplayDetection', key, { iss: `c${i}` }, 60)));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect((await store.adapter('ReplayDetection').find(key))?.iss).toBe(`c${results.indexOf(true)}`);
      });

      it('leaves a record written by upsert alone, and keeps models apart', async () => {
        const key = id();
        await store.adapter('ReplayDetection').upsert(key, { iss: 'first' }, 60);
        await expect(store.insert('ReplayDetection', key, { iss: 'second' }, 60)).resolves.toBe(false);
        expect((await store.adapter('ReplayDetection').find(key))?.iss).toBe('first');
        await expect(store.insert('PushedAuthorizationRequestUse', key, { iss: 'other model' }, 60)).resolves.toBe(true);
      });

      it('expires what it wrote after its TTL, and writes again once it is gone', async () => {
        const marks = store.adapter('ReplayDetection');
        const key = id();
        await expect(store.insert('ReplayDetection', key, { iss: 'a' }, 1)).resolves.toBe(true);
        // Polled: a store that kept it without expiry fails by the test timeout.
        while (await marks.find(key)) await sleep(50);
        await expect(store.insert('ReplayDetection', key, { iss: 'b' }, 60)).resolves.toBe(true);
        expect((await marks.find(key))?.iss).toBe('b');
      });
    });

    describe('unconsume (giving a single-use record back)', () => {
      it('removes only the consumed mark: the payload stays, and the record can be consumed once more', async () => {
        const tokens = store.adapter('RegistrationAccessToken');
        const key = id();
        const payload: AdapterPayload = { clientId: 'c', kind: 'RegistrationAccessToken', jti: key, policies: ['a', 'b'] };
        await tokens.upsert(key, payload);
        await tokens.consume(key);
        await expect(store.unconsume('RegistrationAccessToken', key)).resolves.toBe(true);
        expect(await tokens.find(key)).toEqual(payload);
        await tokens.consume(key);
        await expect(tokens.consume(key)).rejects.toMatchObject({ error: 'invalid_grant' });
      });

      it('is a no-op on a record that is not consumed, and keeps models apart', async () => {
        const key = id();
        await store.adapter('InitialAccessToken').upsert(key, { kind: 'InitialAccessToken', jti: key }, 60);
        await store.adapter('RegistrationAccessToken').upsert(key, { kind: 'RegistrationAccessToken', jti: key });
        await store.adapter('RegistrationAccessToken').consume(key);
        await expect(store.unconsume('InitialAccessToken', key)).resolves.toBe(true);
        expect(await store.adapter('InitialAccessToken').find(key)).toEqual({ kind: 'InitialAccessToken', jti: key });
        expect(typeof (await store.adapter('RegistrationAccessToken').find(key))?.consumed).toBe('number');
      });

      it('resolves false for an unknown or deleted record and creates nothing', async () => {
        const tokens = store.adapter('RegistrationAccessToken');
        const key = id();
        await expect(store.unconsume('RegistrationAccessToken', key)).resolves.toBe(false);
        expect(await tokens.find(key)).toBeUndefined();
        await tokens.upsert(key, { kind: 'RegistrationAccessToken' });
        await tokens.consume(key);
        await tokens.destroy(key);
        await expect(store.unconsume('RegistrationAccessToken', key)).resolves.toBe(false);
        expect(await tokens.find(key)).toBeUndefined();
      });

      it('keeps the expiry: a record given back still expires when it was due', async () => {
        const tokens = store.adapter('InitialAccessToken');
        const key = id();
        await tokens.upsert(key, { kind: 'InitialAccessToken' }, 1);
        await tokens.consume(key);
        await expect(store.unconsume('InitialAccessToken', key)).resolves.toBe(true);
        // Polled, not slept: with its TTL lost the record would never go and the test would time out.
        while (await tokens.find(key)) await sleep(100);
        await expect(store.unconsume('InitialAccessToken', key)).resolves.toBe(false);
      });

      it('after a record is given back, exactly one of 30 concurrent consumers wins again', async () => {
        const tokens = store.adapter('InitialAccessToken');
        const key = id();
        await tokens.upsert(key, { kind: 'InitialAccessToken' }, 60);
        await tokens.consume(key);
        await store.unconsume('InitialAccessToken', key);
        const results = await Promise.allSettled(Array.from({ length: 30 }, () => tokens.consume(key)));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      });
    });

    it('revokes every record of a grant across models, and nothing else', async () => {
      const grantId = id();
      const otherGrant = id();
      const at = id();
      const code = id();
      const keep = id();
      await store.adapter('AccessToken').upsert(at, { grantId, kind: 'AccessToken' }, 60);
      await store.adapter('AuthorizationCode').upsert(code, { grantId, kind: 'AuthorizationCode' }, 60);
      await store.adapter('AccessToken').upsert(keep, { grantId: otherGrant, kind: 'AccessToken' }, 60);
      await store.adapter('AccessToken').revokeByGrantId(grantId);
      expect(await store.adapter('AccessToken').find(at)).toBeUndefined();
      expect(await store.adapter('AuthorizationCode').find(code)).toBeUndefined();
      expect(await store.adapter('AccessToken').find(keep)).toBeDefined();
    });

    it('revoking an unknown grant is a no-op', async () => {
      await expect(store.adapter('AccessToken').revokeByGrantId(id())).resolves.toBeUndefined();
    });

    describe('inventory (listing and removing by reference)', () => {
      const model = (): string => `Inv${randomUUID().slice(0, 8)}`;
      const inventory = (): NonNullable<SvcStore['inventory']> => {
        if (!store.inventory) throw new Error('the store has no inventory');
        return store.inventory;
      };
      const listAll = async (m: string, limit: number): Promise<{ records: ListedRecord[]; pages: number }> => {
        const records: ListedRecord[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await inventory().list(m, { cursor, limit });
          expect(page.records.length).toBeLessThanOrEqual(limit);
          records.push(...page.records);
          cursor = page.cursor;
          pages += 1;
        } while (cursor !== undefined);
        return { records, pages };
      };

      it('pages through every live record of a model, at most `limit` a page, naming each by the SHA-256 of its id and never showing the id or jti', async () => {
        const m = model();
        const ids = Array.from({ length: 23 }, () => `secret-${id()}`);
        await Promise.all(ids.map((key, i) => store.adapter(m).upsert(key, { jti: key, clientId: `client-${i}`, kind: m }, i % 2 ? 60 : undefined)));
        await store.adapter(`${m}Other`).upsert(id(), { clientId: 'elsewhere' }, 60);
        const { records, pages } = await listAll(m, 5);
        expect(pages).toBeGreaterThanOrEqual(5);
        expect(new Set(records.map((r) => r.ref))).toEqual(new Set(ids.map(refOf)));
        expect(new Set(records.map((r) => r.payload.clientId))).toEqual(new Set(ids.map((_k, i) => `client-${i}`)));
        const dump = JSON.stringify(records);
        for (const key of ids) expect(dump).not.toContain(key);
        for (const r of records) expect(r.payload).not.toHaveProperty('jti');
      });

      it('shows the consumed mark, and never a removed or expired record', async () => {
        const m = model();
        const [kept, consumed, removed, expiring] = [id(), id(), id(), id()];
        for (const key of [kept, consumed, removed]) await store.adapter(m).upsert(key, { kind: m }, 60);
        await store.adapter(m).upsert(expiring, { kind: m }, 1);
        await store.adapter(m).consume(consumed);
        await store.adapter(m).destroy(removed);
        while (await store.adapter(m).find(expiring)) await sleep(100);
        const { records } = await listAll(m, 50);
        expect(records.map((r) => r.ref).sort()).toEqual([kept, consumed].map(refOf).sort());
        expect(records.find((r) => r.ref === refOf(consumed))?.payload.consumed).toEqual(expect.any(Number));
        expect(records.find((r) => r.ref === refOf(kept))?.payload.consumed).toBeUndefined();
      });

      it('lists nothing for an empty model, and refuses a cursor it did not hand out', async () => {
        expect(await inventory().list(model(), { limit: 10 })).toEqual({ records: [] });
        for (const cursor of ['not-a-cursor', Buffer.from('{"n":"elsewhere:1","c":"0","p":[]}').toString('base64url'), '']) {
          await expect(inventory().list(model(), { cursor, limit: 10 })).rejects.toBeInstanceOf(InvalidCursorError);
        }
      });

      it('destroys one record by reference (with its indexes), and answers false for an unknown, malformed or other-model reference', async () => {
        const m = model();
        const [a, b] = [id(), id()];
        await store.adapter(m).upsert(a, { uid: `uid-${a}`, kind: m }, 60);
        await store.adapter(m).upsert(b, { kind: m }, 60);
        expect(await inventory().destroy(`${m}Other`, refOf(a))).toBe(false);
        expect(await inventory().destroy(m, refOf(a))).toBe(true);
        expect(await store.adapter(m).find(a)).toBeUndefined();
        expect(await store.adapter(m).find(b)).toBeDefined();
        expect(await inventory().destroy(m, refOf(a))).toBe(false);
        expect(await inventory().destroy(m, a)).toBe(false);
        expect(await inventory().destroy(m, '*')).toBe(false);
      });

      it('revokes every record of a grant by the grant reference, and nothing else', async () => {
        const grant = id();
        const other = id();
        const [code, token, kept] = [id(), id(), id()];
        await store.adapter('AuthorizationCode').upsert(code, { grantId: grant }, 60);
        await store.adapter('AccessToken').upsert(token, { grantId: grant }, 60);
        await store.adapter('AccessToken').upsert(kept, { grantId: other }, 60);
        expect(await inventory().revokeGrant(refOf(grant))).toBe(2);
        expect(await store.adapter('AuthorizationCode').find(code)).toBeUndefined();
        expect(await store.adapter('AccessToken').find(token)).toBeUndefined();
        expect(await store.adapter('AccessToken').find(kept)).toBeDefined();
        expect(await inventory().revokeGrant(refOf(grant))).toBe(0);
        expect(await inventory().revokeGrant('not a ref')).toBe(0);
      });
    });

    describe('attempt counting (completed failures only)', () => {
      const rule = { limit: 3, windowSeconds: 60, coolDownSeconds: 30, maxCoolDownSeconds: 100 };

      it('counts `limit` failures within the budget, the last one starting the cool-down; the pre-check then refuses and writes nothing', async () => {
        const key = id();
        for (let i = 0; i < 3; i += 1) {
          expect(await store.attempts.check(key, rule)).toBe(0);
          expect(await store.attempts.fail(key, rule)).toBe(0);
        }
        const locked = await store.attempts.check(key, rule);
        expect(locked).toBeGreaterThan(29_000);
        expect(locked).toBeLessThanOrEqual(30_000);
        for (let i = 0; i < 5; i += 1) expect(await store.attempts.check(key, rule)).toBeGreaterThan(0);
        expect(await store.attempts.check(key, rule)).toBeLessThanOrEqual(locked);
      });

      it('never counts a check: any number in a row pass', async () => {
        const key = id();
        for (let i = 0; i < 20; i += 1) expect(await store.attempts.check(key, rule)).toBe(0);
        expect(await store.attempts.fail(key, rule)).toBe(0);
        expect(await store.attempts.fail(key, rule)).toBe(0);
        expect(await store.attempts.check(key, rule)).toBe(0);
      });

      it('forgets every failure of a key, locked or not: its budget is whole again', async () => {
        const key = id();
        for (let i = 0; i < 2; i += 1) await store.attempts.fail(key, rule);
        await store.attempts.forget(key);
        for (let i = 0; i < 3; i += 1) expect(await store.attempts.fail(key, rule)).toBe(0);
        expect(await store.attempts.check(key, rule)).toBeGreaterThan(29_000);
        await store.attempts.forget(key);
        expect(await store.attempts.check(key, rule)).toBe(0);
      });

      it('of 40 concurrent failures exactly `limit` are within the budget', async () => {
        const key = id();
        const waits = await Promise.all(Array.from({ length: 40 }, () => store.attempts.fail(key, rule)));
        expect(waits.filter((w) => w === 0)).toHaveLength(3);
        expect(waits.filter((w) => w > 29_000)).toHaveLength(37);
      });

      it('after `consecutiveLimit` failures in a row refuses until the key is forgotten, and a rule without the limit is not stopped by the run', async () => {
        const key = id();
        const run = { ...rule, limit: 10, consecutiveLimit: 3 };
        for (let i = 0; i < 3; i += 1) expect(await store.attempts.fail(key, run)).toBe(0);
        expect(await store.attempts.check(key, run)).toBeGreaterThanOrEqual(1000);
        expect(await store.attempts.check(key, { ...rule, limit: 10 })).toBe(0);
        await store.attempts.forget(key);
        expect(await store.attempts.check(key, run)).toBe(0);
      });

      it('of concurrent failures past `consecutiveLimit` in a row only the limit are within the budget, whatever room the window has', async () => {
        const key = id();
        const run = { ...rule, limit: 1000, consecutiveLimit: 3 };
        const waits = await Promise.all(Array.from({ length: 10 }, () => store.attempts.fail(key, run)));
        expect(waits.filter((w) => w === 0)).toHaveLength(3);
        expect(waits.filter((w) => w >= 1000)).toHaveLength(7);
        const within = { ...run, consecutiveLimit: 20 };
        const other = id();
        expect(await Promise.all(Array.from({ length: 10 }, () => store.attempts.fail(other, within)))).toEqual(Array(10).fill(0));
      });

      it('doubles the cool-down with each lockout, up to the maximum', async () => {
        const key = id();
        const quick = { limit: 1, windowSeconds: 60, coolDownSeconds: 0.2, maxCoolDownSeconds: 0.5 };
        const lockouts: number[] = [];
        // Each read after its lockout began, shorter only by the time that passed since (and a millisecond of rounding).
        const passed: number[] = [];
        while (lockouts.length < 3) {
          const before = Date.now();
          expect(await store.attempts.fail(key, quick)).toBe(0);
          const wait = await store.attempts.check(key, quick);
          passed.push(Date.now() - before);
          lockouts.push(wait);
          // Poll until the lockout has passed (no fixed sleep: the store says how long).
          while ((await store.attempts.check(key, quick)) > 0) await sleep(Math.min(wait, 50));
        }
        expect(lockouts[0]).toBeLessThanOrEqual(200);
        expect(lockouts[1]).toBeGreaterThanOrEqual(400 - (passed[1] as number) - 1);
        expect(lockouts[1]).toBeLessThanOrEqual(400);
        expect(lockouts[2]).toBeGreaterThanOrEqual(500 - (passed[2] as number) - 1);
        expect(lockouts[2]).toBeLessThanOrEqual(500);
      });

      it('keeps keys apart', async () => {
        const a = id();
        const b = id();
        for (let i = 0; i < 4; i += 1) await store.attempts.fail(a, rule);
        expect(await store.attempts.check(b, rule)).toBe(0);
      });
    });
  });
}

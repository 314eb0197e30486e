import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';

import { AlreadyConsumedError, InvalidCursorError } from '../lib/errors.js';
import { isRef, listedPayload, MAX_PAGE, refOf, type StoreInventory } from './inventory.js';
import { createMemoryAttempts } from './memory-attempts.js';
import { GRANTABLE_MODELS, type SvcStore } from './store.js';

interface Entry {
  /** JSON text, so callers never share a reference with the store (as with Redis). */
  json: string;
  /** Epoch milliseconds, or Infinity. */
  expiresAt: number;
  /** What the indexes hold for this record (so removing it needs no parse). */
  indexed?: Pick<AdapterPayload, 'uid' | 'userCode' | 'grantId'>;
}

type Index = Map<string, { key: string; expiresAt: number }>;

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /**
   * How often expired records are swept, in milliseconds (reads also drop expired records).
   * @default 60000
   */
  sweepIntervalMs?: number;
}

/**
 * The embedded default store: all provider state in this process's memory, with the semantics of
 * the Redis store (TTLs, atomic consume, grant and uid indexes). Nothing is evicted before it
 * expires. One process only; everything is lost on restart. Every operation is one synchronous
 * step, so consume and unconsume are atomic.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): SvcStore & { readonly inventory: StoreInventory } {
  const records = new Map<string, Entry>();
  /** Grant id → record key → expiry. */
  const grants = new Map<string, Map<string, number>>();
  const uids: Index = new Map();
  const userCodes: Index = new Map();

  const now = (): number => Date.now();
  const live = (key: string): Entry | undefined => {
    const entry = records.get(key);
    if (!entry || entry.expiresAt > now()) return entry;
    records.delete(key);
    return undefined;
  };
  const expiryOf = (expiresIn?: number): number =>
    typeof expiresIn === 'number' && Number.isFinite(expiresIn) ? now() + expiresIn * 1000 : Infinity;

  const attempts = createMemoryAttempts(now);
  const timer = setInterval(() => {
    const t = now();
    for (const [key, entry] of records) if (entry.expiresAt <= t) records.delete(key);
    for (const [id, members] of grants) {
      for (const [key, exp] of members) if (exp <= t) members.delete(key);
      if (members.size === 0) grants.delete(id);
    }
    for (const map of [uids, userCodes]) for (const [k, v] of map) if (v.expiresAt <= t) map.delete(k);
    attempts.sweep();
  }, options.sweepIntervalMs ?? 60_000);
  timer.unref();

  const read = (entry: Entry | undefined): AdapterPayload | undefined => (entry ? (JSON.parse(entry.json) as AdapterPayload) : undefined);
  const lookup = (map: Index, value: string): AdapterPayload | undefined => {
    const ref = map.get(value);
    return ref && ref.expiresAt > now() ? read(live(ref.key)) : undefined;
  };

  /** Removes a record and the indexes that point at it. */
  const remove = (key: string): void => {
    const { uid, userCode, grantId } = records.get(key)?.indexed ?? {};
    records.delete(key);
    if (uid && uids.get(uid)?.key === key) uids.delete(uid);
    if (userCode && userCodes.get(userCode)?.key === key) userCodes.delete(userCode);
    const members = grantId ? grants.get(grantId) : undefined;
    members?.delete(key);
    if (grantId && members?.size === 0) grants.delete(grantId);
  };

  const revokeByGrantId = (grantId: string): number => {
    const members = grants.get(grantId);
    grants.delete(grantId);
    for (const key of members?.keys() ?? []) remove(key);
    return members?.size ?? 0;
  };

  const adapter = (model: string): Adapter => {
    const keyOf = (id: string): string => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        const key = keyOf(id);
        if (live(key)) remove(key);
        const expiresAt = expiryOf(expiresIn);
        const indexed = payload.uid || payload.userCode || payload.grantId ? { uid: payload.uid, userCode: payload.userCode, grantId: payload.grantId } : undefined;
        records.set(key, { json: JSON.stringify(payload), expiresAt, indexed });
        if (model === 'Session' && payload.uid) uids.set(payload.uid, { key, expiresAt });
        if (payload.userCode) userCodes.set(payload.userCode, { key, expiresAt });
        if (payload.grantId && GRANTABLE_MODELS.has(model)) {
          const members = grants.get(payload.grantId) ?? new Map<string, number>();
          members.set(key, expiresAt);
          grants.set(payload.grantId, members);
        }
      },
      find: async (id) => read(live(keyOf(id))),
      findByUid: async (uid) => lookup(uids, uid),
      findByUserCode: async (userCode) => lookup(userCodes, userCode),
      async consume(id) {
        const entry = live(keyOf(id));
        if (!entry) throw new errors.InvalidGrant(`${model} not found or expired`);
        const payload = JSON.parse(entry.json) as AdapterPayload;
        if (payload.consumed) throw new AlreadyConsumedError(model);
        payload.consumed = Math.floor(now() / 1000);
        entry.json = JSON.stringify(payload);
      },
      async destroy(id) {
        if (live(keyOf(id))) remove(keyOf(id));
      },
      async revokeByGrantId(grantId) {
        revokeByGrantId(grantId);
      },
    };
  };

  /** The live records of `model` by reference, as `[id, payload JSON]`. */
  const byRef = (model: string): Map<string, [string, string]> => {
    const found = new Map<string, [string, string]>();
    const start = `${model}:`;
    for (const key of [...records.keys()]) {
      const entry = key.startsWith(start) ? live(key) : undefined;
      if (entry) found.set(refOf(key.slice(start.length)), [key.slice(start.length), entry.json]);
    }
    return found;
  };

  return {
    adapter,
    async unconsume(model, id) {
      const entry = live(`${model}:${id}`);
      if (!entry) return false;
      const payload = JSON.parse(entry.json) as AdapterPayload;
      delete payload.consumed;
      entry.json = JSON.stringify(payload);
      return true;
    },
    attempts,
    // Records ordered by reference, the cursor being the last one handed out (each page costs a
    // pass over the model's records: one process, small data).
    inventory: {
      async list(model, page) {
        if (page.cursor !== undefined && !isRef(page.cursor)) throw new InvalidCursorError();
        const limit = Math.max(1, Math.min(page.limit, MAX_PAGE));
        const all = byRef(model);
        const refs = [...all.keys()].filter((ref) => page.cursor === undefined || ref > page.cursor).sort();
        const taken = refs.slice(0, limit);
        return {
          records: taken.map((ref) => ({ ref, payload: listedPayload(JSON.parse(all.get(ref)?.[1] as string) as AdapterPayload) })),
          ...(refs.length > limit ? { cursor: taken[taken.length - 1] } : {}),
        };
      },
      async destroy(model, ref) {
        const id = isRef(ref) ? byRef(model).get(ref)?.[0] : undefined;
        if (id !== undefined) remove(`${model}:${id}`);
        return id !== undefined;
      },
      async revokeGrant(ref) {
        const grantId = isRef(ref) ? [...grants.keys()].find((id) => refOf(id) === ref) : undefined;
        return grantId === undefined ? 0 : revokeByGrantId(grantId);
      },
    },
    async ping() {},
    async close() {
      clearInterval(timer);
    },
  };
}

import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';

import { AlreadyConsumedError } from '../lib/errors.js';
import { createMemoryAttempts } from './memory-attempts.js';
import type { StoreInventory } from './inventory.js';
import { createMemoryInventory } from './memory-inventory.js';
import { GRANTABLE_MODELS, type SvcStore } from './store.js';

interface Entry {
  /** JSON text, so callers never share a reference with the store (as with Redis). */
  json: string;
  /** Epoch milliseconds, or Infinity. */
  expiresAt: number;
  /** What the indexes hold for this record (so removing it needs no parse). */
  indexed?: Pick<AdapterPayload, 'uid' | 'userCode' | 'grantId'>;
}

interface IndexEntry {
  members: Map<string, number>;
}

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
 * expires. One process only; everything is lost on restart.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): SvcStore & { readonly inventory: StoreInventory } {
  const records = new Map<string, Entry>();
  const grants = new Map<string, IndexEntry>();
  const uids = new Map<string, { key: string; expiresAt: number }>();
  const userCodes = new Map<string, { key: string; expiresAt: number }>();

  const now = (): number => Date.now();
  const live = (key: string): Entry | undefined => {
    const entry = records.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now()) {
      records.delete(key);
      return undefined;
    }
    return entry;
  };
  const expiryOf = (expiresIn?: number): number =>
    typeof expiresIn === 'number' && Number.isFinite(expiresIn) ? now() + expiresIn * 1000 : Infinity;

  const sweep = (): void => {
    const t = now();
    for (const [key, entry] of records) if (entry.expiresAt <= t) records.delete(key);
    for (const [id, index] of grants) {
      for (const [key, exp] of index.members) if (exp <= t) index.members.delete(key);
      if (index.members.size === 0) grants.delete(id);
    }
    for (const map of [uids, userCodes]) for (const [k, v] of map) if (v.expiresAt <= t) map.delete(k);
  };
  const attempts = createMemoryAttempts(now);
  const timer = setInterval(() => {
    sweep();
    attempts.sweep();
  }, options.sweepIntervalMs ?? 60_000);
  timer.unref();

  const lookup = (map: Map<string, { key: string; expiresAt: number }>, value: string): AdapterPayload | undefined => {
    const ref = map.get(value);
    if (!ref || ref.expiresAt <= now()) return undefined;
    const entry = live(ref.key);
    return entry ? (JSON.parse(entry.json) as AdapterPayload) : undefined;
  };

  const removeIndexes = (key: string, payload: Entry['indexed'] = {}): void => {
    if (payload.uid && uids.get(payload.uid)?.key === key) uids.delete(payload.uid);
    if (payload.userCode && userCodes.get(payload.userCode)?.key === key) userCodes.delete(payload.userCode);
    if (payload.grantId) {
      const index = grants.get(payload.grantId);
      index?.members.delete(key);
      if (index?.members.size === 0) grants.delete(payload.grantId);
    }
  };

  const adapter = (model: string): Adapter => {
    const keyOf = (id: string): string => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        const key = keyOf(id);
        const previous = live(key);
        if (previous) removeIndexes(key, previous.indexed);
        const expiresAt = expiryOf(expiresIn);
        const indexed = payload.uid || payload.userCode || payload.grantId ? { uid: payload.uid, userCode: payload.userCode, grantId: payload.grantId } : undefined;
        records.set(key, { json: JSON.stringify(payload), expiresAt, indexed });
        if (model === 'Session' && payload.uid) uids.set(payload.uid, { key, expiresAt });
        if (payload.userCode) userCodes.set(payload.userCode, { key, expiresAt });
        if (payload.grantId && GRANTABLE_MODELS.has(model)) {
          const index = grants.get(payload.grantId) ?? { members: new Map<string, number>() };
          index.members.set(key, expiresAt);
          grants.set(payload.grantId, index);
        }
      },
      async find(id) {
        const entry = live(keyOf(id));
        return entry ? (JSON.parse(entry.json) as AdapterPayload) : undefined;
      },
      async findByUid(uid) {
        return lookup(uids, uid);
      },
      async findByUserCode(userCode) {
        return lookup(userCodes, userCode);
      },
      async consume(id) {
        // Check and set happen in one synchronous step: no other request can interleave.
        const entry = live(keyOf(id));
        if (!entry) throw new errors.InvalidGrant(`${model} not found or expired`);
        const payload = JSON.parse(entry.json) as AdapterPayload;
        if (payload.consumed) throw new AlreadyConsumedError(model);
        payload.consumed = Math.floor(now() / 1000);
        entry.json = JSON.stringify(payload);
      },
      async destroy(id) {
        const key = keyOf(id);
        const entry = live(key);
        records.delete(key);
        if (entry) removeIndexes(key, entry.indexed);
      },
      async revokeByGrantId(grantId) {
        const index = grants.get(grantId);
        if (!index) return;
        grants.delete(grantId);
        for (const key of index.members.keys()) {
          const entry = records.get(key);
          records.delete(key);
          if (entry) removeIndexes(key, entry.indexed);
        }
      },
    };
  };

  return {
    adapter,
    async unconsume(model, id) {
      // One synchronous step, like consume; the expiry is left as it is.
      const entry = live(`${model}:${id}`);
      if (!entry) return false;
      const payload = JSON.parse(entry.json) as AdapterPayload;
      delete payload.consumed;
      entry.json = JSON.stringify(payload);
      return true;
    },
    attempts,
    inventory: createMemoryInventory({
      entries(model) {
        const start = `${model}:`;
        const found: [string, string][] = [];
        for (const key of [...records.keys()]) {
          const entry = key.startsWith(start) ? live(key) : undefined;
          if (entry) found.push([key.slice(start.length), entry.json]);
        }
        return found;
      },
      destroy: (model, id) => adapter(model).destroy(id),
      grantIds: () => [...grants.keys()],
      async revokeByGrantId(grantId) {
        const removed = grants.get(grantId)?.members.size ?? 0;
        await adapter('Grant').revokeByGrantId(grantId);
        return removed;
      },
    }),
    async ping() {
      // In-process: always answers.
    },
    async close() {
      clearInterval(timer);
    },
  };
}

import { AsyncLocalStorage } from 'node:async_hooks';

import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';

import { AlreadyConsumedError, InvalidCursorError, type StoreUnavailableError } from '../lib/errors.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { MEMORY_STORE_DEFAULT_MAX_MB } from '../lib/settings/types.js';
import { isRef, listedPayload, pageSize, refOf, type StoreInventory } from './inventory.js';
import { createMemoryAttempts } from './memory-attempts.js';
import { createMemoryBudget } from './memory-budget.js';
import { COUNTER_SHARE, FLOW_MODELS, GRANTABLE_MODELS, startsFlow, type SvcStore } from './store.js';

interface Entry {
  /** JSON text, so callers never share a reference with the store (as with Redis). */
  json: string;
  /** Epoch milliseconds, or Infinity. */
  expiresAt: number;
  /** What it counts against the budget, in approximate bytes. */
  cost: number;
  /** What the indexes hold for this record (so removing it needs no parse). */
  indexed?: { uid?: string; userCode?: string; grant?: string };
}

type Index = Map<string, { key: string; expiresAt: number }>;

/** One request's store work (`SvcStore.batch`): the records of flow models it deleted, and a write of one the limit refused. */
interface RequestWork {
  deleted: Set<string>;
  refused?: StoreUnavailableError;
  ended?: boolean;
}

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** How often expired records are swept, in milliseconds (reads also drop expired records). @default 60000 */
  sweepIntervalMs?: number;
  /**
   * Most that records and attempt counters may hold together, in approximate bytes (JSON length plus a fixed cost per
   * entry); a write beyond it is refused with a 503 `server_error`, new interactions already at nine tenths of it.
   * @default 67108864 (64 MiB, `svc.memory-store.max-mb`)
   */
  maxBytes?: number;
  /** The store's clock, epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Where `store_full` and `store_recovered` are logged. */
  logger?: Logger;
}

/** The approximate heap a record takes beside its JSON and key (entry, map slot, indexes). */
const RECORD_OVERHEAD = 512;

/** The heap a string's characters take: V8 keeps one holding any character beyond Latin-1 at two bytes a character. */
const textBytes = (text: string): number => (/[\u0100-\uffff]/.test(text) ? 2 : 1) * text.length;

/** What a record of `json` under `key` counts against the budget. */
const recordCost = (key: string, json: string): number => key.length + textBytes(json) + RECORD_OVERHEAD;

/**
 * The embedded default store: all provider state in this process's memory, with the semantics of
 * the Redis store (TTLs, atomic consume, grant and uid indexes). Nothing is evicted before it
 * expires: writes beyond `maxBytes` are refused (503), as a full Redis under `noeviction` refuses them
 * (`memory-budget.ts`). One process only; everything is lost on restart. Every operation is one synchronous
 * step, so consume and unconsume are atomic; writes act at once, and a request's deletions of flow models when it ends.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): SvcStore & { readonly inventory: StoreInventory } {
  /** `{Model}:{ref}` → record: the inventory names records by `ref` as the Redis store does. */
  const records = new Map<string, Entry>();
  /** Reference of a grant id → record key → expiry. */
  const grants = new Map<string, Map<string, number>>();
  const uids: Index = new Map();
  const userCodes: Index = new Map();
  const keyOf = (model: string, id: string): string => `${model}:${refOf(id)}`;

  const now = options.now ?? ((): number => Date.now());
  const unset = (key: string): void => {
    budget.hold(-(records.get(key)?.cost ?? 0));
    records.delete(key);
  };
  const live = (key: string): Entry | undefined => {
    const entry = records.get(key);
    if (!entry || entry.expiresAt > now()) return entry;
    unset(key);
    return undefined;
  };
  const scope = new AsyncLocalStorage<RequestWork>();
  const work = (): RequestWork | undefined => {
    const current = scope.getStore();
    return current?.ended ? undefined : current;
  };
  /** {@link live}, but not a record the request under way deleted. */
  const seen = (key: string): Entry | undefined => (work()?.deleted.has(key) ? undefined : live(key));
  const expiryOf = (expiresIn?: number): number =>
    typeof expiresIn === 'number' && Number.isFinite(expiresIn) ? now() + expiresIn * 1000 : Infinity;

  /** Drops everything expired; returns the earliest expiry left. */
  const sweep = (): number => {
    const t = now();
    let earliest = Infinity;
    for (const [key, entry] of records) {
      if (entry.expiresAt <= t) unset(key);
      else earliest = Math.min(earliest, entry.expiresAt);
    }
    for (const [id, members] of grants) {
      for (const [key, exp] of members) if (exp <= t) members.delete(key);
      if (members.size === 0) grants.delete(id);
    }
    for (const map of [uids, userCodes]) for (const [k, v] of map) if (v.expiresAt <= t) map.delete(k);
    return Math.min(earliest, attempts.sweep());
  };
  const maxBytes = options.maxBytes ?? MEMORY_STORE_DEFAULT_MAX_MB * 2 ** 20;
  const budget = createMemoryBudget({ maxBytes, now, sweep, logger: options.logger });
  const attempts = createMemoryAttempts(now, { budget, shareBytes: Math.floor(maxBytes * COUNTER_SHARE), logger: options.logger ?? silentLogger });
  const timer = setInterval(sweep, options.sweepIntervalMs ?? 60_000);
  timer.unref();

  /** Replaces a record's payload in place (its consumed mark: a few bytes, taken without asking the budget). */
  const rewrite = (entry: Entry, payload: AdapterPayload): void => {
    const json = JSON.stringify(payload);
    const grown = textBytes(json) - textBytes(entry.json);
    budget.hold(grown);
    entry.cost += grown;
    entry.json = json;
  };
  const read = (entry: Entry | undefined): AdapterPayload | undefined => (entry ? (JSON.parse(entry.json) as AdapterPayload) : undefined);
  const lookup = (map: Index, value: string): AdapterPayload | undefined => {
    const ref = map.get(value);
    return ref && ref.expiresAt > now() ? read(seen(ref.key)) : undefined;
  };

  /** Removes a record and the indexes that point at it. */
  const remove = (key: string): void => {
    const { uid, userCode, grant } = records.get(key)?.indexed ?? {};
    unset(key);
    if (uid && uids.get(uid)?.key === key) uids.delete(uid);
    if (userCode && userCodes.get(userCode)?.key === key) userCodes.delete(userCode);
    const members = grant ? grants.get(grant) : undefined;
    members?.delete(key);
    if (grant && members?.size === 0) grants.delete(grant);
  };

  /** Removes every record of the grant whose id hashes to `ref`; returns how many. */
  const revokeGrant = (ref: string): number => {
    const members = grants.get(ref);
    grants.delete(ref);
    for (const key of members?.keys() ?? []) remove(key);
    return members?.size ?? 0;
  };

  const adapter = (model: string): Adapter => ({
    async upsert(id, payload, expiresIn) {
      const key = keyOf(model, id);
      const json = JSON.stringify(payload);
      const cost = recordCost(key, json);
      const old = live(key);
      const [grows, start] = [cost - (old?.cost ?? 0), !old && startsFlow(model, payload)];
      if (!budget.fits(grows, start)) {
        const refusal = budget.refusal();
        // A flow model's write refused by the limit itself (a full Redis's OOM on the request's deferred writes), not by the
        // headroom kept from strangers, fails the request; other models' writes act at once on Redis too: their caller's answer.
        const current = FLOW_MODELS.has(model) ? work() : undefined;
        if (current && (!start || !budget.fits(grows))) current.refused ??= refusal;
        throw refusal;
      }
      work()?.deleted.delete(key);
      if (old) remove(key);
      const expiresAt = expiryOf(expiresIn);
      const grant = payload.grantId && GRANTABLE_MODELS.has(model) ? refOf(payload.grantId) : undefined;
      const indexed = payload.uid || payload.userCode || grant ? { uid: payload.uid, userCode: payload.userCode, grant } : undefined;
      records.set(key, { json, expiresAt, cost, indexed });
      budget.hold(cost, expiresAt);
      if (model === 'Session' && payload.uid) uids.set(payload.uid, { key, expiresAt });
      if (payload.userCode) userCodes.set(payload.userCode, { key, expiresAt });
      if (grant) grants.set(grant, (grants.get(grant) ?? new Map<string, number>()).set(key, expiresAt));
    },
    find: async (id) => read(seen(keyOf(model, id))),
    // Without its `jti` (her session cookie's value), as the Redis store, whose index holds no session id.
    findByUid: async (uid) => {
      const found = lookup(uids, uid);
      return found && listedPayload(found);
    },
    findByUserCode: async (userCode) => lookup(userCodes, userCode),
    async consume(id) {
      const entry = seen(keyOf(model, id));
      if (!entry) throw new errors.InvalidGrant(`${model} not found or expired`);
      const payload = JSON.parse(entry.json) as AdapterPayload;
      if (payload.consumed) throw new AlreadyConsumedError(model);
      payload.consumed = Math.floor(now() / 1000);
      rewrite(entry, payload);
    },
    async destroy(id) {
      const current = FLOW_MODELS.has(model) ? work() : undefined;
      if (current) current.deleted.add(keyOf(model, id));
      else if (live(keyOf(model, id))) remove(keyOf(model, id));
    },
    async revokeByGrantId(grantId) {
      revokeGrant(refOf(grantId));
    },
  });

  return {
    adapter,
    async unconsume(model, id) {
      const entry = live(keyOf(model, id));
      if (!entry) return false;
      const payload = JSON.parse(entry.json) as AdapterPayload;
      delete payload.consumed;
      rewrite(entry, payload);
      return true;
    },
    async insert(model, id, payload, expiresIn) {
      if (live(keyOf(model, id))) return false;
      // Its body runs to the end before the first await yields: nothing comes between the check and the write.
      await adapter(model).upsert(id, payload, expiresIn);
      return true;
    },
    attempts,
    // Writes act at once; the deletions wait for the request's end and are dropped when the limit refused a write of it.
    async batch<T>(fn: () => Promise<T>): Promise<T> {
      if (work()) return fn();
      const current: RequestWork = { deleted: new Set() };
      try {
        const result = await scope.run(current, fn);
        if (current.refused) throw current.refused;
        return result;
      } finally {
        current.ended = true;
        if (!current.refused) for (const key of current.deleted) if (live(key)) remove(key);
      }
    },
    // Records ordered by reference, the cursor being the last one handed out (each page costs a
    // pass over the model's records: one process, small data).
    inventory: {
      async list(model, page) {
        if (page.cursor !== undefined && !isRef(page.cursor)) throw new InvalidCursorError();
        const limit = pageSize(page.limit);
        const start = `${model}:`;
        const keys = [...records.keys()].filter((key) => key.startsWith(start) && (page.cursor === undefined || key.slice(start.length) > page.cursor) && live(key));
        const taken = keys.sort().slice(0, limit);
        return {
          records: taken.map((key) => ({ ref: key.slice(start.length), payload: listedPayload(read(records.get(key)) as AdapterPayload) })),
          ...(keys.length > limit ? { cursor: taken[taken.length - 1]?.slice(start.length) } : {}),
        };
      },
      async destroy(model, ref) {
        const found = isRef(ref) && live(`${model}:${ref}`) !== undefined;
        if (found) remove(`${model}:${ref}`);
        return found;
      },
      revokeGrant: async (ref) => (isRef(ref) ? revokeGrant(ref) : 0),
    },
    async ping() {
      if (!budget.ready()) throw budget.refusal();
    },
    crowded: async () => budget.crowded(),
    refusesStart: async (model, id, payload) => startsFlow(model, payload) && !budget.fits(recordCost(keyOf(model, id), JSON.stringify(payload)), true),
    async close() {
      clearInterval(timer);
    },
  };
}

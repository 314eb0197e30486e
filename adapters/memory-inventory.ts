import type { AdapterPayload } from 'oidc-provider';

import { isRef, listedPayload, MAX_PAGE, refOf, type StoreInventory } from './inventory.js';
import { InvalidCursorError } from '../lib/errors.js';

/** What the memory store lends its inventory. */
export interface MemoryRecords {
  /** The live records of `model` as `[id, payload JSON]`, in any order. */
  entries(model: string): [string, string][];
  /** Removes a record and its indexes (the adapter's `destroy`). */
  destroy(model: string, id: string): Promise<void>;
  /** Every grant id that has an index. */
  grantIds(): string[];
  /** The adapter's `revokeByGrantId`, resolving how many records it removed. */
  revokeByGrantId(grantId: string): Promise<number>;
}

/**
 * The memory store's {@link StoreInventory}: records ordered by reference, the cursor being the last
 * reference handed out (each page costs a pass over the model's records: one process, small data).
 */
export function createMemoryInventory(records: MemoryRecords): StoreInventory {
  const byRef = (model: string): Map<string, string> => new Map(records.entries(model).map(([id, json]) => [refOf(id), json] as const));
  const idOf = (model: string, ref: string): string | undefined => records.entries(model).find(([id]) => refOf(id) === ref)?.[0];
  return {
    async list(model, page) {
      if (page.cursor !== undefined && !isRef(page.cursor)) throw new InvalidCursorError();
      const limit = Math.max(1, Math.min(page.limit, MAX_PAGE));
      const all = byRef(model);
      const refs = [...all.keys()].filter((ref) => page.cursor === undefined || ref > page.cursor).sort();
      const taken = refs.slice(0, limit);
      return {
        records: taken.map((ref) => ({ ref, payload: listedPayload(JSON.parse(all.get(ref) as string) as AdapterPayload) })),
        ...(refs.length > limit ? { cursor: taken[taken.length - 1] } : {}),
      };
    },
    async destroy(model, ref) {
      const id = isRef(ref) ? idOf(model, ref) : undefined;
      if (id === undefined) return false;
      await records.destroy(model, id);
      return true;
    },
    async revokeGrant(ref) {
      const grantId = isRef(ref) ? records.grantIds().find((id) => refOf(id) === ref) : undefined;
      return grantId === undefined ? 0 : records.revokeByGrantId(grantId);
    },
  };
}

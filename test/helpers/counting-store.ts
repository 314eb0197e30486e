import { decorateAdapter, type SvcStore } from '../../adapters/store.js';

/** A real store that also counts writes per model, to assert that a rejected request stored nothing. */
export interface CountingStore extends SvcStore {
  writes(model: string): number;
  /** Every payload written for `model`, as JSON, in order. */
  written(model: string): string[];
}

/** Wraps `inner`, counting (and keeping) `upsert` calls per model; everything else passes through unchanged. */
export function countingStore(inner: SvcStore): CountingStore {
  const counts = new Map<string, number>();
  const payloads = new Map<string, string[]>();
  return {
    adapter(model) {
      const adapter = inner.adapter(model);
      return decorateAdapter(adapter, {
        upsert: async (id, payload, expiresIn) => {
          counts.set(model, (counts.get(model) ?? 0) + 1);
          payloads.set(model, [...(payloads.get(model) ?? []), JSON.stringify(payload)]);
          return adapter.upsert(id, payload, expiresIn);
        },
      });
    },
    unconsume: (model, id) => inner.unconsume(model, id),
    insert: async (model, id, payload, expiresIn) => {
      counts.set(model, (counts.get(model) ?? 0) + 1);
      payloads.set(model, [...(payloads.get(model) ?? []), JSON.stringify(payload)]);
      return inner.insert(model, id, payload, expiresIn);
    },
    attempts: inner.attempts,
    ping: () => inner.ping(),
    close: () => inner.close(),
    writes: (model) => counts.get(model) ?? 0,
    written: (model) => payloads.get(model) ?? [],
  };
}

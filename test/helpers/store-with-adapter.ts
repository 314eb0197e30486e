import type { Adapter } from 'oidc-provider';

import { decorateAdapter, type SvcStore } from '../../adapters/store.js';

/** `inner` with the adapter of `model` changed by `change` (given that adapter), the rest of the store as it is. */
export function withAdapter(inner: SvcStore, model: string, change: (adapter: Adapter) => Partial<Adapter>): SvcStore {
  return {
    ...inner,
    adapter(name) {
      const adapter = inner.adapter(name);
      return name === model ? decorateAdapter(adapter, change(adapter)) : adapter;
    },
  };
}

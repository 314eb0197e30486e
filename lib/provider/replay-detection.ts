import { errors, type Adapter } from 'oidc-provider';

import type { SvcStore } from '../../adapters/store.js';

/** oidc-provider's model of the client assertions (`jti`) it has seen, each kept until the assertion expires. */
export const REPLAY_DETECTION_MODEL = 'ReplayDetection';

/**
 * oidc-provider looks a client assertion's mark up, then writes it: two requests presenting one
 * assertion side by side both find none. Written with the store's atomic `insert`, the second
 * write fails, and its request gets 401 `invalid_client` as a replay does.
 */
export function onceOnly(model: string, store: Pick<SvcStore, 'insert'>): Partial<Adapter> {
  return {
    upsert: async (id, payload, expiresIn) => {
      if (!(await store.insert(model, id, payload, expiresIn))) throw new errors.InvalidClientAuth('client assertion tokens must only be used once');
    },
  };
}

import { errors, type Adapter } from 'oidc-provider';

import type { SvcStore } from '../../adapters/store.js';
import { currentRequest, MODEL_NAMES } from '../seams.js';
import { requestState, withoutConsumedMark, type Claim } from './request-state.js';

/** Models whose tokens are single use (C6): one registration, or one read, update or delete. */
export const SINGLE_USE_MODELS: ReadonlySet<string> = new Set([MODEL_NAMES.initialAccessToken, MODEL_NAMES.registrationAccessToken]);

/** Models whose writes in a request that claimed a single-use token are undone if it fails. */
export const TRACKED_WRITES: ReadonlySet<string> = new Set([MODEL_NAMES.client, MODEL_NAMES.registrationAccessToken]);

/** Claims a record atomically (the adapter's `consume`): of concurrent claimers exactly one gets `true`. */
export async function claim(adapter: Adapter, id: string): Promise<boolean> {
  try {
    await adapter.consume(id);
    return true;
  } catch (err) {
    if ((err as { error?: string }).error === 'invalid_grant') return false;
    throw err;
  }
}

/** An `upsert` that remembers, in a claiming request, what it writes and the client record it replaces. */
function trackedUpsert(model: string, inner: Adapter): Adapter['upsert'] {
  return async (id, payload, expiresIn) => {
    const ctx = currentRequest();
    const state = ctx ? requestState(ctx) : undefined;
    const known = (entry: { model: string; id: string }): boolean => entry.model === model && entry.id === id;
    if (state && !state.claims.some(known) && !state.writes.some(known)) {
      const previous = model === MODEL_NAMES.client ? await inner.find(id) : undefined;
      state.writes.push({ model, id, adapter: inner, ...(previous ? { previous } : {}) });
    }
    return inner.upsert(id, payload, expiresIn);
  };
}

/**
 * Inside a provider request, looking up an initial or registration access token CLAIMS it atomically
 * (of concurrent requests one finds it, the others get 401 `invalid_token`); `settleSingleUseTokens`
 * settles the claim with the record and writes remembered here. Outside a request a lookup only
 * reads. `HEAD` gets 405 before any claim: it would rotate the token into a body it does not send.
 */
export function singleUseTokens(inner: Adapter, model: string, store: Pick<SvcStore, 'unconsume'>): Partial<Adapter> {
  const upsert = TRACKED_WRITES.has(model) ? { upsert: trackedUpsert(model, inner) } : {};
  if (!SINGLE_USE_MODELS.has(model)) return upsert;
  return {
    ...upsert,
    find: async (id) => {
      const ctx = currentRequest();
      if (!ctx) {
        const payload = await inner.find(id);
        return payload && !payload.consumed ? payload : undefined;
      }
      if (ctx.method === 'HEAD') {
        ctx.set('Allow', 'GET, POST, PUT, DELETE');
        throw new errors.InvalidRequest('HEAD is not supported at the client configuration endpoint; use GET', 405);
      }
      if (!(await claim(inner, id))) return undefined;
      const claimed: Claim = { model, id, adapter: inner, unconsume: () => store.unconsume(model, id) };
      requestState(ctx, true).claims.push(claimed);
      const payload = await inner.find(id);
      if (payload) claimed.snapshot = withoutConsumedMark(payload);
      return payload;
    },
    // The token was claimed before the request was served, so it is spent whether or not
    // oidc-provider's deletion lands: a failure is logged when the request settles, never an error.
    destroy: async (id) => {
      const ctx = currentRequest();
      const claimed = ctx ? requestState(ctx)?.claims.find((c) => c.id === id && c.model === model) : undefined;
      if (claimed) claimed.deleted = true;
      try {
        await inner.destroy(id);
      } catch (err) {
        if (!claimed) throw err;
        claimed.destroyFailed = err;
      }
    },
  };
}

import { errors, type Adapter } from 'oidc-provider';

import type { SvcStore } from '../../adapters/store.js';
import { currentRequest, MODEL_NAMES } from '../seams.js';
import { requestState, withoutConsumedMark, type Claim } from './request-state.js';

/**
 * Models whose tokens are single use (C6): an initial access token registers one client; a
 * registration access token serves one read, update or delete and is then replaced.
 */
export const SINGLE_USE_MODELS: ReadonlySet<string> = new Set([MODEL_NAMES.initialAccessToken, MODEL_NAMES.registrationAccessToken]);

/**
 * Models oidc-provider writes while serving a request that claimed a single-use token. Those
 * writes are remembered per request and undone if the request fails.
 */
export const TRACKED_WRITES: ReadonlySet<string> = new Set([MODEL_NAMES.client, MODEL_NAMES.registrationAccessToken]);

/**
 * Claims a record atomically in the store (the adapter's `consume`): of concurrent claimers exactly
 * one gets `true`. Unknown, expired and already claimed records give `false`.
 */
export async function claim(adapter: Adapter, id: string): Promise<boolean> {
  try {
    await adapter.consume(id);
    return true;
  } catch (err) {
    if ((err as { error?: string }).error === 'invalid_grant') return false;
    throw err;
  }
}

/**
 * An `upsert` that remembers, in the request that claimed a token, which record it writes and what
 * was there before. A client's previous record is read first (an update replaces it); registration
 * access tokens are always new random values, so there is nothing to read.
 */
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
 * What makes single-use tokens single use, on the adapter of `model` ({@link SINGLE_USE_MODELS}
 * and {@link TRACKED_WRITES}): inside a provider request, looking up an initial or
 * registration access token CLAIMS it atomically in the store. oidc-provider looks a token up once
 * per request, in whatever route it resolved (any spelling of the path, any method); of concurrent
 * requests with one token exactly one finds it, the others get oidc-provider's own 401
 * `invalid_token`. The request's outcome settles the claim (`settleSingleUseTokens`); the
 * record as claimed is kept with the claim, and the clients and tokens the request writes are
 * remembered, so that a failed request can be undone and its token given back (`store.unconsume`).
 * Outside a request (code, tests) a lookup only reads, and finds nothing for a claimed token.
 *
 * `HEAD` never uses a registration token: it could only rotate the token into a body HEAD does not
 * send, so it is refused with 405 before anything is claimed.
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
    // oidc-provider deletes the token it used (update, delete, a token of another client). The
    // token was claimed before the request was served, so it is spent whether or not that
    // deletion lands: a failure is recorded and logged when the request settles, never turned
    // into an error after a success.
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

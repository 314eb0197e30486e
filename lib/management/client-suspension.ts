import type { Adapter, AdapterPayload } from 'oidc-provider';

import { decorateAdapter } from '../../adapters/store.js';

/** The store model of the marks that disable a client (one record per disabled client, by `client_id`). */
export const SUSPENSION_MODEL = 'ClientSuspension';

/** What a disabling mark records. */
export interface SuspensionMark {
  /** When the client was disabled, epoch seconds. */
  disabled_at: number;
  /** The management user who disabled it. */
  disabled_by: string;
}

/** Reads a disabling mark from a stored payload. */
export function suspensionOf(payload: AdapterPayload | undefined | void): SuspensionMark | undefined {
  if (!payload) return undefined;
  return { disabled_at: Number(payload.disabled_at), disabled_by: String(payload.disabled_by) };
}

/**
 * Wraps an adapter factory so that a disabled client does not exist for oidc-provider: the `Client`
 * adapter's `find` answers nothing while a {@link SUSPENSION_MODEL} mark exists for the id. Every
 * path that loads a client goes through `Client.find` — authorization, PAR, the token endpoint's
 * client authentication, UserInfo's `loadAccessTokenClient` ("associated client not found"), the
 * registration endpoint — so a disabled client is refused everywhere, under every path spelling,
 * without looking at a path. The mark lives in the shared store: every process sees it at once.
 * The client's own record is never rewritten, so disabling cannot race with the client updating its
 * registration. (Statically provisioned clients never reach the adapter; the toolbox refuses them.)
 */
export function withClientSuspension(adapter: (model: string) => Adapter): (model: string) => Adapter {
  const marks = adapter(SUSPENSION_MODEL);
  return (model) => {
    const inner = adapter(model);
    if (model !== 'Client') return inner;
    return decorateAdapter(inner, {
      find: async (id) => {
        const [payload, mark] = await Promise.all([inner.find(id), marks.find(id)]);
        return mark ? undefined : payload;
      },
    });
  };
}

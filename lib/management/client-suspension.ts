import type { Adapter, AdapterPayload } from 'oidc-provider';

import { ClientDisabledError } from '../errors.js';
import { requestState } from '../registration/request-state.js';
import { currentRequest, MODEL_NAMES, ROUTE_NAMES } from '../seams.js';

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

const CONFIGURATION_ROUTES: ReadonlySet<string> = new Set([ROUTE_NAMES.clientRead, ROUTE_NAMES.clientUpdate, ROUTE_NAMES.clientDelete]);

/**
 * True when the request being served is a client configuration request (read, update, delete, by
 * oidc-provider's route name) that presented a registration access token of client `id` itself:
 * the token was claimed by this request ({@link requestState}) and its record names `id`.
 */
function presentsOwnRegistrationToken(id: string): boolean {
  const ctx = currentRequest();
  if (!ctx || !CONFIGURATION_ROUTES.has(String(ctx.oidc?.route))) return false;
  return (requestState(ctx)?.claims ?? []).some((c) => c.model === MODEL_NAMES.registrationAccessToken && c.snapshot?.clientId === id);
}

/**
 * What makes a disabled client not exist for oidc-provider: the `Client` adapter's `find` answers
 * nothing while a {@link SUSPENSION_MODEL} mark exists for the id (in `marks`). Every
 * path that loads a client goes through `Client.find` — authorization, PAR, the token endpoint's
 * client authentication, UserInfo's `loadAccessTokenClient` ("associated client not found"), the
 * registration endpoint — so a disabled client is refused everywhere, under every path spelling,
 * without looking at a path. The mark lives in the shared store: every process sees it at once.
 * The client's own record is never rewritten, so disabling cannot race with the client updating its
 * registration. (Statically provisioned clients never reach the adapter; the toolbox refuses them.)
 *
 * One lookup is answered differently: at the client configuration endpoint (oidc-provider's routes
 * `client`, `client_update`, `client_delete`), when the request presented the disabled client's own
 * registration access token, `find` throws {@link ClientDisabledError} (403 `client_disabled`)
 * instead of answering nothing. oidc-provider destroys the presented token when the client is not
 * found ("client mismatch"); the throw comes before that, the request fails, and the token it
 * claimed is given back unchanged (`settleSingleUseTokens`), so it works again after `enable`. A
 * token of another client presented there still finds nothing and is destroyed, as oidc-provider
 * does, so nobody learns from it whether a client they do not hold is disabled.
 */
export function suspendedClients(inner: Adapter, marks: Adapter): Partial<Adapter> {
  return {
    find: async (id) => {
      const [payload, mark] = await Promise.all([inner.find(id), marks.find(id)]);
      if (!mark) return payload;
      if (payload && presentsOwnRegistrationToken(id)) throw new ClientDisabledError();
      return undefined;
    },
  };
}

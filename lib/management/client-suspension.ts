import type { Context, Next } from 'koa';
import { errors, type Adapter, type AdapterPayload, type KoaContextWithOIDC } from 'oidc-provider';

import { refOf } from '../../adapters/inventory.js';
import { afterWrites, type SvcStore } from '../../adapters/store.js';
import { ClientDisabledError } from '../errors.js';
import { giveBackConsumedCode } from '../registration/give-back-code.js';
import { GRANT_REVOCATION_MODEL } from './grant-revocation.js';
import { requestState } from '../registration/request-state.js';
import type { Logger } from '../logger.js';
import { requestIdOf, sendError } from '../web/error-response.js';
import { currentRequest, MODEL_NAMES, ROUTE_NAMES } from '../seams.js';

/** The store model of the marks that disable a client (one record per disabled client, by `client_id`). */
export const SUSPENSION_MODEL = 'ClientSuspension';

/**
 * The store model of the marks a client's deletion leaves (by the toolbox or RFC 7592; one record per deleted client, by
 * `client_id`), kept {@link DELETION_MARK_SECONDS}: a request that loaded the client before the delete cannot write it back.
 */
export const DELETION_MODEL = 'ClientDeletion';

/** How long a deletion mark is kept: far longer than any request that loaded the client can still be served. */
export const DELETION_MARK_SECONDS = 86_400;

/** What a disabling mark records: when (epoch seconds) and by which management user. */
export interface SuspensionMark {
  disabled_at: number;
  disabled_by: string;
}

/** Reads a disabling mark from a stored payload. */
export function suspensionOf(payload: AdapterPayload | undefined | void): SuspensionMark | undefined {
  return payload ? { disabled_at: Number(payload.disabled_at), disabled_by: String(payload.disabled_by) } : undefined;
}

const CONFIGURATION_ROUTES: ReadonlySet<string> = new Set([ROUTE_NAMES.clientRead, ROUTE_NAMES.clientUpdate, ROUTE_NAMES.clientDelete]);

/** True when this client configuration request claimed a registration access token of client `id` itself. */
function presentsOwnRegistrationToken(id: string): boolean {
  const ctx = currentRequest();
  if (!ctx || !CONFIGURATION_ROUTES.has(String(ctx.oidc?.route))) return false;
  return (requestState(ctx)?.claims ?? []).some((c) => c.model === MODEL_NAMES.registrationAccessToken && c.snapshot?.clientId === id);
}

/**
 * The `Client` adapter's `find` answers nothing while a {@link SUSPENSION_MODEL} mark exists for the id (in `marks`);
 * its `upsert` of a client deleted meanwhile (a {@link DELETION_MODEL} mark in `deletions`, checked after
 * the write, which the delete's mark precedes) removes what it wrote again and answers 401 `invalid_token`, as the
 * request would have been answered after the delete (RFC 7592 section 2). Every route that loads a client goes through
 * `Client.find`, so a disabled client is refused everywhere, under every path spelling; the mark is in the shared
 * store, so every process sees it at once, and the client's own record is never rewritten (no race with an update).
 *
 * At the client configuration endpoint, presenting the disabled client's own registration access token makes `find`
 * throw {@link ClientDisabledError} (403 `client_disabled`) instead: oidc-provider would destroy a token whose client
 * is not found, but the failed request gives its claimed token back (`settleSingleUseTokens`), so it works again after
 * `enable`. Another client's token still finds nothing and is destroyed, so nobody learns whether a client they do not
 * hold is disabled.
 */
export function suspendedClients(inner: Adapter, marks: Adapter, deletions: Adapter): Partial<Adapter> {
  return {
    upsert: async (id, payload, expiresIn) => {
      await inner.upsert(id, payload, expiresIn);
      if (!(await deletions.find(id))) return;
      await inner.destroy(id);
      throw new errors.InvalidToken('the client has been deleted');
    },
    find: async (id) => {
      const [payload, mark] = await Promise.all([inner.find(id), marks.find(id)]);
      if (!mark) return payload;
      if (payload && presentsOwnRegistrationToken(id)) throw new ClientDisabledError();
      return undefined;
    },
  };
}

/**
 * The `RegistrationAccessToken` and `Grant` adapters' `upsert` of a record whose client was deleted meanwhile (a
 * {@link DELETION_MODEL} mark in `deletions`, checked after the write, which the delete's mark precedes) removes what it
 * wrote again and answers 401 `invalid_token` (a grant: `invalid_grant`): a read or update that loaded the client before
 * the delete rotates its token after the delete removed the client's tokens, and the token, stored without expiry,
 * would stay in the store for good; her consent answered as the delete ran would keep a grant of a client that is gone.
 * The mark is read once `store` holds the request's deferred writes ({@link SvcStore.flush}).
 */
export function tokensOfDeletedClients(inner: Adapter, deletions: Adapter, model: string, store: Pick<SvcStore, 'flush'> = {}): Partial<Adapter> {
  return {
    upsert: async (id, payload, expiresIn) => {
      await inner.upsert(id, payload, expiresIn);
      // A grant's write is deferred in the request's batch: it must be stored before the mark is read.
      if (typeof payload.clientId !== 'string' || !(await afterWrites(store, () => deletions.find(payload.clientId as string)))) return;
      await inner.destroy(id);
      throw model === MODEL_NAMES.grant ? new errors.InvalidGrant('the client has been deleted') : new errors.InvalidToken('the client has been deleted');
    },
  };
}

/**
 * `provider.use` middleware: a token answer for a client disabled or deleted while the request was served (it was
 * found before the mark was set, and waited on its `jwks_uri`, say) is withdrawn, as if the request had arrived
 * after the mark: the tokens it issued are destroyed, the code it redeemed is given back (the store's atomic
 * `unconsume`; spent, a retry after `enable` would revoke her grant as a replay), and the answer is 401
 * `invalid_client`, with the `WWW-Authenticate` challenge of a client refused at once. So is one whose grant the
 * toolbox revoked meanwhile (a {@link GRANT_REVOCATION_MODEL} mark): its tokens are destroyed, and the answer is 400
 * `invalid_grant`, as for the code the revocation removed. A UserInfo answer in such a case carries no user data
 * either: it is 401 `invalid_token`, as after the mark (the access token of a disabled client is kept).
 */
export function withdrawTokensOfDisabledClients(store: Pick<SvcStore, 'adapter' | 'unconsume' | 'flush'>, logger: Logger): (ctx: Context, next: Next) => Promise<void> {
  const [marks, deletions, revocations] = [store.adapter(SUSPENSION_MODEL), store.adapter(DELETION_MODEL), store.adapter(GRANT_REVOCATION_MODEL)];
  return async (ctx, next) => {
    await next();
    const { oidc } = ctx as KoaContextWithOIDC;
    const route = oidc?.route;
    if ((route !== ROUTE_NAMES.token && route !== ROUTE_NAMES.userinfo) || ctx.status !== 200 || !oidc.client) return;
    const { clientId } = oidc.client;
    const grantId = oidc.entities.Grant?.jti;
    // Read once the tokens it issued are stored: on Redis in their round trip, which then ends the request's writes.
    const [disabled, deleted, revoked] = await afterWrites(store, () => Promise.all([marks.find(clientId), deletions.find(clientId), grantId ? revocations.find(refOf(grantId)) : undefined]));
    if (!disabled && !deleted && !revoked) return;
    const reason = deleted ? 'client_deleted' : disabled ? 'client_disabled' : 'grant_revoked';
    if (route === ROUTE_NAMES.userinfo) {
      logger.warn('userinfo_withdrawn', { request_id: requestIdOf(ctx), client_id: clientId, reason });
      sendError(ctx, 401, 'invalid_token', 'invalid token provided');
      ctx.type = 'application/json';
      ctx.set('WWW-Authenticate', `Bearer realm="${oidc.issuer}", error="invalid_token", error_description="invalid token provided"`);
      return;
    }
    const { AccessToken, RefreshToken, ClientCredentials } = oidc.entities;
    for (const token of [AccessToken, RefreshToken, ClientCredentials]) if (token) await token.destroy();
    logger.warn('tokens_withdrawn', { request_id: requestIdOf(ctx), client_id: clientId, reason });
    if (reason === 'grant_revoked') return sendError(ctx, 400, 'invalid_grant', 'grant request is invalid');
    await giveBackConsumedCode(ctx, store);
    sendError(ctx, 401, 'invalid_client', 'client authentication failed');
  };
}

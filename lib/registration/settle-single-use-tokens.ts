import { randomBytes } from 'node:crypto';

import type { Context, Next } from 'koa';
import { errors, type Adapter, type AdapterPayload, type KoaContextWithOIDC } from 'oidc-provider';

import { failureCauseFields, logCaughtError, requestIdOf, sendCaughtError, sendError } from '../web/error-response.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { MODEL_NAMES, ROUTE_NAMES } from '../seams.js';
import { takeRequestState, withoutConsumedMark, type Claim, type RequestState } from './request-state.js';
import { outdated } from './token-reissue.js';

/** Seconds left until `payload.exp`; `undefined` when the record does not expire. */
function remainingLifetime(payload: AdapterPayload): number | undefined {
  return typeof payload.exp === 'number' ? payload.exp - Math.floor(Date.now() / 1000) : undefined;
}

/** Copies a claimed token's record under a fresh value, in the store; a failed copy is deleted again. */
async function reissue(adapter: Adapter, id: string, cleanupFailed: (err: unknown) => void): Promise<string> {
  const payload = await adapter.find(id);
  if (!payload) throw new errors.InvalidToken('registration access token not found');
  const value = randomBytes(32).toString('base64url');
  const copy: AdapterPayload = { ...withoutConsumedMark(payload), jti: value, iat: Math.floor(Date.now() / 1000) };
  try {
    await adapter.upsert(value, copy, remainingLifetime(payload));
  } catch (err) {
    await adapter.destroy(value).catch(cleanupFailed);
    throw err;
  }
  return value;
}

/**
 * Gives a claimed token back after its request failed, with the store's atomic `unconsume`. A record
 * the request deleted to replace it, the replacement never reaching the caller, is re-created from
 * the record as claimed; one gone otherwise (expired, deleted on purpose) stays gone.
 */
async function giveBack(claim: Claim, replaced: boolean): Promise<'released' | 'restored' | 'gone'> {
  if (await claim.unconsume()) return 'released';
  if (!claim.deleted || !replaced || !claim.snapshot) return 'gone';
  const remaining = remainingLifetime(claim.snapshot);
  if (remaining !== undefined && remaining <= 0) return 'gone';
  await claim.adapter.upsert(claim.id, claim.snapshot, remaining);
  return 'restored';
}

/**
 * True when the operator revoked (deleted) a claimed initial access token while its registration was served: its
 * record is gone, and not because it expired meanwhile.
 */
async function someRevokedMeanwhile(state: RequestState): Promise<boolean> {
  for (const c of state.claims) {
    if (c.model !== MODEL_NAMES.initialAccessToken || !c.snapshot) continue;
    const remaining = remainingLifetime(c.snapshot);
    if ((remaining === undefined || remaining > 0) && !(await c.adapter.find(c.id))) return true;
  }
  return false;
}

/**
 * `provider.use` middleware that settles the tokens a request claimed, by oidc-provider's route name
 * and the response status, never the path:
 * - a 2xx registration destroys the initial access token; one whose token the operator revoked meanwhile is
 *   answered 401 `invalid_token` and undone like a failure; so is a read or update whose registration access token
 *   died meanwhile, the operator having issued the client a new one (a mark in `reissueMarks`), and its token is not
 *   given back;
 * - a 2xx read answers with a fresh registration access token and destroys the presented one
 *   (update and delete already rotated it);
 * - any other outcome, a success whose client hung up before its answer included, undoes what the request wrote, then
 *   gives the claimed tokens back; an initial
 *   access token only when every client its request created is gone again, so one token never
 *   registers two clients.
 * A store failure while deciding (a mark not read) answers 503 and undoes the request as any failure; once a success is
 * decided, clean-up failures are logged, never turned into an error response.
 */
export function settleSingleUseTokens(logger: Logger, metrics?: Metrics, reissueMarks?: Adapter): (ctx: Context, next: Next) => Promise<void> {
  const event = (ctx: Context, level: 'info' | 'warn', name: string, fields: Record<string, string | undefined> = {}): void => {
    logger[level](name, { request_id: requestIdOf(ctx), ...fields });
    metrics?.securityEvents.inc({ event: name });
  };
  const failed = (ctx: Context, what: string, err: unknown, clientId?: string): void => {
    const { code, name } = err as { code?: string; name?: string };
    logger.error('token_cleanup_failed', { request_id: requestIdOf(ctx), what, client_id: clientId, code, name, ...failureCauseFields(err) });
  };
  const cleanUp = async (ctx: Context, what: string, work: Promise<unknown>, clientId?: string): Promise<boolean> => {
    try {
      await work;
      return true;
    } catch (err) {
      failed(ctx, what, err, clientId);
      return false;
    }
  };

  /** Undoes the request's writes, newest first; `false` when a client it created is still there. */
  const undoWrites = async (ctx: Context, state: RequestState): Promise<boolean> => {
    let clientsGone = true;
    for (const write of [...state.writes].reverse()) {
      const { model, id, adapter, previous } = write;
      const clientId = model === MODEL_NAMES.client ? id : undefined;
      const undone = previous
        ? await cleanUp(ctx, `restore ${model}`, adapter.upsert(id, previous), clientId)
        : await cleanUp(ctx, `remove unfinished ${model}`, adapter.destroy(id), clientId);
      if (model !== MODEL_NAMES.client) continue;
      if (!undone && !previous) clientsGone = false;
      if (undone) event(ctx, 'warn', 'registration_undone', { route: (ctx as unknown as KoaContextWithOIDC).oidc?.route, client_id: id });
    }
    return clientsGone;
  };

  const settleFailure = async (ctx: Context, state: RequestState): Promise<void> => {
    const clientsGone = await undoWrites(ctx, state);
    const replaced = state.writes.some((w) => w.model === MODEL_NAMES.registrationAccessToken);
    for (const c of state.claims) {
      // Its client could not be removed: the token stays spent (the orphan is logged above).
      if (c.model === MODEL_NAMES.initialAccessToken && !clientsGone) continue;
      try {
        const outcome = await giveBack(c, replaced);
        if (outcome === 'restored') event(ctx, 'warn', 'registration_access_token_restored', { client_id: c.snapshot?.clientId });
      } catch (err) {
        failed(ctx, `release ${c.model}`, err);
      }
    }
  };

  const settleSuccess = async (ctx: Context, claim: Claim): Promise<void> => {
    const { model, id, adapter } = claim;
    if (model === MODEL_NAMES.initialAccessToken) {
      await cleanUp(ctx, 'destroy InitialAccessToken', adapter.destroy(id));
      return event(ctx, 'info', 'initial_access_token_used');
    }
    const oidc = (ctx as unknown as KoaContextWithOIDC).oidc;
    const clientId = oidc.client?.clientId;
    if (oidc.route === ROUTE_NAMES.clientRead) {
      let next: string;
      try {
        next = await reissue(adapter, id, (err) => failed(ctx, 'remove unsent RegistrationAccessToken', err, clientId));
      } catch (err) {
        // The read cannot be answered without its next token: give the presented one back.
        failed(ctx, 'reissue RegistrationAccessToken', err, clientId);
        await cleanUp(ctx, 'release RegistrationAccessToken', giveBack(claim, false));
        sendCaughtError(ctx, err);
        return;
      }
      (ctx.body as Record<string, unknown>).registration_access_token = next;
      await cleanUp(ctx, 'destroy RegistrationAccessToken', adapter.destroy(id));
    }
    // A delete is logged as client_deleted by the provider events; it rotates nothing.
    if (oidc.route !== ROUTE_NAMES.clientDelete) event(ctx, 'info', 'registration_access_token_rotated', { client_id: clientId });
  };

  /** Why the token a served request claimed died meanwhile, or `undefined`; a dead registration access token is not given back. */
  const diedMeanwhile = async (ctx: Context, state: RequestState): Promise<string | undefined> => {
    if (await someRevokedMeanwhile(state)) return 'the initial access token was revoked while the registration was served';
    // A delete is done for good: the mark went with the client.
    if (!reissueMarks || (ctx as unknown as KoaContextWithOIDC).oidc.route === ROUTE_NAMES.clientDelete) return undefined;
    const claim = state.claims.find((c) => c.model === MODEL_NAMES.registrationAccessToken);
    if (!claim || !(await outdated(claim.snapshot, reissueMarks))) return undefined;
    delete claim.snapshot;
    return 'a new registration access token was issued to the client while the request was served';
  };

  const settle = async (ctx: Context, state: RequestState): Promise<void> => {
    for (const c of state.claims) if (c.destroyFailed !== undefined) failed(ctx, `destroy ${c.model}`, c.destroyFailed);
    // A client that hung up (its timeout ran out while the provider fetched its keys) is never sent the answer: undone.
    if (ctx.status < 200 || ctx.status >= 300 || ctx.req.socket?.destroyed === true) return settleFailure(ctx, state);
    let description: string | undefined;
    try {
      description = await diedMeanwhile(ctx, state);
    } catch (err) {
      // Not known to be alive: answered as failed, and undone, so the same token can be sent again (docs/registration.md).
      logCaughtError(logger, ctx, err, sendCaughtError(ctx, err));
      return settleFailure(ctx, state);
    }
    if (description !== undefined) {
      const realm = (ctx as unknown as KoaContextWithOIDC).oidc.issuer;
      ctx.set('WWW-Authenticate', `Bearer realm="${realm}", error="invalid_token", error_description="${description}"`);
      sendError(ctx, 401, 'invalid_token', description);
      return settleFailure(ctx, state);
    }
    for (const c of state.claims) await settleSuccess(ctx, c);
  };

  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const state = takeRequestState(ctx);
      if (state) await settle(ctx, state);
    }
  };
}

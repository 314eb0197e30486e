import type { Context } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

import type { SvcStore } from '../../adapters/store.js';
import { MODEL_NAMES, ROUTE_NAMES } from '../seams.js';

/** Requests whose code was given back: once only, or a second give-back could undo the consumption of a retry. */
const givenBack = new WeakSet<Context>();

/**
 * Gives back the authorization code a token request consumed (oidc-provider names it among the request's entities
 * only once its consumption succeeded) with the store's atomic `unconsume`, at most once per request. For a request
 * that answers no tokens: spent, the client's retry would be taken for a replay and her grant revoked.
 * @returns `false` when there was nothing to give back (another route, no code consumed, given back already).
 */
export async function giveBackConsumedCode(ctx: Context, store: Pick<SvcStore, 'unconsume'>): Promise<boolean> {
  const { oidc } = ctx as unknown as Partial<KoaContextWithOIDC>;
  const jti = oidc?.route === ROUTE_NAMES.token ? oidc.entities?.AuthorizationCode?.jti : undefined;
  if (typeof jti !== 'string' || givenBack.has(ctx)) return false;
  givenBack.add(ctx);
  await store.unconsume(MODEL_NAMES.authorizationCode, jti);
  return true;
}

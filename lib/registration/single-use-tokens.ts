import { randomBytes } from 'node:crypto';

import type { Context, Next } from 'koa';
import Provider, { errors, type Adapter, type AdapterPayload, type KoaContextWithOIDC } from 'oidc-provider';

import { decorateAdapter } from '../../adapters/store.js';
import { oauthErrorBody } from '../http/error-handler.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';

/**
 * Models whose tokens are single use (C6): an initial access token registers one client; a
 * registration access token serves one read, update or delete and is then replaced.
 */
export const SINGLE_USE_MODELS: ReadonlySet<string> = new Set(['InitialAccessToken', 'RegistrationAccessToken']);

/** A token claimed in the store by a request, settled when the request ends. */
interface Claim {
  model: string;
  id: string;
  adapter: Adapter;
  /** oidc-provider's own deletion of the claimed token failed (it is spent anyway). */
  destroyFailed?: unknown;
}

const claimsOf = new WeakMap<object, Claim[]>();

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

/** Gives a claimed record back for its remaining lifetime (its request failed). */
export async function release(adapter: Adapter, id: string): Promise<void> {
  const payload = await adapter.find(id);
  if (!payload) return;
  delete payload.consumed;
  const remaining = typeof payload.exp === 'number' ? payload.exp - Math.floor(Date.now() / 1000) : undefined;
  if (remaining !== undefined && remaining <= 0) return;
  await adapter.upsert(id, payload, remaining);
}

/**
 * Copies a claimed token's record under a fresh random value (same client, policies and expiry)
 * and returns the value. The copy is made in the store, so no oidc-provider class is constructed.
 */
async function reissue(adapter: Adapter, id: string): Promise<string> {
  const payload = await adapter.find(id);
  if (!payload) throw new errors.InvalidToken('registration access token not found');
  const value = randomBytes(32).toString('base64url');
  const { consumed: _consumed, ...rest } = payload;
  const now = Math.floor(Date.now() / 1000);
  const remaining = typeof payload.exp === 'number' ? payload.exp - now : undefined;
  const copy: AdapterPayload = { ...rest, jti: value, iat: now };
  await adapter.upsert(value, copy, remaining);
  return value;
}

/**
 * Wraps an adapter factory so that, inside a provider request, looking up an initial or
 * registration access token CLAIMS it atomically in the store. oidc-provider looks a token up once
 * per request, in whatever route it resolved (any spelling of the path, any method); of concurrent
 * requests with one token exactly one finds it, the others get oidc-provider's own 401
 * `invalid_token`. The request's outcome settles the claim ({@link settleSingleUseTokens}).
 * Outside a request (code, tests) a lookup only reads, and finds nothing for a claimed token.
 *
 * `HEAD` never uses a registration token: it could only rotate the token into a body HEAD does not
 * send, so it is refused with 405 before anything is claimed.
 */
export function withSingleUseTokens(adapter: (model: string) => Adapter): (model: string) => Adapter {
  return (model) => {
    const inner = adapter(model);
    if (!SINGLE_USE_MODELS.has(model)) return inner;
    return decorateAdapter(inner, {
      find: async (id) => {
        const ctx = Provider.ctx;
        if (!ctx) {
          const payload = await inner.find(id);
          return payload && !payload.consumed ? payload : undefined;
        }
        if (ctx.method === 'HEAD') {
          ctx.set('Allow', 'GET, POST, PUT, DELETE');
          throw new errors.InvalidRequest('HEAD is not supported at the client configuration endpoint; use GET', 405);
        }
        if (!(await claim(inner, id))) return undefined;
        const claims = claimsOf.get(ctx) ?? [];
        claims.push({ model, id, adapter: inner });
        claimsOf.set(ctx, claims);
        return inner.find(id);
      },
      // oidc-provider deletes the token it used (update, delete). The token was claimed before the
      // request was served, so it is spent whether or not that deletion lands: a failure is
      // recorded and logged when the request settles, never turned into an error after a success.
      destroy: async (id) => {
        try {
          await inner.destroy(id);
        } catch (err) {
          const ctx = Provider.ctx;
          const claimed = ctx ? claimsOf.get(ctx)?.find((c) => c.id === id && c.model === model) : undefined;
          if (!claimed) throw err;
          claimed.destroyFailed = err;
        }
      },
    });
  };
}

/**
 * `provider.use` middleware that settles the tokens a request claimed, keyed on what oidc-provider
 * resolved (its route name and the response status), never on the path:
 * - a 2xx registration destroys the initial access token; any other outcome gives it back;
 * - a 2xx read (`client` route) answers with a freshly issued registration access token and
 *   destroys the presented one; update and delete already replaced or destroyed it (oidc-provider's
 *   `rotateRegistrationAccessToken`); any other outcome gives the presented token back.
 * Once a success is decided, clean-up failures are logged, never turned into an error response.
 */
export function settleSingleUseTokens(logger: Logger, metrics?: Metrics): (ctx: Context, next: Next) => Promise<void> {
  const event = (ctx: Context, name: string, fields: Record<string, string | undefined> = {}): void => {
    logger.info(name, { request_id: (ctx.state as { requestId?: string }).requestId, ...fields });
    metrics?.securityEvents.inc({ event: name });
  };
  const cleanUp = async (ctx: Context, what: string, work: Promise<unknown>): Promise<void> => {
    try {
      await work;
    } catch (err) {
      logger.error('token_cleanup_failed', {
        request_id: (ctx.state as { requestId?: string }).requestId,
        what,
        code: (err as { code?: string }).code,
        name: (err as Error).name,
      });
    }
  };

  const settle = async (ctx: Context, claim: Claim): Promise<void> => {
    const { model, id, adapter } = claim;
    if (claim.destroyFailed !== undefined) await cleanUp(ctx, `destroy ${model}`, Promise.reject(claim.destroyFailed));
    const succeeded = ctx.status >= 200 && ctx.status < 300;
    if (!succeeded) return cleanUp(ctx, `release ${model}`, release(adapter, id));
    if (model === 'InitialAccessToken') {
      await cleanUp(ctx, 'destroy InitialAccessToken', adapter.destroy(id));
      return event(ctx, 'initial_access_token_used');
    }
    const oidc = (ctx as unknown as KoaContextWithOIDC).oidc;
    const clientId = oidc.client?.clientId;
    if (oidc.route === 'client') {
      let next: string;
      try {
        next = await reissue(adapter, id);
      } catch (err) {
        // The read cannot be answered without its next token: give the presented one back.
        await cleanUp(ctx, 'release RegistrationAccessToken', release(adapter, id));
        const { status, ...body } = oauthErrorBody(err);
        ctx.status = status;
        ctx.body = body;
        return;
      }
      (ctx.body as Record<string, unknown>).registration_access_token = next;
      await cleanUp(ctx, 'destroy RegistrationAccessToken', adapter.destroy(id));
    }
    // A delete is logged as client_deleted by the provider events; it rotates nothing.
    if (oidc.route !== 'client_delete') event(ctx, 'registration_access_token_rotated', { client_id: clientId });
  };

  return async (ctx, next) => {
    try {
      await next();
    } finally {
      const claims = claimsOf.get(ctx);
      if (claims) {
        claimsOf.delete(ctx);
        for (const c of claims) await settle(ctx, c);
      }
    }
  };
}

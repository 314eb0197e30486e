import type { Context, Next } from 'koa';
import type Provider from 'oidc-provider';
import { errors } from 'oidc-provider';

import { oauthErrorBody } from '../http/error-handler.js';
import { readBodyText } from '../http/form-body.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { ROUTES } from '../provider/paths.js';
import { hashClientSecret, isHashedClientSecret } from './client-secrets.js';
import { claim, release } from './single-use.js';

const BODY_LIMIT = 56 * 1024;

function bearer(ctx: Context): string | undefined {
  const match = /^Bearer ([^\s]+)$/i.exec(ctx.get('authorization'));
  return match?.[1];
}

function invalidToken(ctx: Context, description: string): void {
  ctx.status = 401;
  ctx.set('WWW-Authenticate', `Bearer realm="svc-connect", error="invalid_token", error_description="${description.replace(/[^\x20-\x7e]|"/g, '')}"`);
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error: 'invalid_token', error_description: description };
}

/** Renders an error thrown by the guard itself as OAuth JSON (oidc-provider's handler is not around it). */
function renderError(ctx: Context, err: unknown): void {
  const { status, ...body } = oauthErrorBody(err);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = status;
  ctx.body = body;
}

/** Reads a JSON body for the POST → PUT mapping and hands it to oidc-provider as already parsed. */
async function readJson(ctx: Context): Promise<unknown> {
  const text = await readBodyText(ctx, BODY_LIMIT);
  if (text === undefined) throw new errors.InvalidRequest('request entity too large');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new errors.InvalidRequest('failed to parse the request body');
  }
}

/**
 * `provider.use` middleware for the registration routes (C6):
 * - `POST /register`: the initial access token is claimed atomically before registration; a
 *   successful registration (201) destroys it, any other outcome gives it back. Concurrent
 *   registrations with one token: exactly one proceeds, the others get 401 `invalid_token`.
 * - `GET|POST|PUT /register/{id}`: the registration access token is claimed atomically; on success
 *   the response carries a new one and the presented one is destroyed; on failure it stays valid.
 *   `POST` is served as `PUT` (RFC 7592 replacement), with `client_id` filled in when omitted; a
 *   `client_secret` in the body is compared hashed, and responses do not repeat the (hashed) secret.
 */
export function registrationGuard(provider: Provider, logger: Logger, metrics?: Metrics): (ctx: Context, next: Next) => Promise<void> {
  const guard = guardRoutes(provider, logger, metrics);
  const base = ROUTES.registration;
  const guarded = async (ctx: Context, next: Next): Promise<void> => {
    try {
      await guard(ctx, next);
    } catch (err) {
      renderError(ctx, err);
    }
  };
  // Every other provider request passes straight through, without a layer of its own.
  return (ctx, next) => (ctx.path === base || ctx.path.startsWith(`${base}/`) ? guarded(ctx, next) : next());
}

function guardRoutes(provider: Provider, logger: Logger, metrics?: Metrics): (ctx: Context, next: Next) => Promise<void> {
  const event = (ctx: Context, name: string, fields: Record<string, string | undefined> = {}): void => {
    logger.info(name, { request_id: (ctx.state as { requestId?: string }).requestId, ...fields });
    metrics?.securityEvents.inc({ event: name });
  };
  const base = ROUTES.registration;
  return async (ctx, next) => {
    const path = ctx.path;
    if (ctx.method === 'POST' && path === base) {
      const token = bearer(ctx);
      if (!token) return invalidToken(ctx, 'an initial access token is required (Authorization: Bearer ...)');
      const adapter = provider.InitialAccessToken.adapter;
      if (!(await claim(adapter, token))) return invalidToken(ctx, 'initial access token unknown, expired or already used');
      let registered = false;
      try {
        await next();
        registered = ctx.status === 201;
      } finally {
        if (registered) {
          await adapter.destroy(token);
          event(ctx, 'initial_access_token_used');
        } else await release(adapter, token);
      }
      return;
    }

    const clientPath = path.startsWith(`${base}/`) ? decodeURIComponent(path.slice(base.length + 1)) : undefined;
    if (!clientPath || clientPath.includes('/') || !['GET', 'POST', 'PUT'].includes(ctx.method)) return next();

    const token = bearer(ctx);
    if (!token) return invalidToken(ctx, 'a registration access token is required (Authorization: Bearer ...)');
    const adapter = provider.RegistrationAccessToken.adapter;
    if (!(await claim(adapter, token))) return invalidToken(ctx, 'registration access token unknown or already used');

    let succeeded = false;
    try {
      if (ctx.method === 'POST' || ctx.method === 'PUT') {
        const body = await readJson(ctx);
        if (body && typeof body === 'object' && !Array.isArray(body)) {
          const fields = body as Record<string, unknown>;
          if (ctx.method === 'POST' && !('client_id' in fields)) fields.client_id = clientPath;
          // The stored secret is hashed: compare the presented one in the same form.
          if (typeof fields.client_secret === 'string') fields.client_secret = hashClientSecret(fields.client_secret);
        }
        // oidc-provider reads an already parsed body from `ctx.request.body` (Koa's type lacks it).
        (ctx.request as { body?: unknown }).body = body;
        ctx.method = 'PUT';
      }
      const method = ctx.method;
      await next();
      succeeded = ctx.status === 200;
      // The secret was shown once, at registration; what is stored is only its hash.
      if (succeeded && isHashedClientSecret((ctx.body as Record<string, unknown>).client_secret)) delete (ctx.body as Record<string, unknown>).client_secret;
      if (succeeded && method === 'GET') {
        const presented = await provider.RegistrationAccessToken.find(token);
        // The typings omit this constructor's argument; oidc-provider's own PUT handler passes it.
        const Rat = provider.RegistrationAccessToken as unknown as new (p: { clientId: string; policies?: string[] }) => InstanceType<Provider['RegistrationAccessToken']>;
        const rotated = new Rat({ clientId: clientPath, policies: presented?.policies });
        (ctx.body as Record<string, unknown>).registration_access_token = await rotated.save();
      }
    } finally {
      // PUT: oidc-provider already destroyed the presented token and issued a new one.
      if (succeeded) {
        await adapter.destroy(token);
        event(ctx, 'registration_access_token_rotated', { client_id: clientPath });
      } else await release(adapter, token);
    }
  };
}

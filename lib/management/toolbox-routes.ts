import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';

import { MAX_PAGE } from '../../adapters/inventory.js';
import { InvalidCursorError, ToolboxError } from '../errors.js';
import { noStore, sendError } from '../web/error-response.js';
import type { LogFields, Logger } from '../logger.js';
import { audit, subjectHash } from './audit.js';
import { allowMethods } from './guard.js';
import { loginNameCounterKey, normalizeLoginName } from '../interactions/login-throttle.js';
import { singleParameters } from './parameters.js';
import {
  deleteClient,
  listClients,
  listInvitations,
  newRegistrationAccessToken,
  revokeClientGrants,
  revokeInvitation,
  revokeSubject,
  setClientDisabled,
  showClient,
  isInvitationId,
  type Toolbox,
} from './toolbox.js';
import type { Revoked } from './client-deletion.js';

/** What the toolbox routes need beyond the {@link Toolbox}. */
export interface ToolboxOptions extends Toolbox {
  logger: Logger;
  /** Key of the MAC that subject ids are logged under (the first cookie key). */
  subjectKey: string;
  /** The authenticator's canonical form of a login, as the sign-in throttle counts it. */
  canonicalLogin?: (login: string) => string;
}

const MAX_LOGIN_LENGTH = 256;

/** Longest `sub` accepted (OpenID Connect Core 2: at most 255 ASCII characters). */
const MAX_SUB_LENGTH = 255;

/** `limit` (1–500, default 50) and `cursor` from the query, each at most once. */
function pageOf(ctx: Context): { limit: number; cursor?: string } {
  const { limit, cursor } = ctx.query;
  if (Array.isArray(limit) || Array.isArray(cursor)) throw new ToolboxError(400, 'invalid_request', 'give limit and cursor at most once');
  if (limit !== undefined && (!/^\d{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_PAGE)) {
    throw new ToolboxError(400, 'invalid_request', `limit must be a whole number from 1 to ${MAX_PAGE}`);
  }
  return { limit: limit === undefined ? 50 : Number(limit), ...(cursor !== undefined ? { cursor } : {}) };
}

/** The named parameters of the query or form body; 400, 413 or 415 as {@link singleParameters} says. */
async function parametersOf(ctx: Context, names: string[]): Promise<Record<string, string>> {
  const read = await singleParameters(ctx, names);
  if ('error' in read) throw new ToolboxError(read.status, 'invalid_request', read.error);
  return read.values;
}

const revoked = ({ revoked_grants, revoked_tokens }: Revoked): LogFields => ({ revoked_grants, revoked_tokens });

/**
 * Adds the operator toolbox (routes and answers: docs/operations/toolbox.md) to the management
 * router, every route behind `guard` after its method check (405), and every action, reads
 * included, written as one `management_audit` event.
 */
export function addToolboxRoutes(router: Router, guard: Middleware, options: ToolboxOptions): void {
  type Named = (ctx: Context) => string;
  /** Serves `path` for `methods`: the handler fills the audit `fields` and returns the JSON body. */
  const route = (path: string, methods: string[], name: Named, handler: (ctx: Context, fields: LogFields) => Promise<object>): void => {
    router.all(path, allowMethods(methods), guard, async (ctx) => {
      const fields: LogFields = {};
      try {
        const body = await handler(ctx, fields);
        audit(options.logger, ctx, name(ctx), { ...fields, outcome: 'done' });
        ctx.status = 200;
        noStore(ctx);
        ctx.body = body;
      } catch (err) {
        const known = err instanceof ToolboxError ? err : err instanceof InvalidCursorError ? new ToolboxError(400, 'invalid_request', err.message) : undefined;
        // Only an id that named a client is logged (a 409 refuses what a client is): it may be a token pasted in the wrong place.
        if (known?.status !== 409) delete fields.client_id;
        audit(options.logger, ctx, name(ctx), { ...fields, outcome: known?.error ?? 'failed' });
        if (!known) throw err;
        sendError(ctx, known.status, known.error, known.message);
      }
    });
  };
  /** A route under `/clients/{client_id}`: the client id is in every audit event, failures included. */
  const clientRoute = (path: string, methods: string[], name: Named, handler: (id: string, ctx: Context, f: LogFields) => Promise<object>): void =>
    route(`/clients/:client_id${path}`, methods, name, async (ctx, fields) => {
      const clientId = String((ctx.params as Record<string, string>).client_id);
      fields.client_id = clientId;
      return handler(clientId, ctx, fields);
    });
  const named = (n: string) => (): string => n;

  route('/clients', ['GET'], named('clients.list'), async (ctx, fields) => {
    const page = await listClients(options, pageOf(ctx));
    fields.count = page.clients.length;
    return page;
  });
  clientRoute('', ['GET', 'DELETE'], (ctx) => (ctx.method === 'DELETE' ? 'clients.delete' : 'clients.show'), async (clientId, ctx, fields) => {
    if (ctx.method !== 'DELETE') return showClient(options, clientId);
    const result = await deleteClient(options, clientId, String(ctx.state.managementUser));
    Object.assign(fields, revoked(result));
    return result;
  });
  for (const [path, disabled] of [['disable', true], ['enable', false]] as const) {
    clientRoute(`/${path}`, ['POST'], named(`clients.${path}`), async (clientId, ctx, fields) => {
      const result = await setClientDisabled(options, clientId, disabled, String(ctx.state.managementUser));
      fields.changed = result.changed;
      return result;
    });
  }
  clientRoute('/revoke-grants', ['POST'], named('clients.revoke_grants'), async (clientId, _ctx, fields) => {
    const result = await revokeClientGrants(options, clientId);
    Object.assign(fields, revoked(result));
    return result;
  });
  // The token is in the answer only, shown this once: never in the audit event.
  clientRoute('/registration-access-token', ['POST'], named('clients.registration_access_token'), (clientId, ctx) => newRegistrationAccessToken(options, clientId, String(ctx.state.managementUser)));
  route('/invitations', ['GET'], named('invitations.list'), async (ctx, fields) => {
    const page = await listInvitations(options, pageOf(ctx));
    fields.count = page.invitations.length;
    return page;
  });
  route('/invitations/:id', ['DELETE'], named('invitations.revoke'), async (ctx, fields) => {
    const id = String((ctx.params as Record<string, string>).id);
    // Only a well-formed id is logged: a token pasted by mistake never reaches the log.
    if (isInvitationId(id)) fields.invitation = id;
    return revokeInvitation(options, id);
  });
  route('/logins/reset', ['POST'], named('logins.reset'), async (ctx, fields) => {
    const { login } = await parametersOf(ctx, ['login']);
    if (!login?.trim()) throw new ToolboxError(400, 'invalid_request', 'the login parameter is required');
    if (login.length > MAX_LOGIN_LENGTH) throw new ToolboxError(400, 'invalid_request', `the login parameter is longer than ${MAX_LOGIN_LENGTH} characters`);
    // The name's failures, cool-down and run of failures in a row (C8); devices keep their own counts.
    const canonical = options.canonicalLogin ?? normalizeLoginName;
    fields.login_hash = subjectHash(canonical(login), options.subjectKey);
    await options.store.attempts.forget(loginNameCounterKey(login, options.subjectKey, canonical));
    return { reset: true };
  });
  route('/subjects/revoke', ['POST'], named('subjects.revoke'), async (ctx, fields) => {
    const { sub, client_id: clientId } = await parametersOf(ctx, ['sub', 'client_id']);
    if (!sub) throw new ToolboxError(400, 'invalid_request', 'the sub parameter is required');
    if (sub.length > MAX_SUB_LENGTH) throw new ToolboxError(400, 'invalid_request', `the sub parameter is longer than ${MAX_SUB_LENGTH} characters`);
    fields.sub_hash = subjectHash(sub, options.subjectKey);
    if (clientId) fields.client_id = clientId;
    const result = await revokeSubject(options, sub, clientId || undefined);
    Object.assign(fields, result);
    return { sub_hash: fields.sub_hash, ...result };
  });
}

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
  revokeClientGrants,
  revokeInvitation,
  revokeSubject,
  setClientDisabled,
  showClient,
  isInvitationId,
  type Toolbox,
} from './toolbox.js';

/** What the toolbox routes need beyond the {@link Toolbox}. */
export interface ToolboxOptions extends Toolbox {
  logger: Logger;
  /** Key of the MAC that subject ids are logged under (the first cookie key). */
  subjectKey: string;
  /** The authenticator's canonical form of a login, as the sign-in throttle counts it. */
  canonicalLogin?: (login: string) => string;
}

/** Longest login name the toolbox resets. */
const MAX_LOGIN_LENGTH = 256;

/** Longest `sub` accepted (OpenID Connect Core 2: at most 255 ASCII characters). */
const MAX_SUB_LENGTH = 255;

/** Default page size of the listings. */
const DEFAULT_PAGE = 50;

/** `limit` (1–500, default 50) and `cursor` from the query, each at most once. */
function pageOf(ctx: Context): { limit: number; cursor?: string } {
  const { limit, cursor } = ctx.query;
  if (Array.isArray(limit) || Array.isArray(cursor)) throw new ToolboxError(400, 'invalid_request', 'give limit and cursor at most once');
  let size = DEFAULT_PAGE;
  if (limit !== undefined) {
    if (!/^\d{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_PAGE) throw new ToolboxError(400, 'invalid_request', `limit must be a whole number from 1 to ${MAX_PAGE}`);
    size = Number(limit);
  }
  return { limit: size, ...(cursor !== undefined ? { cursor } : {}) };
}

const clientIdOf = (ctx: Context): string => String((ctx.params as Record<string, string>).client_id);

/**
 * Adds the operator toolbox to the management router, every route behind `guard` (cross-site 403,
 * shared lockout 429, HTTP Basic 401) after its method check (405), and every action — reads
 * included — written as one `management_audit` event (user, action, client id / invitation id /
 * subject hash, counts, outcome):
 *
 * | Route | Method | Action |
 * |---|---|---|
 * | `/clients?limit&cursor` | GET | `clients.list` |
 * | `/clients/{client_id}` | GET / DELETE | `clients.show` / `clients.delete` |
 * | `/clients/{client_id}/disable`, `/enable` | POST | `clients.disable` / `clients.enable` |
 * | `/clients/{client_id}/revoke-grants` | POST | `clients.revoke_grants` |
 * | `/invitations?limit&cursor` | GET | `invitations.list` |
 * | `/invitations/{id}` | DELETE | `invitations.revoke` |
 * | `/subjects/revoke` (`sub`, optionally `client_id` whose `sub` it is, in the query or a form body) | POST | `subjects.revoke` |
 * | `/logins/reset` (`login`, in the query or a form body) | POST | `logins.reset` |
 */
export function addToolboxRoutes(router: Router, guard: Middleware, options: ToolboxOptions): void {
  const { logger } = options;
  const action = (methods: string[], name: (ctx: Context) => string, handler: (ctx: Context, fields: LogFields) => Promise<Record<string, unknown>>): Middleware[] => [
    allowMethods(methods),
    guard,
    async (ctx) => {
      const fields: LogFields = {};
      try {
        const body = await handler(ctx, fields);
        audit(logger, ctx, name(ctx), { ...fields, outcome: 'done' });
        ctx.status = 200;
        noStore(ctx);
        ctx.body = body;
      } catch (err) {
        const known = err instanceof ToolboxError ? err : err instanceof InvalidCursorError ? new ToolboxError(400, 'invalid_request', err.message) : undefined;
        audit(logger, ctx, name(ctx), { ...fields, outcome: known?.error ?? 'failed' });
        if (!known) throw err;
        sendError(ctx, known.status, known.error, known.message);
      }
    },
  ];
  const named = (n: string) => (): string => n;

  router.all('/clients', ...action(['GET'], named('clients.list'), async (_ctx, fields) => {
    const page = await listClients(options, pageOf(_ctx));
    fields.count = page.items.length;
    return {
      clients: page.items,
      ...(page.static_clients ? { static_clients: page.static_clients } : {}),
      ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}),
    };
  }));
  router.all('/clients/:client_id', ...action(['GET', 'DELETE'], (ctx) => (ctx.method === 'DELETE' ? 'clients.delete' : 'clients.show'), async (ctx, fields) => {
    fields.client_id = clientIdOf(ctx);
    if (ctx.method !== 'DELETE') return showClient(options, clientIdOf(ctx));
    const result = await deleteClient(options, clientIdOf(ctx));
    Object.assign(fields, { revoked_grants: result.revoked_grants, revoked_tokens: result.revoked_tokens });
    return result;
  }));
  for (const [path, disabled] of [['disable', true], ['enable', false]] as const) {
    router.all(`/clients/:client_id/${path}`, ...action(['POST'], named(`clients.${path}`), async (ctx, fields) => {
      fields.client_id = clientIdOf(ctx);
      const result = await setClientDisabled(options, clientIdOf(ctx), disabled, String(ctx.state.managementUser));
      fields.changed = result.changed;
      return result;
    }));
  }
  router.all('/clients/:client_id/revoke-grants', ...action(['POST'], named('clients.revoke_grants'), async (ctx, fields) => {
    fields.client_id = clientIdOf(ctx);
    const result = await revokeClientGrants(options, clientIdOf(ctx));
    Object.assign(fields, { revoked_grants: result.revoked_grants, revoked_tokens: result.revoked_tokens });
    return result;
  }));
  router.all('/invitations', ...action(['GET'], named('invitations.list'), async (ctx, fields) => {
    const page = await listInvitations(options, pageOf(ctx));
    fields.count = page.items.length;
    return { invitations: page.items, ...(page.next_cursor ? { next_cursor: page.next_cursor } : {}) };
  }));
  router.all('/invitations/:id', ...action(['DELETE'], named('invitations.revoke'), async (ctx, fields) => {
    const id = String((ctx.params as Record<string, string>).id);
    // Only a well-formed id is logged: a token pasted by mistake never reaches the log.
    if (isInvitationId(id)) fields.invitation = id;
    return revokeInvitation(options, id);
  }));
  router.all('/logins/reset', ...action(['POST'], named('logins.reset'), async (ctx, fields) => {
    const parameters = await singleParameters(ctx, ['login']);
    if ('error' in parameters) throw new ToolboxError(parameters.status, 'invalid_request', parameters.error);
    const { login } = parameters.values;
    if (!login?.trim()) throw new ToolboxError(400, 'invalid_request', 'the login parameter is required');
    if (login.length > MAX_LOGIN_LENGTH) throw new ToolboxError(400, 'invalid_request', `the login parameter is longer than ${MAX_LOGIN_LENGTH} characters`);
    // The name's failures, cool-down and run of failures in a row (C8); devices keep their own counts.
    const canonical = options.canonicalLogin ?? normalizeLoginName;
    fields.login_hash = subjectHash(canonical(login), options.subjectKey);
    await options.store.attempts.forget(loginNameCounterKey(login, options.subjectKey, canonical));
    return { reset: true };
  }));
  router.all('/subjects/revoke', ...action(['POST'], named('subjects.revoke'), async (ctx, fields) => {
    const parameters = await singleParameters(ctx, ['sub', 'client_id']);
    if ('error' in parameters) throw new ToolboxError(parameters.status, 'invalid_request', parameters.error);
    const { sub, client_id: clientId } = parameters.values;
    if (!sub) throw new ToolboxError(400, 'invalid_request', 'the sub parameter is required');
    if (sub.length > MAX_SUB_LENGTH) throw new ToolboxError(400, 'invalid_request', `the sub parameter is longer than ${MAX_SUB_LENGTH} characters`);
    fields.sub_hash = subjectHash(sub, options.subjectKey);
    if (clientId) fields.client_id = clientId;
    const result = await revokeSubject(options, sub, clientId || undefined);
    Object.assign(fields, result);
    return { sub_hash: fields.sub_hash, ...result };
  }));
}

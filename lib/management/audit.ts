import { createHmac } from 'node:crypto';

import type { Context } from 'koa';

import type { LogFields, Logger } from '../logger.js';
import { requestIdOf } from '../web/error-response.js';

/**
 * The hash a person's `sub` is logged under: a keyed MAC (HMAC-SHA-256 with the first cookie key,
 * 128 bits), so the logs let an operator match the events of one person without naming them, and
 * a reader of the logs without the key cannot confirm a guessed `sub`.
 */
export function subjectHash(sub: string, key: string): string {
  return createHmac('sha256', key).update(`sub:${sub}`, 'utf8').digest('base64url').slice(0, 22);
}

/** The management user the guard signed in for the request `ctx`: who acted, for each management event. */
export const managementUserOf = (ctx: Context): string | undefined => (ctx.state as { managementUser?: string }).managementUser;

/**
 * Writes one `management_audit` event: the management user, the action (e.g. `clients.disable`),
 * the request id, ids and counts only (never a secret, token or claim value), and the `outcome`:
 * `done`, or why nothing was done (`not_found`, `static_client`, …).
 */
export function audit(logger: Logger, ctx: Context, action: string, fields: LogFields & { outcome: string }): void {
  logger.info('management_audit', { request_id: requestIdOf(ctx), user: managementUserOf(ctx), action, ...fields });
}

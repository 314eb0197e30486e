import { createHmac } from 'node:crypto';

import type { Context } from 'koa';

import type { LogFields, Logger } from '../logger.js';

/**
 * The hash a person's `sub` is logged under: a keyed MAC (HMAC-SHA-256 with the first cookie key,
 * 128 bits), so the logs let an operator match the events of one person without naming them, and
 * a reader of the logs without the key cannot confirm a guessed `sub`.
 */
export function subjectHash(sub: string, key: string): string {
  return createHmac('sha256', key).update(`sub:${sub}`, 'utf8').digest('base64url').slice(0, 22);
}

/** What one audit event says beyond who and what. */
export interface AuditFields extends LogFields {
  /** `done`, or why nothing was done (`not_found`, `static_client`, …). */
  outcome: string;
}

/**
 * Writes one `management_audit` event: the management user (`user`), the action (`action`, e.g.
 * `clients.disable`), the request id, and ids only — a client id, an invitation id (a hash), a
 * subject hash, counts. Never a secret, token, or claim value.
 */
export function audit(logger: Logger, ctx: Context, action: string, fields: AuditFields): void {
  logger.info('management_audit', {
    request_id: ctx.state.requestId as string | undefined,
    user: ctx.state.managementUser as string | undefined,
    action,
    ...fields,
  });
}

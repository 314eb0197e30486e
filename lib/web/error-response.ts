import type { Context } from 'koa';

import { AuthenticatorError, AuthenticatorUnavailableError, ClaimModuleError, MailDeliveryError, StoreUnavailableError, isSvcError } from '../errors.js';
import { describeFailure, type LogFields, type Logger } from '../logger.js';

/** The members of an OAuth JSON error answer, with its HTTP status. */
export interface OAuthErrorAnswer {
  status: number;
  error: string;
  error_description: string;
}

interface ErrorLike {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  error?: string;
  error_description?: string;
  message?: string;
  name?: string;
  code?: string;
}

/** OAuth-style error codes for plain HTTP statuses thrown by our own routes. */
const CODE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request',
  401: 'invalid_token',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'invalid_request',
  415: 'invalid_request',
  429: 'too_many_requests',
};

/** The one fixed description of an error that is not shown (anything unexpected). */
const SERVER_ERROR_DESCRIPTION = 'the request could not be completed';

/** The status and OAuth JSON body for a thrown error: exposed errors as they are, anything else a 500 `server_error`. */
export function oauthErrorBody(caught: unknown): OAuthErrorAnswer {
  const err = (caught ?? {}) as ErrorLike;
  const status = err.statusCode ?? err.status ?? 500;
  if (!err.expose || status >= 500) {
    if (err.expose && err.error) return { status, error: err.error, error_description: err.error_description ?? '' };
    return { status: 500, error: 'server_error', error_description: SERVER_ERROR_DESCRIPTION };
  }
  const error = err.error ?? CODE_BY_STATUS[status] ?? 'invalid_request';
  return { status, error, error_description: err.error_description ?? err.message ?? '' };
}

/**
 * `Cache-Control: no-store`, for every error answer, page, and answer carrying a secret or a person's data, and
 * `Pragma: no-cache` beside it, as the provider's answers carry it (RFC 6749 5.1; HTTP/1.0 caches read only that).
 */
export function noStore(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
}

/** Answers with an OAuth JSON error (`extra` members first), not to be cached: every JSON error body of ours. */
export function sendError(ctx: Context, status: number, error: string, description: string, extra: Record<string, unknown> = {}): void {
  ctx.status = status;
  noStore(ctx);
  ctx.body = { ...extra, error, error_description: description };
}

/** {@link sendError} for a thrown error, as {@link oauthErrorBody} shows it. */
export function sendCaughtError(ctx: Context, caught: unknown): OAuthErrorAnswer {
  const out = oauthErrorBody(caught);
  sendError(ctx, out.status, out.error, out.error_description);
  return out;
}

/**
 * Why a store or mail failure happened, as {@link describeFailure} fields; which plug-in failed, with the name and code
 * of what it threw; nothing for other errors, which may repeat what a caller sent.
 */
export function failureCauseFields(err: unknown): LogFields {
  if (err instanceof ClaimModuleError || err instanceof AuthenticatorError || err instanceof AuthenticatorUnavailableError) return { plugin: err.plugin, cause_name: err.thrown.name, cause_code: err.thrown.code };
  return err instanceof StoreUnavailableError || err instanceof MailDeliveryError ? describeFailure(err, err.where) : {};
}

/**
 * Notes that the request `ctx` failed because the store did not answer: `requestLogging` counts it, once,
 * in `svc_store_errors_total`, whichever layer answered the failure.
 */
export function noteStoreFailure(ctx?: { state?: unknown }): void {
  if (ctx?.state && typeof ctx.state === 'object') (ctx.state as { storeFailed?: boolean }).storeFailed = true;
}

/** Whether {@link noteStoreFailure} was told about the request `ctx`. */
export const storeFailed = (ctx?: { state?: unknown }): boolean => (ctx?.state as { storeFailed?: boolean } | undefined)?.storeFailed === true;

/** The id `requestLogging` gave the request `ctx` (if any), for log lines. */
export const requestIdOf = (ctx?: { state?: unknown }): string | undefined => (ctx?.state as { requestId?: string } | undefined)?.requestId;

/**
 * Logs an error that was answered: `request_failed` for a `server_error`, else `request_refused`.
 * Names, codes and the OAuth `error` only: a message may repeat what the caller sent.
 */
export function logCaughtError(logger: Logger, ctx: Context, caught: unknown, out: OAuthErrorAnswer = oauthErrorBody(caught)): void {
  const err = (caught ?? {}) as ErrorLike;
  const code = isSvcError(caught) ? caught.code : typeof err.code === 'string' ? err.code : undefined;
  if (caught instanceof StoreUnavailableError) noteStoreFailure(ctx);
  if (out.error === 'server_error' || out.status >= 500) {
    // No path: it may hold what a caller pasted there; the request line of the same id names the route.
    logger.error('request_failed', { request_id: requestIdOf(ctx), status: out.status, name: err.name, code, ...failureCauseFields(caught) });
  } else {
    logger.info('request_refused', { request_id: requestIdOf(ctx), status: out.status, error: out.error, name: err.name, code });
  }
}

/** Logs an error answer a handler rendered itself (no exception): `request_refused`, at warn for 5xx. */
export function logErrorAnswer(logger: Logger, ctx: Context): void {
  const body = ctx.body as { error?: unknown } | undefined;
  const error = body && typeof body === 'object' && typeof body.error === 'string' && /^[a-z_]{1,64}$/.test(body.error) ? body.error : undefined;
  logger[ctx.status >= 500 ? 'warn' : 'info']('request_refused', { request_id: requestIdOf(ctx), status: ctx.status, error });
}

/**
 * `text` within the characters RFC 6749 allows in `error_description` (%x20-21 / %x23-5B / %x5D-7E): a double
 * quotation mark becomes a single one, and any other character outside them `U+XXXX`.
 */
export function oauthDescription(text: string): string {
  return [...text].map((c) => (c === '"' ? "'" : /^[\x20-\x21\x23-\x5B\x5D-\x7E]$/.test(c) ? c : `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`)).join('');
}

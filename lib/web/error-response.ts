import type { Context } from 'koa';

import { MailDeliveryError, StoreUnavailableError, isSvcError } from '../errors.js';
import { describeFailure, type LogFields, type Logger } from '../logger.js';

/** The members of an OAuth JSON error answer, with its HTTP status. */
export interface OAuthErrorAnswer {
  status: number;
  /** The OAuth `error` code. */
  error: string;
  /** The human-readable `error_description`. */
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
export const SERVER_ERROR_DESCRIPTION = 'the request could not be completed';

/**
 * The HTTP status and OAuth JSON body for a thrown error: exposed errors keep their code and
 * description, anything else becomes a 500 `server_error` with a fixed description (never an
 * internal message).
 */
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
 * Marks a response as not to be kept by any cache: every error answer, every answer carrying a
 * secret or a person's data, every page. The one place `Cache-Control: no-store` is set.
 */
export function noStore(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
}

/**
 * Answers with an OAuth JSON error: the status, `Cache-Control: no-store` and
 * `{"error","error_description"}` (after any `extra` members). Every JSON error body of
 * svc-connect's own code is written here.
 */
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
 * Why a store or mail failure happened, as log fields ({@link describeFailure}: code, message
 * without credentials, arguments or recipient addresses, host and port); nothing for other errors,
 * whose messages may repeat what a caller sent.
 */
export function failureCauseFields(err: unknown): LogFields {
  return err instanceof StoreUnavailableError || err instanceof MailDeliveryError ? describeFailure(err, err.where) : {};
}

const requestIdOf = (ctx: Context): string | undefined => (ctx.state as { requestId?: string } | undefined)?.requestId;

/**
 * Logs an error that was caught and answered: `request_failed` (error) when the caller got
 * `server_error`, `request_refused` (info) for a refusal the caller caused. Names, codes and the
 * OAuth `error` only: never a message or description, which may repeat what the caller sent.
 */
export function logCaughtError(logger: Logger, ctx: Context, caught: unknown, out: OAuthErrorAnswer = oauthErrorBody(caught)): void {
  const err = (caught ?? {}) as ErrorLike;
  const code = isSvcError(caught) ? caught.code : typeof err.code === 'string' ? err.code : undefined;
  if (out.error === 'server_error' || out.status >= 500) {
    logger.error('request_failed', { request_id: requestIdOf(ctx), path: ctx.path, status: out.status, name: err.name, code, ...failureCauseFields(caught) });
  } else {
    logger.info('request_refused', { request_id: requestIdOf(ctx), status: out.status, error: out.error, name: err.name, code });
  }
}

/**
 * Logs an error answer a handler rendered itself (no exception: a guard's 401/405/429, a 503 from
 * `/readyz`, an error page): `request_refused`, at warn for 5xx and info otherwise, with the
 * OAuth `error` of a JSON body.
 */
export function logErrorAnswer(logger: Logger, ctx: Context): void {
  const body = ctx.body as { error?: unknown } | undefined;
  const error = body && typeof body === 'object' && typeof body.error === 'string' && /^[a-z_]{1,64}$/.test(body.error) ? body.error : undefined;
  logger[ctx.status >= 500 ? 'warn' : 'info']('request_refused', { request_id: requestIdOf(ctx), status: ctx.status, error });
}

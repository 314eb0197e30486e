import type { Context, Middleware } from 'koa';

import type { Logger } from '../logger.js';
import { renderErrorPage } from './error-page.js';

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

/**
 * The HTTP status and OAuth JSON body for an error: exposed errors keep their code and description,
 * anything else becomes a 500 `server_error` with a fixed description.
 */
export function oauthErrorBody(caught: unknown): { status: number; error: string; error_description: string } {
  const err = (caught ?? {}) as ErrorLike;
  const status = err.statusCode ?? err.status ?? 500;
  if (!err.expose || status >= 500) {
    if (err.expose && err.error) return { status, error: err.error, error_description: err.error_description ?? '' };
    return { status: 500, error: 'server_error', error_description: 'the request could not be completed' };
  }
  const error = err.error ?? CODE_BY_STATUS[status] ?? 'invalid_request';
  return { status, error, error_description: err.error_description ?? err.message ?? '' };
}

/**
 * Renders errors of our own routes (health, interactions, management, demo): OAuth JSON
 * `{"error","error_description"}` for API clients, the friendly error page for browsers. Never a
 * stack or an internal message; unexpected errors are logged by name only.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx: Context, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { error: 'not_found', error_description: 'no such endpoint' };
      }
    } catch (caught) {
      const err = (caught ?? {}) as ErrorLike;
      const out = oauthErrorBody(err);
      if (out.error === 'server_error') logger.error('request_failed', { path: ctx.path, name: err.name, code: err.code });
      ctx.status = out.status;
      if (ctx.accepts('json', 'html') === 'html') {
        await renderErrorPage(ctx, out);
        ctx.status = out.status;
      } else {
        ctx.body = { error: out.error, error_description: out.error_description };
      }
    }
  };
}

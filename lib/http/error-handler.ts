import type { Context, Middleware } from 'koa';

import type { Logger } from '../logger.js';
import { renderErrorPage } from '../pages/error-page.js';
import { logCaughtError, logErrorAnswer, oauthErrorBody, sendError } from '../web/error-response.js';

/**
 * Renders errors of our own routes (health, interactions, management, demo): OAuth JSON
 * `{"error","error_description"}` for API clients, the friendly error page for browsers. Never a
 * stack or an internal message. Every error is logged: a thrown one as `request_failed` (error) or
 * `request_refused` (info), an error answer a route rendered itself as `request_refused`.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx: Context, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) sendError(ctx, 404, 'not_found', 'no such endpoint');
    } catch (caught) {
      const out = oauthErrorBody(caught);
      logCaughtError(logger, ctx, caught, out);
      if (ctx.accepts('json', 'html') === 'html') {
        ctx.status = out.status;
        await renderErrorPage(ctx, out);
        ctx.status = out.status;
      } else {
        sendError(ctx, out.status, out.error, out.error_description);
      }
      return;
    }
    if (ctx.status >= 400) logErrorAnswer(logger, ctx);
  };
}

/**
 * The listener for Koa's `error` event of an app of ours: errors that escaped every handler (a
 * failing response stream, a throw outside the error handler). Koa has answered already; the
 * error is logged like any other caught error, by name and code only.
 */
export function logUnhandledErrors(logger: Logger): (err: unknown, ctx?: Context) => void {
  return (err, ctx) => {
    if (ctx) logCaughtError(logger, ctx, err);
    else logger.error('request_failed', { name: (err as { name?: string } | undefined)?.name, code: (err as { code?: string } | undefined)?.code });
  };
}

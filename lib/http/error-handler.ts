import type { Context, Middleware } from 'koa';

import type { Logger } from '../logger.js';
import { answerError } from '../pages/error-page.js';
import { logCaughtError, logErrorAnswer, oauthErrorBody, sendError } from '../web/error-response.js';

/**
 * Renders errors of our own routes: OAuth JSON for API clients, the error page for browsers, never a
 * stack or an internal message. Every error is logged, a thrown one and an error answer a route rendered itself.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx: Context, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) sendError(ctx, 404, 'not_found', 'no such endpoint');
    } catch (caught) {
      const out = oauthErrorBody(caught);
      logCaughtError(logger, ctx, caught, out);
      await answerError(ctx, out);
      return;
    }
    if (ctx.status >= 400) logErrorAnswer(logger, ctx);
  };
}

/** The listener for Koa's `error` event (errors that escaped every handler): logged by name and code only, as any other. */
export function logUnhandledErrors(logger: Logger): (err: unknown, ctx?: Context) => void {
  return (err, ctx) => {
    if (ctx) logCaughtError(logger, ctx, err);
    else logger.error('request_failed', { name: (err as { name?: string } | undefined)?.name, code: (err as { code?: string } | undefined)?.code });
  };
}

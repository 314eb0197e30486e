import type { Context, Middleware } from 'koa';
import compose from 'koa-compose';

import type { Logger } from '../logger.js';
import { answerError } from '../pages/error-page.js';
import { logCaughtError, logErrorAnswer, oauthErrorBody, sendError } from '../web/error-response.js';

/** What a router leaves without a body: no route (404), another method (405), a method no route knows (501). */
const UNANSWERED: Record<number, [error: string, description: string]> = {
  404: ['not_found', 'no such endpoint'],
  405: ['method_not_allowed', 'the endpoint does not accept this method'],
  501: ['invalid_request', 'no endpoint accepts this method'],
};

/** After `next`: a request a router left {@link UNANSWERED} gets OAuth's JSON, not Koa's text ("Not Found", "Method Not Allowed"). */
async function answerUnmatched(ctx: Context, next: () => Promise<unknown>): Promise<boolean> {
  await next();
  const answer = UNANSWERED[ctx.status];
  if (!answer || ctx.body !== undefined) return false;
  sendError(ctx, ctx.status, ...answer);
  return true;
}

/** Around the provider, which renders its own errors: a path below it that no route answered is refused as our routes refuse it, and logged. */
export function unmatchedAsJson(logger: Logger): (ctx: Context, next: () => Promise<unknown>) => Promise<void> {
  return async (ctx, next) => {
    if (await answerUnmatched(ctx, next)) logErrorAnswer(logger, ctx);
  };
}

/**
 * Renders errors of our own routes: OAuth JSON for API clients, the error page for browsers, never a
 * stack or an internal message. Every error is logged, a thrown one and an error answer a route rendered itself.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx: Context, next) => {
    try {
      await answerUnmatched(ctx, next);
    } catch (caught) {
      if (caught instanceof HostError) throw caught.thrown;
      const out = oauthErrorBody(caught);
      logCaughtError(logger, ctx, caught, out);
      await answerError(ctx, out, caught);
      return;
    }
    if (ctx.status >= 400) logErrorAnswer(logger, ctx);
  };
}

/** What the host app's middleware after ours threw, on its way up past {@link errorHandler} to the host's own error handling. */
class HostError extends Error {
  constructor(readonly thrown: unknown) {
    super('thrown by a middleware of the host app');
  }
}

/**
 * `routes` behind {@link errorHandler}: what they throw is answered as ours; what the host app's middleware after them
 * throws (a request none of them answered went on to it) reaches the host's error handler and its `error` event as it was thrown.
 */
export function handledRoutes(logger: Logger, routes: Middleware[]): (ctx: Context, next: () => Promise<unknown>) => Promise<void> {
  const chain = compose([errorHandler(logger), ...routes]);
  return (ctx, next) =>
    chain(ctx, () =>
      next().catch((thrown: unknown) => {
        throw new HostError(thrown);
      }),
    );
}

/** The listener for Koa's `error` event (errors that escaped every handler): logged by name and code only, as any other. */
export function logUnhandledErrors(logger: Logger): (err: unknown, ctx?: Context) => void {
  return (err, ctx) => {
    if (ctx) logCaughtError(logger, ctx, err);
    else logger.error('request_failed', { name: (err as { name?: string } | undefined)?.name, code: (err as { code?: string } | undefined)?.code });
  };
}

import { randomUUID } from 'node:crypto';

import type { Middleware } from 'koa';

import type { Logger } from '../logger.js';
import type { Metrics } from './metrics.js';
import { storeFailed } from '../web/error-response.js';
import { routeOf } from './routes.js';

const VALID_ID = /^[A-Za-z0-9._-]{8,128}$/;

/** The methods a metric label names; any other is `other`: anyone may send each of Node's 30-odd methods to each route, every pair a series kept for good. */
const LABELLED_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS']);

/**
 * The status an error escaping to the host app's error handling is answered with, as Koa's own handler chooses it (its
 * `status` when an error status, else 500): the host's route threw it after ours left the request to it.
 */
function answeredStatusOf(error: unknown): number {
  const { status, statusCode } = (error ?? {}) as { status?: unknown; statusCode?: unknown };
  const chosen = status ?? statusCode;
  return typeof chosen === 'number' && Number.isInteger(chosen) && chosen >= 400 && chosen <= 599 ? chosen : 500;
}

/**
 * Outermost middleware: gives every request an id (a well-formed incoming `X-Request-Id` when `proxy`, the trusted
 * proxy having set it, else a UUID: a client's own would let it give its lines the id of another's requests) in
 * `ctx.state.requestId` and the answer, and logs one line per request, never a query string.
 */
export function requestLogging(logger: Logger, proxy: boolean, metrics?: Metrics): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = proxy ? ctx.req.headers['x-request-id'] : undefined;
    const id = typeof incoming === 'string' && VALID_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.res.setHeader('X-Request-Id', id);
    let escaped: { error: unknown } | undefined;
    try {
      await next();
    } catch (error) {
      escaped = { error };
      throw error;
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = routeOf(ctx);
      const status = escaped ? answeredStatusOf(escaped.error) : ctx.status;
      logger.info('request', { request_id: id, method: ctx.method, route, status, duration_ms: Math.round(seconds * 1000 * 10) / 10 });
      if (metrics) {
        const method = LABELLED_METHODS.has(ctx.method) ? ctx.method : 'other';
        metrics.requests.inc({ route, method, status: String(status) });
        metrics.duration.observe({ route, method }, seconds);
        if (storeFailed(ctx)) metrics.storeErrors.inc();
      }
    }
  };
}

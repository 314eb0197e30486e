import { randomUUID } from 'node:crypto';

import type { Context } from 'koa';

import type { Logger } from '../logger.js';
import type { Metrics } from './metrics.js';
import { routeOf } from './routes.js';

const VALID_ID = /^[A-Za-z0-9._-]{8,128}$/;

/**
 * Begins the log of a request (called by the front door, first): gives it an id (a well-formed
 * incoming `X-Request-Id`, else a UUID), returns it as `X-Request-Id`, keeps it in
 * `ctx.state.requestId` for event logs, and returns what writes its one line when it ends (method,
 * route template, status, duration; never a query string).
 */
export function beginRequestLog(ctx: Context, logger: Logger, basePath: string, metrics?: Metrics): () => void {
  const started = process.hrtime.bigint();
  const incoming = ctx.req.headers['x-request-id'];
  const id = typeof incoming === 'string' && VALID_ID.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = id;
  ctx.res.setHeader('X-Request-Id', id);
  return () => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const route = routeOf(ctx.path, basePath);
    logger.info('request', { request_id: id, method: ctx.method, route, status: ctx.status, duration_ms: Math.round(seconds * 1000 * 10) / 10 });
    if (metrics) {
      metrics.requests.inc({ route, method: ctx.method, status: String(ctx.status) });
      metrics.duration.observe({ route, method: ctx.method }, seconds);
    }
  };
}

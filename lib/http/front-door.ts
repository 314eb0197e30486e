import type { Middleware } from 'koa';

import type { SvcStore } from '../../adapters/store.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { beginRequestLog } from '../observability/request-log.js';
import { runAsStoreBatch } from '../provider/store-batch.js';
import { setSecurityHeaders } from '../web/security-headers.js';
import { refuseOversizedBody } from './body-limit.js';
import { originPinner } from './public-origin.js';

/** What {@link frontDoor} needs. */
export interface FrontDoorOptions {
  baseUrl: string;
  proxy: boolean;
  logger: Logger;
  metrics?: Metrics;
  /** Each request runs as one unit of store work ({@link SvcStore.batch}). */
  store: Pick<SvcStore, 'batch'>;
  /** What serves the request (the provider, our pages, health, management). */
  dispatch: Middleware;
}

/**
 * The one layer every request passes before it is served, doing in order what were five
 * pass-through middlewares (one promise per request instead of five): pins the public origin
 * ({@link originPinner}), gives the request its id and log line ({@link beginRequestLog}), sets the
 * security headers ({@link setSecurityHeaders}), refuses an oversized body
 * ({@link refuseOversizedBody}), and runs the request as one unit of store work
 * ({@link runAsStoreBatch}).
 */
export function frontDoor(options: FrontDoorOptions): Middleware {
  const pin = originPinner(options.baseUrl, options.proxy);
  const { logger, metrics, store, dispatch } = options;
  return async (ctx, next) => {
    pin(ctx);
    // Paths are seen relative to where the middleware is mounted (createApp mounts it at the base path).
    const end = beginRequestLog(ctx, logger, '', metrics);
    setSecurityHeaders(ctx);
    try {
      if (refuseOversizedBody(ctx)) return;
      await runAsStoreBatch(ctx, store, logger, () => dispatch(ctx, next) as Promise<void>);
    } finally {
      end();
    }
  };
}

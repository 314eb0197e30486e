import Router from '@koa/router';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

import { EXACT_PATHS } from '../settings/paths.js';
import { noStore } from '../web/error-response.js';

/** The Prometheus series of one svc-connect app (its own registry, so several apps can coexist). */
export type Metrics = ReturnType<typeof createMetrics>;

/** Creates the metrics of one app, with Node's process metrics. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  return {
    registry,
    requests: new Counter({ name: 'svc_http_requests_total', help: 'HTTP requests by route, method and status', labelNames: ['route', 'method', 'status'], registers: [registry] }),
    duration: new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'HTTP request latency by route and method',
      labelNames: ['route', 'method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    flows: new Counter({ name: 'svc_flows_completed_total', help: 'Authorization codes redeemed for tokens', registers: [registry] }),
    registrations: new Counter({ name: 'svc_registrations_total', help: 'Client registration events', labelNames: ['event'], registers: [registry] }),
    storeErrors: new Counter({ name: 'svc_store_errors_total', help: 'Requests failed because the store did not answer', registers: [registry] }),
    securityEvents: new Counter({ name: 'svc_security_events_total', help: 'Security events', labelNames: ['event'], registers: [registry] }),
  };
}

/** `GET /metrics` in the Prometheus text format, at that path exactly ({@link EXACT_PATHS}). */
export function createMetricsRouter(metrics: Metrics): Router {
  const router = new Router(EXACT_PATHS);
  router.get('/metrics', async (ctx) => {
    noStore(ctx);
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  return router;
}

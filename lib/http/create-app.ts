import Koa, { type Middleware } from 'koa';
import compose from 'koa-compose';
import mount from 'koa-mount';
import type Provider from 'oidc-provider';

import type { SvcStore } from '../../adapters/store.js';
import { createInteractionsRouter } from '../interactions/router.js';
import { providerFromRuntime } from '../provider/create-provider.js';
import { createDemoRouter } from '../demo/router.js';
import { createMailer } from '../management/mailer.js';
import { createLoginThrottle } from '../interactions/login-throttle.js';
import { createManagementRouter, registrationEndpointOf } from '../management/router.js';
import { basePathOf, issuerOf, PROVIDER_PATH } from '../provider/paths.js';
import { createMetrics, createMetricsRouter } from '../observability/metrics.js';
import { createPinoLogger } from '../observability/pino-logger.js';
import { requestLogging } from '../observability/request-log.js';
import { resolveRuntime, suppliedParts, type RuntimeOptions } from '../provider/runtime.js';
import { enforceSafeDefaults, findUnsafeDefaults } from '../settings/unsafe.js';
import type { Settings } from '../settings/types.js';
import { bodyLimit } from './body-limit.js';
import { errorHandler } from './error-handler.js';
import { createHealthRouter } from './health.js';
import { securityHeaders } from './security-headers.js';

/**
 * The pieces of svc-connect, ready to serve or to mount into an existing Koa app:
 * `hostApp.keys = svc.cookieKeys; hostApp.use(svc.middleware)` (or under `koa-mount` at the path of
 * `svc.base-url`).
 */
export interface SvcConnect {
  /** The configured oidc-provider instance. */
  readonly provider: Provider;
  /** The store holding all provider state. */
  readonly store: SvcStore;
  /** Cookie keys; the host Koa app's `keys` must equal them. */
  readonly cookieKeys: string[];
  /** Serves health, interactions, management and the provider at `/oidc/v1`. */
  readonly middleware: Middleware;
  /** Closes the store and the mailer. */
  close(): Promise<void>;
}

/** A Koa app serving svc-connect, with its parts at hand. */
export type SvcApp = Koa & { readonly svc: SvcConnect };

/**
 * Builds every piece of svc-connect for `settings` without creating a Koa app, for embedders who
 * mount them into their own.
 */
export async function createSvcConnect(settings: Settings, options: RuntimeOptions = {}): Promise<SvcConnect> {
  const logger = options.logger ?? createPinoLogger({ level: settings.log.level });
  enforceSafeDefaults(settings, findUnsafeDefaults(settings, { ...suppliedParts(options), management: true }), logger);
  const runtime = await resolveRuntime(settings, { ...options, logger });
  const metrics = settings.metrics.enabled ? createMetrics() : undefined;
  const provider = providerFromRuntime(settings, runtime, metrics);
  const health = createHealthRouter(runtime.store);
  const throttle = createLoginThrottle({
    attempts: runtime.store.attempts,
    rule: {
      limit: settings.login.lockoutThreshold,
      windowSeconds: settings.login.lockoutWindowSeconds,
      coolDownSeconds: settings.login.lockoutSeconds,
      maxCoolDownSeconds: Math.max(settings.login.lockoutSeconds, settings.login.lockoutMaxSeconds),
    },
    proxy: { proxy: settings.proxy, hops: settings.proxyHops },
    nameKey: runtime.cookieKeys[0] ?? '',
  });
  const interactions = createInteractionsRouter({ provider, authenticator: runtime.authenticator, baseUrl: settings.baseUrl, throttle, logger, metrics });
  const mailer = options.mailer ?? createMailer(settings.mail);
  const management = createManagementRouter({ provider, mailer, settings, logger, metrics, attempts: runtime.store.attempts, registrationEndpoint: registrationEndpointOf(issuerOf(settings.baseUrl)) });
  const demo = settings.demo.enabled ? createDemoRouter({ provider, baseUrl: settings.baseUrl }) : undefined;
  const guarded = compose([
    errorHandler(logger),
    health.routes(),
    interactions.routes(),
    interactions.allowedMethods(),
    management.routes(),
    ...(demo ? [demo.routes()] : []),
    ...(metrics ? [createMetricsRouter(metrics).routes()] : []),
  ] as Middleware[]);
  const providerMount = mount(PROVIDER_PATH, provider);
  const middleware = compose([
    requestLogging(logger, basePathOf(settings.baseUrl), metrics),
    securityHeaders(),
    bodyLimit(),
    (ctx, next) => {
      // oidc-provider renders its own errors; everything else goes through our error handler.
      const path = ctx.path;
      const ours = !path.startsWith(`${PROVIDER_PATH}/`) || path.startsWith(`${PROVIDER_PATH}/interaction/`) || path.startsWith(`${PROVIDER_PATH}/management/`);
      return ours ? guarded(ctx, next) : providerMount(ctx, next);
    },
  ]);
  return {
    provider,
    store: runtime.store,
    cookieKeys: runtime.cookieKeys,
    middleware,
    async close() {
      mailer.close();
      await runtime.store.close();
      logger.flush?.();
    },
  };
}

/**
 * A Koa app serving everything of C2 for `settings`: the provider at `/oidc/v1`, the interaction
 * pages, `/healthz` and `/readyz`, with security headers, `proxy` from settings and `keys` equal to
 * the cookie keys.
 */
export async function createApp(settings: Settings, options: RuntimeOptions = {}): Promise<SvcApp> {
  const svc = await createSvcConnect(settings, options);
  // Koa's ctx.ip then reads the same X-Forwarded-For entry as clientAddress (svc.proxy.hops).
  const app = new Koa({ proxy: settings.proxy, keys: svc.cookieKeys, maxIpsCount: settings.proxyHops });
  app.use(svc.middleware);
  app.on('error', () => {
    // Errors are rendered and logged by the middleware; Koa's default handler would print stacks.
  });
  return Object.assign(app, { svc });
}

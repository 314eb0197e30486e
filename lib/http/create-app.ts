import Koa, { type Middleware } from 'koa';
import mount from 'koa-mount';
import type Provider from 'oidc-provider';

import type { SvcStore } from '../../adapters/store.js';
import { deliverableClaims, scopeOffer } from '../claims/supported.js';
import { createInteractionsRouter } from '../interactions/router.js';
import { CONSENT_UNDO_MODEL } from '../interactions/consent-undo.js';
import { checkStaticClients, providerFromRuntime, storeClaimOf } from '../provider/create-provider.js';
import { letGo, takeUp } from '../provider/part-users.js';
import { createDemoRouter } from '../demo/router.js';
import { createMailer } from '../management/mailer.js';
import { createLoginThrottle } from '../interactions/login-throttle.js';
import { createManagementRouter, registrationEndpointOf } from '../management/router.js';
import { KNOWN_ADDRESS_MODEL } from '../management/guard.js';
import { PROVIDER_PATH, type PublicPaths } from '../settings/paths.js';
import { createMetrics, createMetricsRouter } from '../observability/metrics.js';
import { readKeysFile, resolveRuntime, type Runtime, type RuntimeOptions } from '../provider/runtime.js';
import { claimedStore } from '../provider/store-issuer.js';
import { reusedKidFault, signingKids, swappedSigners } from '../provider/key-states.js';
import { frontDoor } from '../provider/wrapping.js';
import { SettingsError } from '../errors.js';
import type { Settings } from '../settings/types.js';
import type { Logger } from '../logger.js';
import { handledRoutes, unmatchedAsJson, logUnhandledErrors } from './error-handler.js';
import { CookieKeyring } from '../web/cookie-keyring.js';
import { createHealthRouter } from './health.js';
import { mountProvider } from './mount-provider.js';

/**
 * The pieces of svc-connect, ready to serve or to mount into an existing Koa app:
 * `hostApp.use(svc.middleware)` (or under `koa-mount` at the path of `svc.base-url`).
 */
export interface SvcConnect {
  /** The configured oidc-provider instance. */
  readonly provider: Provider;
  /** The store holding all provider state. */
  readonly store: SvcStore;
  /** Cookie keys: {@link SvcConnect.middleware} signs and reads its cookies with them, whatever the host Koa app's `keys`. */
  readonly cookieKeys: string[];
  /** Where svc-connect lives publicly (issuer, base path, provider path), derived from `svc.base-url` once. */
  readonly paths: PublicPaths;
  /**
   * Serves everything (the provider at `/oidc/v1`), at the root or under the path of `svc.base-url`
   * (`mount('/auth', svc.middleware)`); every URL it prints carries that path.
   */
  readonly middleware: Middleware;
  /**
   * Reads `svc.keys.file` again and serves the provider with those keys from the next request on (the
   * bundled server calls it on SIGHUP); keeps the keys in use when that fails, and skips keys not from a file.
   */
  reloadKeys(): Promise<KeysReload>;
  /**
   * `/healthz`, `/readyz` and `/metrics` (when `svc.metrics.enabled`) for an operations listener; with
   * `svc.ops.port` set, {@link SvcConnect.middleware} no longer serves these paths.
   */
  readonly operations: Middleware;
  /** What this instance runs on, for the start line. */
  readonly info: SvcInfo;
  /** Where svc-connect writes its log lines: `options.logger`, else the one `svc.log.*` asks for. */
  readonly logger: Logger;
  /**
   * Closes the store and the mailer, once (a second call waits for the first); a store or mailer another open instance
   * was also given is left open, and closed by the last of them.
   */
  close(): Promise<void>;
}

/** What {@link SvcConnect.reloadKeys} did. */
export interface KeysReload {
  reloaded: boolean;
  /** Why not, when not. */
  reason?: string;
  /** The signing alg → `kid` the provider signs with now. */
  signing?: Record<string, string>;
}

/** What a svc-connect instance runs on. */
export interface SvcInfo {
  /** The store kind. */
  store: 'memory' | 'redis' | 'redis-cluster' | 'custom';
  /** Where the provider keys come from. */
  keys: 'file' | 'code' | 'ephemeral';
  /** How many unsafe defaults were warned about at start. */
  warnings: number;
}

/** A Koa app serving svc-connect, with its parts at hand. */
export type SvcApp = Koa & { readonly svc: SvcConnect };

/** Builds every piece of svc-connect for `settings` without creating a Koa app, for embedders who mount them into their own. */
export async function createSvcConnect(settings: Settings, options: RuntimeOptions = {}): Promise<SvcConnect> {
  const resolved = await resolveRuntime(settings, options, { management: true });
  const { logger } = resolved;
  const metrics = settings.metrics.enabled ? createMetrics() : undefined;
  // Taken up before anything can fail: an old instance closing meanwhile leaves it open, and a failed start lets go of it.
  takeUp(resolved.store);
  let runtime: Runtime;
  let provider: Provider;
  try {
    runtime = { ...resolved, store: await claimedStore(resolved.store, storeClaimOf(settings, !!options.store), logger) };
    provider = providerFromRuntime(settings, runtime, metrics);
    await checkStaticClients(provider, settings, runtime);
  } catch (err) {
    if (letGo(resolved.store)) await resolved.store.close();
    throw err;
  }
  const info: SvcInfo = {
    store: options.store ? 'custom' : settings.redis.clusterNodes ? 'redis-cluster' : settings.redis.url ? 'redis' : 'memory',
    keys: options.jwks ? 'code' : settings.keys.file ? 'file' : 'ephemeral',
    warnings: runtime.warnings,
  };
  const proxy = { proxy: settings.proxy, hops: settings.proxyHops };
  const canonicalLogin = runtime.authenticator.canonicalLogin?.bind(runtime.authenticator);
  const loginRule = (limit: number) => ({
    limit,
    windowSeconds: settings.login.lockoutWindowSeconds,
    coolDownSeconds: settings.login.lockoutSeconds,
    maxCoolDownSeconds: Math.max(settings.login.lockoutSeconds, settings.login.lockoutMaxSeconds),
  });
  const throttle = createLoginThrottle({
    attempts: runtime.store.attempts,
    rule: loginRule(settings.login.lockoutThreshold),
    addressRule: loginRule(settings.login.addressThreshold),
    consecutiveLimit: settings.login.consecutiveLimit,
    canonicalLogin,
    proxy,
    cookieKeys: runtime.cookieKeys,
    deviceLifetimeSeconds: settings.login.deviceCookieDays * 86_400,
    cookie: { path: `${runtime.paths.providerPath}/interaction`, secure: runtime.paths.origin.startsWith('https:') },
    logger,
  });
  const offer = scopeOffer(runtime.registry);
  for (const { scope, missing } of offer.partial) {
    logger.warn('scope_not_offered', { scope, missing: missing.join(' '), fix: 'add a claim module providing these claims, or leave the scope unoffered' });
  }
  const interactions = createInteractionsRouter({
    provider,
    authenticator: runtime.authenticator,
    paths: runtime.paths,
    throttle,
    logger,
    metrics,
    offeredScopes: new Set(offer.offered),
    deliverableClaims: deliverableClaims(runtime.registry),
    holdsOf: (claim) => runtime.registry.holdsOf(claim),
    consentUndo: {
      adapter: runtime.store.adapter(CONSENT_UNDO_MODEL),
      insert: (id, payload, expiresIn) => runtime.store.insert(CONSENT_UNDO_MODEL, id, payload, expiresIn),
    },
    includeScopesInUserInfo: settings.stage.includeScopesInUserInfo,
    cookieKeys: runtime.cookieKeys,
  });
  const mailer = options.mailer ?? createMailer(settings.mail);
  takeUp(mailer);
  const management = createManagementRouter({
    provider,
    mailer,
    from: settings.mail.from,
    credentials: settings.management,
    origin: runtime.paths.origin,
    proxy,
    logger,
    metrics,
    attempts: runtime.store.attempts,
    registrationEndpoint: registrationEndpointOf(runtime.paths.issuer),
    counterKey: runtime.cookieKeys[0] ?? '',
    knownAddresses: runtime.store.adapter(KNOWN_ADDRESS_MODEL),
    toolbox: {
      store: runtime.store,
      staticClients: runtime.clients,
      logger,
      subjectKey: runtime.cookieKeys[0] ?? '',
      canonicalLogin,
      subjects: { pairwiseKey: runtime.pairwiseKey, defaultType: settings.subject.defaultType },
    },
  });
  const demo = settings.demo.enabled ? createDemoRouter({ provider, paths: runtime.paths, clients: runtime.store.adapter('Client'), logger }) : undefined;
  // Not for a request-target with a fragment, which none has (RFC 9112 3.2; Koa drops it): `/metrics#` is no spelling a
  // proxy rule on the path sees as /metrics.
  const operational = ([createHealthRouter(runtime.store).routes(), ...(metrics ? [createMetricsRouter(metrics).routes()] : [])] as Middleware[]).map(
    (routes): Middleware => (ctx, next) => (ctx.originalUrl.includes('#') ? next() : (routes(ctx, next) as Promise<void>)),
  );
  const handled = (routes: Middleware[]) => handledRoutes(logger, routes);
  const pageRoutes = [interactions.routes(), interactions.allowedMethods()] as Middleware[];
  const guarded = handled([
    ...(settings.ops.port === undefined ? operational : []),
    ...pageRoutes,
    management.routes() as Middleware,
    ...(demo ? [demo.routes() as Middleware] : []),
  ]);
  // Below their exact prefixes only one of our routers can match: those requests skip the rest (any
  // other spelling goes through every router).
  const pages = handled(pageRoutes);
  const toolbox = handled([management.routes() as Middleware]);
  const publicPath = runtime.paths.providerPath;
  // The provider in service; a key reload swaps in one built with the new keys (requests under way
  // finish on the one they started with: all state is in the store). The interaction pages and the toolbox keep the
  // provider of the start: they only read and write the store under the cookie keys, which a reload keeps; nothing they serve is signed.
  let current = provider;
  let providerMount = mountProvider(provider, publicPath);
  const providerUnmatched = unmatchedAsJson(logger);
  const middleware = frontDoor({ baseUrl: settings.baseUrl, proxy: settings.proxy, cookieKeys: runtime.cookieKeys, logger, metrics, store: runtime.store }, (ctx, next) => {
    // oidc-provider renders its own errors; everything else goes through our error handler.
    const path = ctx.path;
    if (!path.startsWith(`${PROVIDER_PATH}/`)) return guarded(ctx, next);
    if (path.startsWith(`${PROVIDER_PATH}/interaction/`)) return pages(ctx, next);
    if (path.startsWith(`${PROVIDER_PATH}/management/`)) return toolbox(ctx, next);
    return providerUnmatched(ctx, () => providerMount(ctx, next) as Promise<void>);
  });
  let closing: Promise<void> | undefined;
  let keysInUse = runtime.jwks;
  const reloadKeys = async (): Promise<KeysReload> => {
    const file = settings.keys.file;
    if (info.keys !== 'file' || !file) {
      const reason = info.keys === 'code' ? 'the keys were given in code' : 'svc.keys.file is not set (the keys were generated at start)';
      logger.warn('keys_reload_skipped', { reason });
      return { reloaded: false, reason };
    }
    try {
      const jwks = readKeysFile(file, logger);
      const reused = reusedKidFault(keysInUse.keys, jwks.keys);
      if (reused) throw new SettingsError(`invalid signing keys in ${file} (svc.keys.file): ${reused}`, ['svc.keys.file']);
      const reloaded = providerFromRuntime(settings, { ...runtime, jwks }, metrics);
      // As at the start: keys that sign no alg a static client is registered with would fail its every sign-in.
      await checkStaticClients(reloaded, settings, runtime);
      current = reloaded;
      providerMount = mountProvider(current, publicPath);
      const signing = signingKids(jwks.keys);
      const { dropped, unannounced } = swappedSigners(keysInUse, jwks);
      keysInUse = jwks;
      logger.info('keys_reloaded', { file, published: jwks.keys.length - jwks.unpublished.length, signing: Object.entries(signing).map(([alg, kid]) => `${alg}=${kid}`).join(' ') });
      if (dropped.length || unannounced.length) {
        logger.warn('keys_swapped_without_rotation', {
          dropped: dropped.join(' '),
          unannounced: unannounced.join(' '),
          fix: 'expected only when a compromised key is replaced: ID tokens the dropped keys signed no longer verify, and relying parties holding the JWKS meet the unannounced keys as unknown; otherwise rotate with keys rotate, reloading every server after each step',
        });
      }
      // Rare and operator-facing: written at once, not left in the log buffer.
      logger.flush?.();
      return { reloaded: true, signing };
    } catch (err) {
      const reason = err instanceof SettingsError ? err.message : err instanceof Error ? err.name : 'error';
      logger.error('keys_reload_failed', { file, reason, kept: 'the keys in use' });
      return { reloaded: false, reason };
    }
  };
  return {
    get provider() {
      return current;
    },
    store: runtime.store,
    cookieKeys: runtime.cookieKeys,
    paths: runtime.paths,
    middleware,
    operations: handled(operational),
    reloadKeys,
    info,
    logger,
    close() {
      closing ??= (async () => {
        if (letGo(mailer)) mailer.close();
        if (letGo(resolved.store)) await resolved.store.close();
        logger.flush?.();
      })();
      return closing;
    },
  };
}

/**
 * A Koa app serving C2 for `settings` below the path of `svc.base-url`: the provider at `/oidc/v1`, the
 * interaction pages, `/healthz` and `/readyz`, with security headers, `proxy` from settings and the cookie keys as `keys`.
 */
export async function createApp(settings: Settings, options: RuntimeOptions = {}): Promise<SvcApp> {
  const svc = await createSvcConnect(settings, options);
  // Koa's ctx.ip then reads the same X-Forwarded-For entry as clientAddress (svc.proxy.hops).
  const app = new Koa({ proxy: settings.proxy, maxIpsCount: settings.proxyHops });
  // The same signatures as Keygrip over svc.cookieKeys, computed for less (see CookieKeyring).
  app.keys = new CookieKeyring(svc.cookieKeys);
  const { basePath } = svc.paths;
  app.use(basePath ? mount(basePath, svc.middleware) : svc.middleware);
  // What escapes every handler is logged by name and code (Koa's default would print stacks).
  app.on('error', logUnhandledErrors(svc.logger));
  return Object.assign(app, { svc });
}

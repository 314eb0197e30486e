import Provider from 'oidc-provider';

import { enforceSafeDefaults, findUnsafeDefaults } from '../settings/unsafe.js';
import type { Settings } from '../settings/types.js';
import { createFindAccount } from '../claims/account.js';
import { withClientSuspension } from '../management/client-suspension.js';
import { ClaimValueMac } from '../claims/value-mac.js';
import { withHashedClientSecrets, withHashedStaticSecrets } from '../registration/client-secrets.js';
import { withCurrentPolicies } from '../registration/current-policies.js';
import { settleSingleUseTokens, withSingleUseTokens } from '../registration/single-use-tokens.js';
import { CookieKeyring } from '../web/cookie-keyring.js';
import { providerStoreBatch } from './store-batch.js';
import { createConfiguration } from './configuration.js';
import { laxCookiesOnHttp } from './http-cookies.js';
import { normalizeProviderRequests } from './request-normalizer.js';
import type { Metrics } from '../observability/metrics.js';
import { createSettingsLogger } from '../observability/pino-logger.js';
import { observeProvider } from '../observability/provider-events.js';
import { resolveRuntime, suppliedParts, type Runtime, type RuntimeOptions } from './runtime.js';
import { explainRefusedClientKeys } from './vetted-jwks-fetch.js';

/**
 * Builds a ready oidc-provider `Provider` for `settings`: keys, store, accounts and every hook of
 * svc-connect installed. Mount it at `/oidc/v1` (or use {@link createApp}, which does everything).
 *
 * @throws {@link SettingsError} for unsafe defaults under `NODE_ENV=production` or unreadable files.
 */
export async function createProvider(settings: Settings, options: RuntimeOptions = {}): Promise<Provider> {
  const logger = options.logger ?? createSettingsLogger(settings);
  enforceSafeDefaults(settings, findUnsafeDefaults(settings, suppliedParts(options)), logger);
  const runtime = await resolveRuntime(settings, { ...options, logger });
  return providerFromRuntime(settings, runtime);
}

/** Builds the provider from an already resolved and checked runtime (shared with `createApp`). */
export function providerFromRuntime(settings: Settings, runtime: Runtime, metrics?: Metrics): Provider {
  const { authenticator, logger, registry } = runtime;
  const configuration = createConfiguration(settings, {
    jwks: runtime.jwks,
    cookieKeys: runtime.cookieKeys,
    pairwiseKey: runtime.pairwiseKey,
    // Every registration and update runs today's policies, whatever its token was issued with.
    adapter: withCurrentPolicies(withSingleUseTokens(withHashedClientSecrets(withClientSuspension(runtime.store.adapter)), runtime.store)),
    clients: withHashedStaticSecrets(runtime.clients),
    registry,
    findAccount: createFindAccount({
      authenticator,
      registry,
      includeScopesInUserInfo: settings.stage.includeScopesInUserInfo,
      valueMac: new ClaimValueMac(runtime.cookieKeys),
    }),
    logger,
    paths: runtime.paths,
  });
  const provider = new Provider(runtime.paths.issuer, configuration);
  provider.proxy = settings.proxy;
  // Contexts the provider makes itself (interactionDetails for our pages) sign cookies like the app.
  provider.keys = new CookieKeyring(runtime.cookieKeys);
  // One unit of store work per request (joins the front door's when served by createApp).
  provider.use(providerStoreBatch(runtime.store, logger));
  // No path decides a check: presented secrets are hashed on every request, single-use tokens are
  // claimed in the store when oidc-provider looks them up, and settled by the route it resolved.
  if (!settings.baseUrl.startsWith('https:')) provider.use(laxCookiesOnHttp());
  provider.use(normalizeProviderRequests(logger));
  provider.use(settleSingleUseTokens(logger, metrics));
  provider.use(explainRefusedClientKeys());
  observeProvider(provider, logger, metrics);
  return provider;
}

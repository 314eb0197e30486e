import Provider, { errors } from 'oidc-provider';

import { SettingsError } from '../errors.js';
import type { Settings } from '../settings/types.js';
import { createFindAccount } from '../claims/account.js';
import { ClaimValueMac } from '../claims/value-mac.js';
import { withHashedStaticSecrets } from '../registration/client-secrets.js';
import { CookieKeyring } from '../web/cookie-keyring.js';
import { createConfiguration } from './configuration.js';
import type { Metrics } from '../observability/metrics.js';
import { observeProvider } from '../observability/provider-events.js';
import { resolveRuntime, type Runtime, type RuntimeOptions } from './runtime.js';
import { useProviderMiddleware, wrappedAdapter, type WrappingParts } from './wrapping.js';
import { forgetRefusedSetsOf } from './vetted-jwks-fetch.js';
import { claimedStore, type StoreClaim } from './store-issuer.js';
import { publicPathsOf } from '../settings/paths.js';
import { PROVIDER_EVENTS } from '../seams.js';

/**
 * Builds a ready oidc-provider `Provider` for `settings`: keys, store, accounts and every hook of
 * svc-connect installed. Mount it at `/oidc/v1` (or use {@link createApp}, which does everything).
 *
 * @throws {@link SettingsError} for unsafe defaults under `NODE_ENV=production`, unreadable files, or a store of another
 * issuer; a start that fails closes the store it opened, never one passed in code.
 */
export async function createProvider(settings: Settings, options: RuntimeOptions = {}): Promise<Provider> {
  const resolved = await resolveRuntime(settings, options);
  try {
    const runtime = { ...resolved, store: await claimedStore(resolved.store, storeClaimOf(settings, !!options.store), resolved.logger) };
    const provider = providerFromRuntime(settings, runtime);
    await checkStaticClients(provider, settings, runtime);
    return provider;
  } catch (err) {
    // A store passed in code is the caller's: a provider built with it before may serve on it.
    if (!options.store) await resolved.store.close();
    throw err;
  }
}

/** Who claims the store ({@link claimedStore}): the issuer of `svc.base-url`, moving from `svc.redis.previous-base-url`'s; `given`: passed in code. */
export function storeClaimOf(settings: Settings, given: boolean): StoreClaim {
  const { previousBaseUrl, keyPrefix } = settings.redis;
  return {
    issuer: publicPathsOf(settings.baseUrl).issuer,
    ...(previousBaseUrl === undefined ? {} : { previousIssuer: publicPathsOf(previousBaseUrl).issuer }),
    store: given ? 'passed in code' : `svc.redis.key-prefix ${JSON.stringify(keyPrefix)}`,
  };
}

/**
 * Builds each static client as oidc-provider serves it, so one it would refuse (`grant_types` it does not offer, say)
 * stops the start naming it instead of failing every authorization. One with a `sector_identifier_uri` is built at its
 * first use, when its document is fetched: a remote host down at start does not stop the provider.
 *
 * @throws {@link SettingsError} naming the client and oidc-provider's reason.
 */
export async function checkStaticClients(provider: Provider, settings: Settings, runtime: Pick<Runtime, 'clients'>): Promise<void> {
  for (const { client_id: id, sector_identifier_uri: sector } of runtime.clients) {
    if (sector !== undefined) continue;
    await provider.Client.find(id).catch((err: unknown) => {
      if (!(err instanceof errors.InvalidClientMetadata)) throw err;
      throw new SettingsError(`static client ${JSON.stringify(id)}: ${String(err.error_description)}`, settings.clients.file ? ['svc.clients.file'] : []);
    });
  }
}

/** Builds the provider from an already resolved and checked runtime (shared with `createApp`). */
export function providerFromRuntime(settings: Settings, runtime: Runtime, metrics?: Metrics): Provider {
  const { authenticator, logger, registry } = runtime;
  const flowShare = { proxy: { proxy: settings.proxy, hops: settings.proxyHops }, macKey: runtime.cookieKeys[0] ?? '', threshold: settings.login.startThreshold, logger };
  const wrapping: WrappingParts = { store: runtime.store, flowShare, logger, metrics, baseUrl: settings.baseUrl, proxy: settings.proxy, keys: runtime.jwks.keys, unpublished: runtime.jwks.unpublished, signingOnly: runtime.jwks.signingOnly };
  const configuration = createConfiguration(settings, {
    jwks: { keys: runtime.jwks.keys },
    cookieKeys: runtime.cookieKeys,
    pairwiseKey: runtime.pairwiseKey,
    adapter: wrappedAdapter(wrapping),
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
  useProviderMiddleware(provider, wrapping);
  observeProvider(provider, logger, metrics);
  provider.on(PROVIDER_EVENTS.registrationUpdated, (_ctx: unknown, client: { clientId: string }) => forgetRefusedSetsOf(client.clientId));
  return provider;
}

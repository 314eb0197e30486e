import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { ClientMetadata } from 'oidc-provider';

import { isUnowned, pairwiseSub, sectorOf } from '../../policies/subjects.js';

import { createApp, createHttpServer, loadSettings, silentLogger, type SvcApp } from '../../lib/index.js';
import type { RuntimeOptions } from '../../lib/provider/runtime.js';
import type { Settings } from '../../lib/settings/types.js';
import { testProviderKeys } from './provider-keys.js';
import { TEST_STORE_TIMEOUT_MS } from './redis.js';

/** The pairwise key test apps run with unless a test sets `svc.subject.pairwise-key` itself. */
export const TEST_PAIRWISE_KEY = 'test-pairwise-key-0123456789abcdefghijkl';

/**
 * The `sub` a pairwise client whose first redirect URI is `redirectUri` receives for `accountId` from
 * an app on {@link TEST_PAIRWISE_KEY} (clients are pairwise unless registered `public`). A client redirecting to the
 * loopback interface is a sector of its own: its `clientId` is then needed.
 */
export function pairwiseSubOf(redirectUri: string, accountId = 'demo-0001', clientId?: string): string {
  if (isUnowned(redirectUri) && clientId === undefined) throw new TypeError(`${redirectUri} is on the loopback interface: its client is a sector of its own, give its client id`);
  return pairwiseSub(TEST_PAIRWISE_KEY, sectorOf({ redirect_uris: [redirectUri], client_id: clientId }) as string, accountId);
}

/** A listening svc-connect app on a free loopback port. */
export interface RunningApp {
  /** e.g. `http://127.0.0.1:41234` */
  baseUrl: string;
  issuer: string;
  app: SvcApp;
  settings: Settings;
  close(): Promise<void>;
}

/** Options of {@link startApp}. */
/** How many sessions of `accountId` the app's store holds (its inventory's first 500 sessions; -1 without one). */
export async function sessionsOf(running: RunningApp, accountId: string): Promise<number> {
  return (await running.app.svc.store.inventory?.list('Session', { limit: 500 }))?.records.filter((r) => r.payload.accountId === accountId).length ?? -1;
}

export interface StartOptions extends RuntimeOptions {
  /** Extra properties by name (as in a properties file). */
  properties?: Record<string, string | number | boolean>;
  /** Clients built once the base URL (and so the port) is known. */
  clientsFor?: (baseUrl: string) => ClientMetadata[];
  /**
   * `https`: `svc.base-url` is `https://127.0.0.1:<port>`, as behind a TLS-terminating proxy, while
   * the test still talks plain http to the returned `baseUrl`.
   */
  publicScheme?: 'https';
}

/**
 * Starts the app on 127.0.0.1:0. The server listens first so the issuer can carry the real port.
 * Settings come from `properties` only (the process environment is ignored). The provider keys are the run's
 * shared set ({@link testProviderKeys}) unless the options name `jwks` (even as `undefined`, to generate them as a
 * bare start does) or the properties a keys file.
 */
export async function startApp(options: StartOptions = {}): Promise<RunningApp> {
  let handler: RequestListener = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server: Server = createHttpServer((req, res) => handler?.(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const settings = loadSettings({
    env: {},
    properties: {
      'svc.base-url': options.publicScheme === 'https' ? baseUrl.replace(/^http:/, 'https:') : baseUrl,
      'svc.port': port,
      'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS,
      'svc.subject.pairwise-key': TEST_PAIRWISE_KEY,
      ...options.properties,
    },
  });
  const { properties: _p, clientsFor, publicScheme: _s, ...runtime } = options;
  const ownKeys = 'jwks' in runtime || settings.keys.file !== undefined;
  const app = await createApp(settings, {
    logger: silentLogger,
    ...(ownKeys ? {} : { jwks: await testProviderKeys() }),
    ...runtime,
    clients: [...(runtime.clients ?? []), ...(clientsFor ? clientsFor(baseUrl) : [])],
  }).catch((err: unknown) => {
    server.close();
    throw err;
  });
  const callback = app.callback();
  handler = (req, res) => void callback(req, res);
  return {
    baseUrl,
    issuer: `${baseUrl}/oidc/v1`,
    app,
    settings,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.svc.close();
    },
  };
}

/** A confidential test client (client_secret_basic) redirecting to a URL nobody serves. */
export function confidentialClient(overrides: Partial<ClientMetadata> = {}): ClientMetadata {
  return {
    client_id: 'test-rp',
    client_secret: 'test-rp-secret-that-is-long-enough-0123456789',
    redirect_uris: ['http://rp.localhost/cb'],
    ...overrides,
  };
}

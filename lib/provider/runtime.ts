import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';

import type { ClientMetadata } from 'oidc-provider';

import { createStore } from '../../adapters/index.js';
import { ClaimRegistry, type ClaimModule } from '../claims/modules.js';
import type { Mailer } from '../management/mailer.js';
import type { SvcStore } from '../../adapters/store.js';
import { createStaticAuthenticator } from '../demo/accounts.js';
import { SettingsError } from '../errors.js';
import { readJsonFile } from '../user-files.js';
import type { Authenticator } from '../claims/authenticator.js';
import { guardAuthenticator } from '../claims/authenticator-guard.js';
import { unfailingLogger, type Logger } from '../logger.js';
import { createSettingsLogger } from '../observability/pino-logger.js';
import { summariseRepeatedFailures } from '../observability/repeated-failures.js';
import { loadAuthenticatorModule, loadClaimModules } from './plugin-modules.js';
import { publicPathsOf, type PublicPaths } from '../settings/paths.js';
import type { Settings } from '../settings/types.js';
import type { SuppliedParts } from '../settings/definitions.js';
import { warnIfExposed } from '../settings/secret-files.js';
import { isHashedClientSecret } from '../registration/client-secrets.js';
import { enforceSafeDefaults, findUnsafeDefaults } from '../settings/unsafe.js';
import { judgedStaticClient } from './static-client-keys.js';
import { generateProviderKeys, readSigningKeys, validateProviderKeys, type PrivateJwks, type ProviderKeys } from './keys.js';

/** Parts an embedder may supply in code instead of through properties. */
export interface RuntimeOptions {
  /** The store; default: from settings (Redis when configured, else the embedded memory store). */
  store?: SvcStore;
  /**
   * The provider's private keys: signing keys, and decryption keys (`use: "enc"`) for encrypted
   * request objects; default: `svc.keys.file`, else generated at start (both kinds).
   */
  jwks?: PrivateJwks;
  /** Signs people in; default: `svc.authenticator.module`, else the demo accounts when `svc.demo.enabled`, else required. */
  authenticator?: Authenticator;
  /** Statically provisioned clients, added to those of `svc.clients.file`. */
  clients?: ClientMetadata[];
  /** Where log lines go; default JSON lines (pino) on stdout at `svc.log.level`. */
  logger?: Logger;
  /** Claim modules providing user data (C5), before those of `svc.claims.modules`; without any, tokens carry `sub` only. */
  claimModules?: ClaimModule[];
  /** Sends invitation mails; default: SMTP from `svc.mail.smtp-url`, else the outbox folder. */
  mailer?: Mailer;
}

/** Everything resolved: what the provider and the app are built from. */
export interface Runtime {
  store: SvcStore;
  jwks: ProviderKeys;
  cookieKeys: string[];
  /** The key pairwise `sub`s are derived with: `svc.subject.pairwise-key`, else generated at start. */
  pairwiseKey: string;
  authenticator: Authenticator;
  clients: ClientMetadata[];
  logger: Logger;
  registry: ClaimRegistry;
  /** Where svc-connect lives publicly (issuer, base path, interaction pages), derived once. */
  paths: PublicPaths;
  /** How many unsafe defaults were warned about. */
  warnings: number;
}

/**
 * Checks the unsafe defaults (refused under production, else warned about), then resolves logger,
 * keys, cookie keys, store, authenticator and clients from settings and code. `served` adds what
 * the caller serves besides the provider (the management routes) to the check; `generateKeys` makes
 * the keys when neither code nor `svc.keys.file` gives them (`config check`, which starts nothing, makes none).
 */
export async function resolveRuntime(settings: Settings, options: RuntimeOptions = {}, served: SuppliedParts = {}, generateKeys = generateProviderKeys): Promise<Runtime> {
  // Unfailing inside: the summary drops what the lines return, and an async logger's rejection left alone ends the process.
  const logger = summariseRepeatedFailures(unfailingLogger(options.logger ?? createSettingsLogger(settings.log, settings.production)));
  const supplied = { store: !!options.store, keys: !!options.jwks, authenticator: !!options.authenticator, mailer: !!options.mailer && options.mailer.kind !== 'outbox', ...served };
  const unsafe = findUnsafeDefaults(settings, supplied);
  enforceSafeDefaults(settings, unsafe, logger);
  const jwks = options.jwks
    ? validateProviderKeys(options.jwks, 'options.jwks')
    : settings.keys.file
      ? readKeysFile(settings.keys.file, logger)
      : { ...(await generateKeys()), unpublished: [], signingOnly: [] };
  const cookieKeys = settings.cookies.keys ?? [randomBytes(32).toString('base64url')];
  // Unset: every pairwise sub changes at the next start (an unsafe default, refused in production).
  const pairwiseKey = settings.subject.pairwiseKey ?? randomBytes(32).toString('base64url');
  const context = { baseUrl: settings.baseUrl, production: settings.production, logger };
  let authenticator = options.authenticator ?? (settings.authenticator.module ? await loadAuthenticatorModule(settings.authenticator.module, context) : undefined);
  if (!authenticator) {
    if (!settings.demo.enabled) {
      throw new SettingsError(
        'svc.demo.enabled is false and no authenticator was given: set svc.authenticator.module to a module signing in your users (docs/operations/production.md), embed svc-connect with options.authenticator, or set svc.demo.enabled=true to sign in the demo accounts',
        ['svc.authenticator.module', 'svc.demo.enabled'],
      );
    }
    authenticator = createStaticAuthenticator();
  }
  const claimModules = [...(options.claimModules ?? []), ...(settings.claims.modules ? await loadClaimModules(settings.claims.modules, context) : [])];
  const clients = [
    ...(settings.clients.file ? readClients(settings.clients.file, logger).map((c) => judgedStaticClient(c, settings.baseUrl, 'svc.clients.file', ['svc.clients.file'])) : []),
    ...(options.clients ?? []).map((c) => judgedStaticClient(c, settings.baseUrl, 'options.clients')),
  ];
  const registry = new ClaimRegistry(claimModules, settings.claims.moduleTimeoutMs);
  const paths = publicPathsOf(settings.baseUrl);
  // Last, when nothing more can fail: a start refused for its settings leaves no connection open.
  const store = options.store ?? createStore(settings.redis, logger, { maxBytes: settings.memoryStore.maxMb * 2 ** 20 });
  return { store, jwks, cookieKeys, pairwiseKey, authenticator: guardAuthenticator(authenticator, settings.authenticator.timeoutMs), clients, logger, registry, paths, warnings: unsafe.length };
}

/** `svc.keys.file` read, and warned about when others than its owner may read it. */
export function readKeysFile(file: string, logger: Logger): ProviderKeys {
  const jwks = readSigningKeys(file);
  warnIfExposed(logger, 'svc.keys.file', file, "the provider's private keys");
  return jwks;
}

/** The most a clients file holds: some 70 clients as large as registration takes (56 KiB of metadata), thousands of usual ones. */
const CLIENTS_FILE_LIMIT = { maxBytes: 4 * 2 ** 20 };

/** `svc.clients.file` read, and warned about when others than its owner may read the client secrets it gives. */
function readClients(file: string, logger: Logger): ClientMetadata[] {
  const parsed = readJsonFile(file, (reason) => new SettingsError(`svc.clients.file: ${reason}`, ['svc.clients.file']), CLIENTS_FILE_LIMIT);
  if (!Array.isArray(parsed) || !parsed.every((c) => c && typeof c === 'object' && typeof (c as ClientMetadata).client_id === 'string')) {
    throw new SettingsError(`svc.clients.file ${resolve(file)} must hold an array of client metadata objects with client_id`, ['svc.clients.file']);
  }
  const clients = parsed as ClientMetadata[];
  if (clients.some((c) => typeof c.client_secret === 'string' && !isHashedClientSecret(c.client_secret))) warnIfExposed(logger, 'svc.clients.file', file, 'client secrets');
  return clients;
}

/**
 * svc-connect: a privacy-first OpenID Connect provider on node-oidc-provider and Koa.
 *
 * The public API, and only it (docs/api-report.md lists every export with its signature): the three
 * faces (a configuration factory, a ready provider, a Koa app or middleware), settings, the plug-in
 * contracts (authenticator, claim modules), stores, provider keys, initial access tokens and
 * invitations, logging, and the error vocabulary. Everything else is internal and may change.
 * @packageDocumentation
 */

// The three faces (C1).
export { createConfiguration, type ConfigurationParts } from './provider/configuration.js';
export { wrappedAdapter, type AdapterParts } from './provider/wrapping.js';
export type { FlowShareParts } from './provider/flow-share.js';
export type { ProxyTrust } from './web/client-address.js';
export { createProvider } from './provider/create-provider.js';
export { createApp, createSvcConnect, type KeysReload, type SvcApp, type SvcConnect, type SvcInfo } from './http/create-app.js';
export { createHttpServer, MAX_REQUEST_HEAD_BYTES } from './http/http-server.js';
export type { PublicPaths } from './settings/paths.js';
export type { RuntimeOptions } from './provider/runtime.js';

// Settings (C9).
export { loadSettings, type LoadSettingsOptions } from './settings/load.js';
export type { ClusterNode, Settings } from './settings/types.js';

// Plug-in contracts: who signs people in, who provides claims.
export type { Authenticator } from './claims/authenticator.js';
export { ClaimRegistry, type ClaimModule } from './claims/modules.js';
export type { Evidence, EvidenceCheck, Verification, VerifiedClaimsProvider, VerifiedOffer, VerifiedRecord } from './claims/verified.js';
export type { AuthenticatorModuleExport, ClaimModulesExport, ModuleContext } from './provider/plugin-modules.js';

// Stores.
export { createMemoryStore, createRedisStore, createStore, type MemoryStoreOptions, type RedisStoreOptions, type SvcStore } from '../adapters/index.js';
export type { AttemptCounter, AttemptRule } from '../adapters/store.js';
export type { ListedRecord, RecordPage, StoreInventory } from '../adapters/inventory.js';

// Provider keys, and their rotation in a keys file (what `svc-connect keys rotate|status` does).
export { generateProviderKeys, type PrivateJwks } from './provider/keys.js';
export { keysStatus, rotateKeysFile, type KeyStatus, type RotationOptions, type RotationStep } from './provider/key-rotation.js';
export type { KeyState } from './provider/key-states.js';

// Registration and invitations (C6, C7).
export { issueInitialAccessToken, revokeInitialAccessToken, type IssuedInitialAccessToken } from './registration/initial-access-tokens.js';
export { inviteClient, type InviteOptions } from './management/invite.js';
export { createMailer, type Mailer, type MailerOptions, type MailMessage, type MailReceipt } from './management/mailer.js';

// Logging.
export { LOG_LEVELS, silentLogger, type LogFields, type Logger, type LogLevel } from './logger.js';
export { createPinoLogger, createSettingsLogger, type LogFormat, type LogSettings } from './observability/pino-logger.js';

// The error vocabulary.
export {
  AlreadyConsumedError,
  AuthenticatorError,
  AuthenticatorUnavailableError,
  ClaimModuleError,
  ClaimSyntaxError,
  CliError,
  ClientDisabledError,
  ClientKeysRefusedError,
  DemoFlowError,
  InvalidCursorError,
  InvalidInvitationAddressError,
  isSvcError,
  MailDeliveryError,
  OutboundFetchError,
  SettingsError,
  StoreRecordUnreadableError,
  StoreUnavailableError,
  ToolboxError,
  type SvcErrorCode,
  type ThrownShape,
} from './errors.js';

/**
 * svc-connect: a privacy-first OpenID Connect provider on node-oidc-provider and Koa.
 * @packageDocumentation
 */
export { loadSettings, PROPERTY_DEFINITIONS, ruleDerivedEnv, findUnsafeDefaults, enforceSafeDefaults } from './settings/index.js';
export type { Settings, LoadSettingsOptions, PropertyDefinition, UnsafeDefault, SuppliedParts } from './settings/index.js';
export { createConfiguration, ID_TOKEN_TTL, INITIAL_ACCESS_TOKEN_TTL, type ConfigurationParts } from './provider/configuration.js';
export { createProvider } from './provider/create-provider.js';
export type { RuntimeOptions } from './provider/runtime.js';
export { generateSigningKeys, validateSigningKeys, type PrivateJwks } from './provider/keys.js';
export { ENCRYPTION_ALG_VALUES, ENCRYPTION_ENC_VALUES, SIGNING_ALG_VALUES, CLIENT_AUTH_METHODS } from './provider/algorithms.js';
export { issuerOf, PROVIDER_PATH, ROUTES } from './provider/paths.js';
export { createApp, createSvcConnect, type SvcApp, type SvcConnect } from './http/create-app.js';
export type { Authenticator } from './interactions/authenticator.js';
export { createStaticAuthenticator, DEMO_ACCOUNTS, type DemoAccount } from './demo/accounts.js';
export { SettingsError, StoreUnavailableError, AlreadyConsumedError } from './errors.js';
export { silentLogger, type Logger, type LogFields } from './logger.js';
export { createPinoLogger, LOG_LEVELS } from './observability/pino-logger.js';
export { createMetrics, type Metrics } from './observability/metrics.js';
export { routeOf } from './observability/routes.js';
export { createStore, createMemoryStore, createRedisStore, hashId, GRANTABLE_MODELS, type SvcStore, type MemoryStoreOptions, type RedisStoreOptions } from '../adapters/index.js';
export { issueInitialAccessToken, revokeInitialAccessToken, type IssuedInitialAccessToken } from './registration/initial-access-tokens.js';
export { fetchDocument, OutboundFetchError, type OutboundFetchOptions, type FetchedDocument } from './net/fetch.js';
export { createRegistrationPolicies, POLICY_NAMES, type RegistrationPolicy, type PolicyDependencies } from '../policies/index.js';
export { ClaimRegistry, SVC_VOCABULARY, type ClaimModule } from './claims/modules.js';
export { SCOPE_CLAIMS, SUPPORTED_SCOPES, PROTOCOL_CLAIMS } from './claims/scopes.js';
export { parseClaimName, expandClaimName, printClaimName, ClaimSyntaxError, CLAIM_SYNTAX_LIMITS, type ClaimNameTree, type PathNode, type ItemNode } from './claims/syntax.js';
export { channelCarriesUserData, channelMode, type Channel } from './claims/privacy.js';
export { inviteClient, validateInvitationAddress, InvalidInvitationAddressError, MailDeliveryError, type InviteOptions } from './management/invite.js';
export { createMailer, type Mailer, type MailMessage, type MailerOptions } from './management/mailer.js';
export { checkBasicAuth, type BasicAuthResult } from './management/basic-auth.js';
export { MANAGEMENT_ROLE } from './management/router.js';

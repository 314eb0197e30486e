import type { Adapter, ClientMetadata, Configuration, FindAccount } from 'oidc-provider';

import { createRegistrationPolicies } from '../../policies/index.js';
import { keptInlineKeys } from '../../policies/client-keys.js';
import { pairwiseSub, sectorOf, SUBJECT_TYPES, withSubjectDefaults } from '../../policies/subjects.js';
import { assertScope, assertStoredClaimsReachClient, claimsParameterAssertion } from '../claims/authorization.js';
import { deliveryTokenClaims } from '../claims/account.js';
import { createInteractionPolicy } from '../claims/essential-check.js';
import { withRedirectUriCheck } from '../interactions/redirect-check.js';
import type { ClaimRegistry } from '../claims/modules.js';
import { SCOPE_CLAIMS } from '../claims/scopes.js';
import { scopeOffer } from '../claims/supported.js';
import { ClaimValueMac } from '../claims/value-mac.js';
import { verifiedDiscovery } from '../claims/verified.js';
import { renderErrorPage } from '../pages/error-page.js';
import { fetchDocument, type OutboundFetchOptions } from '../net/fetch.js';
import { providerFetch } from '../net/provider-fetch.js';
import { silentLogger, type Logger } from '../logger.js';
import type { Settings } from '../settings/types.js';
import { CLIENT_AUTH_METHODS, ENCRYPTION_ALG_VALUES, ENCRYPTION_ENC_VALUES, SIGNING_ALG_VALUES } from '../../policies/supported-algorithms.js';
import type { PrivateJwks } from './keys.js';
import { publicPathsOf, ROUTES, type PublicPaths } from '../settings/paths.js';
import { logoutPage, offerSignOutInstead, postLogoutPage, type SubjectAt } from '../pages/logout-pages.js';
import { INITIAL_ACCESS_TOKEN_TTL } from '../registration/initial-access-tokens.js';
import { SIGN_IN_SECONDS } from '../management/subject-revocation.js';
import { newClientId } from '../registration/client-ids.js';
import { clientBasedCors } from './client-cors.js';
import { checkedOnce } from './pushed-requests.js';
import { assertRequestObject } from './request-objects.js';
import { clientAssertionCheck } from './replay-detection.js';
import { vettedJwksFetch } from './vetted-jwks-fetch.js';
import { judgedStaticClient } from './static-client-keys.js';

/** ID token lifetime: 24 hours, fixed (spec 2.6, C3). */
export const ID_TOKEN_TTL = 86_400;

const epochNow = (): number => Math.floor(Date.now() / 1000);

/** The parts of a configuration that are not properties: keys, store and accounts. */
export interface ConfigurationParts {
  /** Private signing keys of the provider. */
  jwks: PrivateJwks;
  /** Cookie signing keys, newest first. */
  cookieKeys: string[];
  /** The key pairwise `sub`s are derived with (`svc.subject.pairwise-key`); never rotated. */
  pairwiseKey: string;
  /**
   * The adapter factory, used as it comes: pass `wrappedAdapter({ store })`, or the store rules (pushed
   * requests checked and used once, single-use tokens, hashed client secrets, suspension) do not hold.
   */
  adapter: (model: string) => Adapter;
  /** Resolves an account by its id. */
  findAccount: FindAccount;
  /** Statically provisioned clients; their inline keys are judged by the key rules of registration (C6). */
  clients?: ClientMetadata[];
  /** The claim modules: what claims exist and who provides them. */
  registry: ClaimRegistry;
  /** Where `client_keys_refused` warnings go. @default silentLogger */
  logger?: Logger;
  /** Where svc-connect lives publicly; default: derived from `svc.base-url`. */
  paths?: PublicPaths;
}

/**
 * Turns {@link Settings} into an oidc-provider `Configuration` (pure: no I/O, no globals).
 * Code + PKCE (S256) only, 24-hour ID tokens, no refresh tokens, encryption with the C6 lists,
 * the C2 routes, our interaction pages, no dev interactions.
 */
export function createConfiguration(settings: Settings, parts: ConfigurationParts): Configuration {
  const encryptionAlgs = [...ENCRYPTION_ALG_VALUES];
  const encryptionEncs = [...ENCRYPTION_ENC_VALUES];
  const signingAlgs = [...SIGNING_ALG_VALUES];
  const outbound: OutboundFetchOptions = { allowPrivateNetwork: settings.fetch.allowPrivateNetwork, privateHosts: settings.fetch.privateHosts };
  const valueMac = new ClaimValueMac(parts.cookieKeys);
  const paths = parts.paths ?? publicPathsOf(settings.baseUrl);
  const pairwise = pairwiseConfiguration(parts);
  return {
    adapter: parts.adapter,
    // Judged here too, so clients given to this function directly are held to the key rules as well (C6).
    clients: withSubjectDefaults((parts.clients ?? []).map((c) => judgedStaticClient(c, settings.baseUrl, 'clients')), settings.subject.defaultType),
    ...pairwise,
    findAccount: parts.findAccount,
    jwks: parts.jwks,
    cookies: {
      keys: parts.cookieKeys,
      // SameSite=None: a cross-site form POST to /authorize must carry the session (Lax on http, see
      // laxCookiesOnHttp). Scoped to the provider's path: other applications on the host never get it.
      long: { httpOnly: true, sameSite: 'none', path: paths.providerPath },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    // OpenID Connect Core 3.1.2.1: the authorization endpoint supports GET and POST (C2).
    enableHttpPostMethods: true,
    routes: { ...ROUTES },
    responseTypes: ['code'],
    // OpenID Connect Core 3.1.2.1 requires redirect_uri at /authorize, so RFC 6749 4.1.3 requires it at /token.
    allowOmittingSingleRegisteredRedirectUri: false,
    pkce: { required: () => true },
    extraParams: {
      // Runs after client and redirect_uri checks, so the error is redirected with `state` (C3).
      scope: assertScope,
    },
    // Only the scopes whose claims the modules provide (C5); a request naming another is served without it.
    scopes: [...scopeOffer(parts.registry).offered],
    claims: claimsConfiguration(parts.registry),
    discovery: {
      claim_types_supported: ['normal'],
      ...(parts.registry.offer ? verifiedDiscovery(parts.registry.offer) : {}),
    },
    // Scope claims may travel in the ID token (by default their one channel, C5); findAccount picks it.
    conformIdTokenClaims: false,
    extraTokenClaims: async (ctx) => deliveryTokenClaims(ctx),
    acrValues: [],
    clientAuthMethods: [...CLIENT_AUTH_METHODS],
    assertJwtClientAuthClaimsAndHeader: clientAssertionCheck({ endpointAudience: settings.clientAssertion.endpointAudience }),
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      id_token_signed_response_alg: 'RS256',
      token_endpoint_auth_method: 'client_secret_basic',
    },
    extraClientMetadata: {
      properties: ['allow_unencrypted_userinfo'],
      validator(ctx, key, value, metadata) {
        if (key !== 'allow_unencrypted_userinfo') return;
        // Without ctx the client is built from stored or static metadata, not from a registration its policies just judged.
        if (ctx === undefined && metadata.jwks !== undefined) metadata.jwks = keptInlineKeys(metadata);
        if (value === undefined) metadata.allow_unencrypted_userinfo = false;
        // Thrown as invalid_client_metadata by oidc-provider's schema validation.
        else if (typeof value !== 'boolean') throw new TypeError('allow_unencrypted_userinfo must be a boolean');
      },
    },
    ttl: {
      AccessToken: settings.accessToken.ttl,
      AuthorizationCode: 60,
      IdToken: ID_TOKEN_TTL,
      Interaction: 3600,
      // Counted from her sign-in, not from its last use (oidc-provider saves the session on every request, so a
      // fixed TTL would let a session used now and then live for ever). A session nobody signed in to holds only a
      // logout's state: kept as long as an interaction.
      Session: (_ctx, session) => (session.accountId ? Math.max(1, (session.loginTs ?? epochNow()) + SIGN_IN_SECONDS - epochNow()) : 3600),
      Grant: 14 * 24 * 3600,
      InitialAccessToken: INITIAL_ACCESS_TOKEN_TTL,
    },
    features: {
      devInteractions: { enabled: false },
      encryption: { enabled: true },
      jwtUserinfo: { enabled: true },
      userinfo: { enabled: true },
      // Checked (budget first) in the query, a form body, a request object and a pushed request, once ({@link checkedOnce}).
      claimsParameter: {
        enabled: true,
        assertClaimsParameter: checkedOnce(claimsParameterAssertion(parts.registry, valueMac), (_ctx, claims, client) => assertStoredClaimsReachClient(claims as Record<string, unknown>, client)),
      },
      // By value (RFC 9101), signed by the client (never `none`), maybe encrypted to our `enc` keys;
      // oidc-provider 9 dereferences no `request_uri` but the provider's own PAR URNs.
      requestObjects: { enabled: true, requireSignedRequestObject: false, assertJwtClaimsAndHeader: assertRequestObject },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: logoutPage((ctx, accountId, client) => (client.subjectType === 'pairwise' ? pairwise.pairwiseIdentifier(ctx, accountId, client) : accountId)),
        postLogoutSuccessSource: postLogoutPage,
      },
      registration: {
        enabled: true,
        initialAccessToken: true,
        issueRegistrationAccessToken: true,
        idFactory: newClientId,
        policies: createRegistrationPolicies({ fetch: (url, accept) => fetchDocument(url, outbound, accept), defaultSubjectType: settings.subject.defaultType, httpsOnly: settings.baseUrl.startsWith('https:') }),
      },
      registrationManagement: { enabled: true, rotateRegistrationAccessToken: true },
      // RFC 9126 at /par: client-authenticated, `request_uri` valid 60 s, used once, bound to the client.
      pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: settings.par.required, allowUnregisteredRedirectUris: false },
      dPoP: { enabled: false },
      resourceIndicators: { enabled: false },
      revocation: { enabled: false },
      introspection: { enabled: false },
    },
    enabledJWA: {
      idTokenSigningAlgValues: signingAlgs,
      userinfoSigningAlgValues: signingAlgs,
      requestObjectSigningAlgValues: signingAlgs,
      clientAuthSigningAlgValues: signingAlgs,
      idTokenEncryptionAlgValues: encryptionAlgs,
      idTokenEncryptionEncValues: encryptionEncs,
      userinfoEncryptionAlgValues: encryptionAlgs,
      userinfoEncryptionEncValues: encryptionEncs,
      requestObjectEncryptionAlgValues: encryptionAlgs,
      requestObjectEncryptionEncValues: encryptionEncs,
    },
    interactions: {
      policy: withRedirectUriCheck(createInteractionPolicy(parts.registry, valueMac, settings.stage.includeScopesInUserInfo)),
      url: (_ctx, interaction) => paths.interaction(interaction.uid),
    },
    clientBasedCORS: clientBasedCors,
    renderError: async (ctx, out, error) => void (offerSignOutInstead(ctx, out) || (await renderErrorPage(ctx, out, error))),
    fetch: vettedJwksFetch(providerFetch(outbound), parts.logger ?? silentLogger),
    fetchResponseBodyLimits: { jwks_uri: 512 * 1024, sector_identifier_uri: 512 * 1024, 'client_id metadata document': 5 * 1024 },
  };
}

/**
 * Pairwise subjects (OpenID Connect Core 8.1). A registered client's `sector_identifier_uri` was checked
 * by policy `svc/subject-type`; oidc-provider checks a static client's once, when it first loads it.
 */
function pairwiseConfiguration(parts: ConfigurationParts): Pick<Configuration, 'subjectTypes' | 'sectorIdentifierUriValidate'> & { pairwiseIdentifier: SubjectAt } {
  const staticIds = new Set((parts.clients ?? []).map((c) => c.client_id));
  return {
    subjectTypes: [...SUBJECT_TYPES],
    pairwiseIdentifier: (_ctx, accountId, client) => {
      const sector = sectorOf({
        sector_identifier_uri: client.sectorIdentifierUri,
        redirect_uris: client.redirectUris ? [...client.redirectUris] : [],
        client_id: client.clientId,
      });
      if (sector === undefined) throw new Error(`client ${client.clientId} has no sector`);
      return pairwiseSub(parts.pairwiseKey, sector, accountId);
    },
    sectorIdentifierUriValidate: (client) => staticIds.has(client.clientId),
  };
}

/** oidc-provider's `claims`: the offered scopes, the `scope` claim (protocol data), every claim the modules provide. */
function claimsConfiguration(registry: ClaimRegistry): NonNullable<Configuration['claims']> {
  const claims: Record<string, string[] | null> = { auth_time: null, iss: null };
  // oidc-provider adds every scope named here to scopes_supported: only the offered ones are named.
  for (const scope of scopeOffer(registry).offered) {
    const names = SCOPE_CLAIMS[scope] ?? [];
    claims[scope] = scope === 'openid' ? [...names, 'scope'] : [...names];
  }
  for (const name of registry.supportedNames()) if (!(name in claims)) claims[name] = null;
  if (registry.offer) claims.verified_claims = null;
  return claims;
}

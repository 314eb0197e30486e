import type { ClientMetadata } from 'oidc-provider';

import { reject, type RegistrationPolicy } from './types.js';

/** The scope values C5 serves a request without: a registered `scope` naming them is stored without them. */
const UNSERVED_SCOPES: ReadonlySet<string> = new Set(['address', 'phone', 'offline_access']);

/**
 * `metadata` as it is served, RFC 7591 3.2.1 letting the server replace metadata (the answer shows what was stored):
 * - without `default_acr_values` (OpenID Connect Registration 2), an array of strings: it asks for `acr` as a
 *   voluntary claim, and `acr` is never issued (C3), as an authorization request's `acr_values` is ignored;
 * - its `scope` without `address`, `phone` and `offline_access`, as an authorization request naming them is served
 *   without them (C5); a `scope` without `openid` is refused, since every authorization request must name it.
 * Anything else in those two members is refused (`invalid_client_metadata`), as is a `grant_types` naming another grant
 * than `authorization_code` (oidc-provider would refuse some with a message about another member), and an empty
 * `grant_types` or a `response_types` without `code` (oidc-provider would store a client it answers `invalid_request`).
 */
export function withServedMetadata<T extends ClientMetadata>(metadata: T): T {
  const { default_acr_values: acr, ...rest } = metadata;
  if (acr !== undefined && !(Array.isArray(acr) && acr.every((value) => typeof value === 'string'))) reject('default_acr_values', 'must be an array of strings');
  const grants: unknown = metadata.grant_types;
  const other: unknown = Array.isArray(grants) ? (grants as unknown[]).find((grant) => grant !== 'authorization_code') : undefined;
  if (other !== undefined) reject('grant_types', `${JSON.stringify(other)} is not offered: authorization_code is the only grant (no refresh tokens: C3)`);
  // RFC 7591 2.1: the code grant and response type go together; a list without them registers a client nobody can use.
  if (Array.isArray(grants) && grants.length === 0) reject('grant_types', 'must include authorization_code, the only grant');
  const responses: unknown = metadata.response_types;
  if (Array.isArray(responses) && !responses.includes('code')) reject('response_types', 'must include code, the only response type');
  const scope: unknown = metadata.scope;
  if (scope === undefined) return rest as T;
  if (typeof scope !== 'string') reject('scope', 'must be a string of space-separated scope values');
  const values = scope.split(' ').filter((value) => !UNSERVED_SCOPES.has(value));
  if (!values.includes('openid')) reject('scope', 'must include openid: every authorization request names it (OpenID Connect Core 3.1.2.1)');
  return { ...rest, scope: values.join(' ') } as T;
}

/** The token endpoint methods served that present no client secret. */
const SECRETLESS_METHODS: ReadonlySet<unknown> = new Set(['none', 'private_key_jwt']);

/**
 * Policy `svc/served-metadata`: {@link withServedMetadata} at every registration and update. An update to a method
 * without the secret drops it, so a return to one issues a new secret rather than reviving the old one.
 */
export const servedMetadataPolicy: RegistrationPolicy = async (_ctx, properties) => {
  const served = withServedMetadata(properties);
  delete properties.default_acr_values;
  if (served.scope !== undefined) properties.scope = served.scope;
  if (SECRETLESS_METHODS.has(properties.token_endpoint_auth_method)) {
    delete properties.client_secret;
    delete properties.client_secret_expires_at;
  }
};

import type { ClientMetadata } from 'oidc-provider';

import { reject, type RegistrationPolicy } from './types.js';

/**
 * `metadata` without `default_acr_values` (OpenID Connect Registration 2) when it is an array of strings; refused
 * (`invalid_client_metadata`) otherwise. It asks for `acr` as a voluntary claim, and `acr` is never issued (C3), as an
 * authorization request's `acr_values` is accepted and ignored; RFC 7591 3.2.1 lets the server replace metadata
 * (the answer shows what was stored).
 */
export function withoutDefaultAcrValues<T extends ClientMetadata>(metadata: T): T {
  const values: unknown = metadata.default_acr_values;
  if (values === undefined) return metadata;
  if (!Array.isArray(values) || !values.every((value) => typeof value === 'string')) reject('default_acr_values', 'must be an array of strings');
  const { default_acr_values: _dropped, ...rest } = metadata;
  return rest as T;
}

/** Policy `svc/acr-values`: {@link withoutDefaultAcrValues} at every registration and update. */
export const acrValuesPolicy: RegistrationPolicy = async (_ctx, properties) => {
  withoutDefaultAcrValues(properties);
  delete properties.default_acr_values;
};

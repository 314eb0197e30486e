import { reject, type RegistrationPolicy } from './types.js';

/**
 * Policy `svc/acr-values`: `default_acr_values` (OpenID Connect Registration 2) is dropped when it is an array of
 * strings, refused otherwise. It asks for `acr` as a voluntary claim, and `acr` is never issued (C3), as an
 * authorization request's `acr_values` is accepted and ignored; RFC 7591 3.2.1 lets the server replace metadata
 * (the answer shows what was stored).
 */
export const acrValuesPolicy: RegistrationPolicy = async (_ctx, properties) => {
  const values: unknown = properties.default_acr_values;
  if (values === undefined) return;
  if (!Array.isArray(values) || !values.every((value) => typeof value === 'string')) reject('default_acr_values', 'must be an array of strings');
  delete properties.default_acr_values;
};

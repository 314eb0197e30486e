/**
 * The algorithm lists svc-connect offers (C6, C12.3). Symmetric algorithms, `none`, `RSA1_5` and
 * `PBES2-*` are never offered.
 */

/** Key-management algorithms for encrypted ID tokens and UserInfo. */
export const ENCRYPTION_ALG_VALUES = ['RSA-OAEP', 'RSA-OAEP-256', 'ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'] as const;

/** Content-encryption algorithms for encrypted ID tokens and UserInfo. */
export const ENCRYPTION_ENC_VALUES = ['A128CBC-HS256', 'A192CBC-HS384', 'A256CBC-HS512', 'A128GCM', 'A256GCM'] as const;

/** Signing algorithms for ID tokens, UserInfo, request objects and `private_key_jwt`. */
export const SIGNING_ALG_VALUES = ['RS256', 'PS256', 'ES256'] as const;

/** Token endpoint client authentication methods (C3). */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'] as const;

import type { ClientMetadata } from 'oidc-provider';

import { ENCRYPTION_ALG_VALUES, ENCRYPTION_ENC_VALUES, SIGNING_ALG_VALUES } from './supported-algorithms.js';
import { reject, type RegistrationPolicy } from './types.js';

/** JWS algorithms of RFC 7518 section 3.1. */
const RFC7518_JWS = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'none'];
/** JWE key-management algorithms of RFC 7518 section 4.1. */
const RFC7518_JWE_ALG = [
  'RSA1_5', 'RSA-OAEP', 'RSA-OAEP-256', 'A128KW', 'A192KW', 'A256KW', 'dir', 'ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW',
  'ECDH-ES+A256KW', 'A128GCMKW', 'A192GCMKW', 'A256GCMKW', 'PBES2-HS256+A128KW', 'PBES2-HS384+A192KW', 'PBES2-HS512+A256KW',
];
/** JWE content-encryption algorithms of RFC 7518 section 5.1. */
const RFC7518_JWE_ENC = ['A128CBC-HS256', 'A192CBC-HS384', 'A256CBC-HS512', 'A128GCM', 'A192GCM', 'A256GCM'];

/** Client metadata fields naming a signing algorithm. */
const SIGNING_FIELDS = [
  'id_token_signed_response_alg',
  'userinfo_signed_response_alg',
  'request_object_signing_alg',
  'token_endpoint_auth_signing_alg',
  'introspection_signed_response_alg',
  'authorization_signed_response_alg',
] as const;

/** Client metadata fields naming a key-management algorithm, with their content-encryption partner. */
export const ENCRYPTION_FIELDS = [
  ['id_token_encrypted_response_alg', 'id_token_encrypted_response_enc'],
  ['userinfo_encrypted_response_alg', 'userinfo_encrypted_response_enc'],
  ['request_object_encryption_alg', 'request_object_encryption_enc'],
  ['introspection_encrypted_response_alg', 'introspection_encrypted_response_enc'],
  ['authorization_encrypted_response_alg', 'authorization_encrypted_response_enc'],
] as const;

const isSymmetric = (alg: string): boolean => /^(HS\d+|dir|A\d+KW|A\d+GCMKW|PBES2-.*)$/.test(alg);

function check(field: string, value: unknown, rfc: string[], offered: readonly string[]): void {
  if (value === undefined) return;
  if (typeof value !== 'string') reject(field, 'must be a string');
  if (value === 'none') reject(field, 'none is never supported');
  if (!rfc.includes(value)) reject(field, `${value} is not an RFC 7518 algorithm`);
  if (isSymmetric(value)) reject(field, `symmetric algorithm ${value} is not supported`);
  if (value === 'RSA1_5') reject(field, 'RSA1_5 is not supported (padding-oracle prone); use RSA-OAEP-256');
  if (!offered.includes(value)) reject(field, `${value} is not offered; use one of ${offered.join(', ')}`);
}

/**
 * Policy `svc/algorithms`: every algorithm the client names is an RFC 7518 value, asymmetric, not
 * `none`, not `RSA1_5` or `PBES2-*`, and one this provider offers; an `*_enc` needs its `*_alg`.
 */
export const algorithmsPolicy: RegistrationPolicy = async (_ctx, properties: ClientMetadata) => {
  for (const field of SIGNING_FIELDS) check(field, properties[field], RFC7518_JWS, SIGNING_ALG_VALUES);
  for (const [algField, encField] of ENCRYPTION_FIELDS) {
    check(algField, properties[algField], RFC7518_JWE_ALG, ENCRYPTION_ALG_VALUES);
    check(encField, properties[encField], RFC7518_JWE_ENC, ENCRYPTION_ENC_VALUES);
    if (properties[encField] !== undefined && properties[algField] === undefined) {
      reject(encField, `requires ${algField}`);
    }
  }
};

import { reject, type RegistrationPolicy } from './types.js';

/**
 * Policy `svc/privacy-metadata`: `allow_unencrypted_userinfo` is a boolean (default false), and a
 * client asking for encrypted UserInfo without a signing algorithm gets RS256 (UserInfo is signed,
 * then encrypted; C12.4).
 */
export const privacyMetadataPolicy: RegistrationPolicy = async (_ctx, properties) => {
  const optOut = properties.allow_unencrypted_userinfo;
  if (optOut !== undefined && typeof optOut !== 'boolean') reject('allow_unencrypted_userinfo', 'must be true or false');
  if (properties.userinfo_encrypted_response_alg !== undefined && properties.userinfo_signed_response_alg === undefined) {
    properties.userinfo_signed_response_alg = 'RS256';
  }
};

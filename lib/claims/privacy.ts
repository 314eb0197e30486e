import type { Client } from 'oidc-provider';

import type { ChannelMode } from '../pages/interaction-pages.js';

/** The two channels user data can travel on. */
export type Channel = 'id_token' | 'userinfo';

/** How `channel` treats user data for `client` (C4): registered encryption, the opt-out, or protocol claims only. */
export function channelMode(client: Client, channel: Channel): ChannelMode {
  // Not `client.metadata()`: it rebuilds the whole object on every call.
  const alg = channel === 'id_token' ? client.idTokenEncryptedResponseAlg : client.userinfoEncryptedResponseAlg;
  if (typeof alg === 'string' && alg.length > 0) return 'encrypted';
  const extra = client as unknown as { allowUnencryptedUserinfo?: unknown; allow_unencrypted_userinfo?: unknown };
  return (extra.allowUnencryptedUserinfo ?? extra.allow_unencrypted_userinfo) === true ? 'unencrypted' : 'withheld';
}

/** Whether `channel` may carry user data to `client` at all (encrypted, or by the client's opt-out). */
export function channelCarriesUserData(client: Client, channel: Channel): boolean {
  return channelMode(client, channel) !== 'withheld';
}

/** How a client makes `channel` encrypted to its own key (no opt-out is offered). */
export const encryptionFix = (channel: Channel): string =>
  `register ${channel}_encrypted_response_alg (e.g. RSA-OAEP-256) with an encryption key in jwks or jwks_uri`;

/** How a client fixes its registration to receive user data on `channel`. */
export function privacyFix(channel: Channel): string {
  const where = channel === 'id_token' ? 'ID token' : 'UserInfo response';
  return `the client cannot receive user data in the ${where}: ${encryptionFix(channel)}, or set allow_unencrypted_userinfo to true`;
}

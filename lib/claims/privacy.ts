import type { Client } from 'oidc-provider';

/** The two channels user data can travel on. */
export type Channel = 'id_token' | 'userinfo';

/**
 * How `channel` treats user data for `client` (C4): `encrypted` when the client registered
 * encryption for it; `unencrypted` when it opted out with `allow_unencrypted_userinfo: true`;
 * `withheld` otherwise (the channel carries protocol claims only).
 */
export function channelMode(client: Client, channel: Channel): 'encrypted' | 'unencrypted' | 'withheld' {
  // Read the camel-cased properties oidc-provider keeps on the instance: `client.metadata()` would
  // rebuild the whole metadata object on every call (it showed in the benchmark's profile).
  const alg = channel === 'id_token' ? client.idTokenEncryptedResponseAlg : client.userinfoEncryptedResponseAlg;
  if (typeof alg === 'string' && alg.length > 0) return 'encrypted';
  const extra = client as unknown as { allowUnencryptedUserinfo?: unknown; allow_unencrypted_userinfo?: unknown };
  return (extra.allowUnencryptedUserinfo ?? extra.allow_unencrypted_userinfo) === true ? 'unencrypted' : 'withheld';
}

/** Whether `channel` may carry user data to `client` at all (encrypted, or by the client's opt-out). */
export function channelCarriesUserData(client: Client, channel: Channel): boolean {
  return channelMode(client, channel) !== 'withheld';
}

/** How a client fixes its registration to receive user data on `channel`. */
export function privacyFix(channel: Channel): string {
  const field = channel === 'id_token' ? 'id_token_encrypted_response_alg' : 'userinfo_encrypted_response_alg';
  return `the client cannot receive user data in the ${channel === 'id_token' ? 'ID token' : 'UserInfo response'}: register ${field} (e.g. RSA-OAEP-256) with an encryption key in jwks or jwks_uri, or set allow_unencrypted_userinfo to true`;
}

/** How a client makes `channel` encrypted to its own key (no opt-out is offered). */
export function encryptionFix(channel: Channel): string {
  const field = channel === 'id_token' ? 'id_token_encrypted_response_alg' : 'userinfo_encrypted_response_alg';
  return `register ${field} (e.g. RSA-OAEP-256) with an encryption key in jwks or jwks_uri`;
}

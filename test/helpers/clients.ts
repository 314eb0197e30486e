import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { issueInitialAccessToken } from '../../lib/index.js';
import type { RunningApp } from './app.js';
import { authorizationUrl, codeFlowParams } from './flow.js';
import { encryptionKey, manage, register } from './registration.js';

/** A client registered through the registration endpoint, with its private decryption key. */
export interface RegisteredClient {
  metadata: ClientMetadata;
  privateKey?: CryptoKey;
  kid?: string;
  /** Enables openid-client's decryption with this client's key. */
  configure: (config: oidc.Configuration) => void;
}

/** Registers a client through `/register` (with a fresh initial access token). */
export async function registerClient(
  running: RunningApp,
  kind: 'rsa' | 'ecdh' | 'plain' | 'optout' | 'signed-userinfo',
  extra: Partial<ClientMetadata> = {},
): Promise<RegisteredClient> {
  const { token } = await issueInitialAccessToken(running.app.svc.provider);
  const body: Record<string, unknown> = { redirect_uris: ['https://rp.example/cb'], client_name: `${kind} test client`, ...extra };
  let key: Awaited<ReturnType<typeof encryptionKey>> | undefined;
  if (kind === 'rsa' || kind === 'ecdh') {
    const alg = kind === 'rsa' ? 'RSA-OAEP-256' : 'ECDH-ES+A256KW';
    key = await encryptionKey(alg);
    Object.assign(body, { id_token_encrypted_response_alg: alg, userinfo_encrypted_response_alg: alg, jwks: { keys: [key.jwk] } });
  }
  if (kind === 'optout') body.allow_unencrypted_userinfo = true;
  if (kind === 'signed-userinfo') body.userinfo_signed_response_alg = 'RS256';
  // `extra` wins over the kind's metadata (`undefined` leaves a member out).
  Object.assign(body, extra);
  const res = await register(running, body, token);
  if (res.status !== 201) throw new Error(`registration failed: ${JSON.stringify(res.body)}`);
  const kid = key?.jwk.kid;
  return {
    metadata: res.body as unknown as ClientMetadata,
    privateKey: key?.privateKey,
    kid,
    configure: (config) => {
      if (key) oidc.enableDecryptingResponses(config, undefined, { key: key.privateKey, kid });
    },
  };
}

/**
 * The authorization request of a client registered by {@link registerClient}: its
 * {@link codeFlowParams} with state `st`, each overridden by `params`.
 */
export function registeredClientParams(client: RegisteredClient, params: Record<string, string> = {}): Record<string, string> {
  return codeFlowParams(client.metadata, { state: 'st', ...params });
}

/** {@link registeredClientParams} as a URL of `issuer`'s authorization endpoint. */
export function registeredClientUrl(issuer: string, client: RegisteredClient, params: Record<string, string> = {}): string {
  return authorizationUrl(issuer, registeredClientParams(client, params));
}

/** Replaces `client`'s registration (RFC 7592 PUT) with `changes` applied (`undefined` removes a member); the new view. */
export async function updateRegistration(client: RegisteredClient, changes: Record<string, unknown>): Promise<RegisteredClient> {
  const { registration_access_token: token, registration_client_uri: uri, client_secret_expires_at: _e, client_id_issued_at: _i, ...metadata } = client.metadata as Record<string, unknown>;
  const res = await manage(uri as string, 'PUT', token as string, Object.fromEntries(Object.entries({ ...metadata, ...changes }).filter(([, v]) => v !== undefined)));
  if (res.status !== 200) throw new Error(`registration update answered ${res.status}: ${JSON.stringify(res.body)}`);
  return { ...client, metadata: { ...client.metadata, ...res.body } };
}

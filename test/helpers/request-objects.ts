import { CompactEncrypt, importJWK, SignJWT, type JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { issueInitialAccessToken } from '../../lib/index.js';
import type { RunningApp } from './app.js';
import { signIn } from './flow.js';
import { rpKeyPair } from './rp-keys.js';
import { encryptionKey, register } from './registration.js';

/** Signing algorithms a relying party may sign request objects with here. */
export type SigningAlg = 'RS256' | 'PS256' | 'ES256';
/** Key-management algorithms a relying party may encrypt request objects with here. */
export type RequestEncryptionAlg = 'RSA-OAEP' | 'RSA-OAEP-256' | 'ECDH-ES' | 'ECDH-ES+A128KW' | 'ECDH-ES+A256KW';

/** A signing key pair of a relying party: the private key and its public JWK (`use: "sig"`). */
export async function signingKey(alg: SigningAlg, kid = `sig-${alg}`): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const { privateKey, publicJwk } = await rpKeyPair(alg);
  return { privateKey, jwk: { ...publicJwk, use: 'sig', kid } };
}

/** A registered client that signs request objects, with an encryption key for the tokens it receives. */
export interface SigningClient {
  metadata: ClientMetadata;
  /** Signs its request objects (and `private_key_jwt` assertions). */
  signingKey: CryptoKey;
  kid: string;
  /** The algorithm {@link signingKey} signs with. */
  alg: SigningAlg;
  /** The key ID tokens and UserInfo are encrypted to. */
  decryptionKey: CryptoKey;
  /**
   * openid-client's configuration for this client (discovery, its client authentication,
   * decryption), at the issuer it registered with unless another (sharing the store) is named.
   */
  config(issuer?: string): Promise<oidc.Configuration>;
}

/**
 * Registers a client through `/register` with a signature key (`alg`, default PS256) and an
 * RSA-OAEP-256 encryption key (ID token and UserInfo encrypted to it), plus `extra` metadata.
 * Client authentication: `client_secret_basic`, unless `extra` says `private_key_jwt` or
 * `client_secret_post`.
 */
export async function registerSigningClient(running: RunningApp, extra: Partial<ClientMetadata> = {}, alg: SigningAlg = 'PS256'): Promise<SigningClient> {
  const sig = await signingKey(alg);
  const enc = await encryptionKey('RSA-OAEP-256');
  const { token } = await issueInitialAccessToken(running.app.svc.provider);
  const res = await register(
    running,
    {
      redirect_uris: ['https://rp.example/cb'],
      id_token_encrypted_response_alg: 'RSA-OAEP-256',
      userinfo_encrypted_response_alg: 'RSA-OAEP-256',
      jwks: { keys: [sig.jwk, enc.jwk] },
      ...extra,
    },
    token,
  );
  if (res.status !== 201) throw new Error(`registration failed: ${JSON.stringify(res.body)}`);
  const metadata = res.body as unknown as ClientMetadata;
  const kid = sig.jwk.kid as string;
  const auth = (): oidc.ClientAuth => {
    if (metadata.token_endpoint_auth_method === 'private_key_jwt') return oidc.PrivateKeyJwt({ key: sig.privateKey, kid });
    if (metadata.token_endpoint_auth_method === 'client_secret_post') return oidc.ClientSecretPost(metadata.client_secret);
    return oidc.ClientSecretBasic(metadata.client_secret);
  };
  return {
    metadata,
    signingKey: sig.privateKey,
    kid,
    alg,
    decryptionKey: enc.privateKey,
    async config(issuer = running.issuer) {
      const config = await oidc.discovery(new URL(issuer), metadata.client_id, undefined, auth(), { execute: [oidc.allowInsecureRequests] });
      oidc.enableDecryptingResponses(config, undefined, { key: enc.privateKey, kid: enc.jwk.kid as string });
      return config;
    },
  };
}

/** Where a flow with a request object (by value or pushed) ended: the browser's URL, the ID token's claims, UserInfo. */
export interface RequestObjectFlow {
  url: URL;
  claims: Record<string, unknown>;
  userinfo: Record<string, unknown>;
}

/**
 * Completes a flow from its authorization `url`: signs in (as `login`, password the same; default
 * demo), redeems the code with `config` and the PKCE `verifier`, checks `nonce`, fetches UserInfo.
 */
export async function completeFlow(config: oidc.Configuration, url: URL, verifier: string, nonce: string, login?: string): Promise<RequestObjectFlow> {
  const { callbackUrl } = await signIn(url.href, { login, password: login });
  const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedNonce: nonce, idTokenExpected: true });
  const claims = tokens.claims() as Record<string, unknown>;
  return { url, claims, userinfo: await oidc.fetchUserInfo(config, tokens.access_token, claims.sub as string) };
}

/** The provider's published decryption key for `alg` (from its JWKS, `use: "enc"`). */
export async function providerEncryptionKey(issuer: string, alg: RequestEncryptionAlg): Promise<{ key: CryptoKey; kid: string }> {
  const { keys } = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: JWK[] };
  const kty = alg.startsWith('RSA') ? 'RSA' : 'EC';
  const jwk = keys.find((k) => k.use === 'enc' && k.kty === kty);
  if (!jwk) throw new Error(`the provider publishes no ${kty} encryption key`);
  return { key: (await importJWK(jwk, alg)) as CryptoKey, kid: jwk.kid as string };
}

/** Encrypts a signed request object to the provider (nested JWT, `cty: "JWT"`). */
export async function encryptRequestObject(issuer: string, jws: string, alg: RequestEncryptionAlg, enc = 'A256GCM'): Promise<string> {
  const { key, kid } = await providerEncryptionKey(issuer, alg);
  return new CompactEncrypt(new TextEncoder().encode(jws)).setProtectedHeader({ alg, enc, kid, cty: 'JWT' }).encrypt(key);
}

/**
 * Signs a request object by hand (for hostile ones openid-client will not make): `claims` as the
 * payload, with `iss` = client, `aud` = issuer, `iat`, `exp` in 60 s, unless `claims` overrides them.
 */
export async function signRequestObject(
  client: SigningClient,
  issuer: string,
  claims: Record<string, unknown>,
  options: { key?: CryptoKey; kid?: string; alg?: SigningAlg } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: client.metadata.client_id, aud: issuer, iat: now, exp: now + 60, client_id: client.metadata.client_id, ...claims })
    .setProtectedHeader({ alg: options.alg ?? client.alg, kid: options.kid ?? client.kid, typ: 'oauth-authz-req+jwt' })
    .sign(options.key ?? client.signingKey);
}

/** Where an authorization request ended before any page: the redirect's parameters, or the error page's code and details. */
export interface Outcome {
  status: number;
  error?: string;
  description?: string;
  state?: string;
  /** The interaction page the browser was sent to (a request that passed every check). */
  interaction?: string;
}

const unescape = (text: string): string => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** Sends an authorization request once (no redirects followed; GET unless `init` says otherwise) and reads where it ended. */
export async function outcomeOf(url: string | URL, init: RequestInit = {}): Promise<Outcome> {
  const response = await fetch(url, { ...init, redirect: 'manual' });
  const location = response.headers.get('location');
  if (location) {
    const target = new URL(location, url);
    if (target.pathname.includes('/interaction/')) return { status: response.status, interaction: target.pathname };
    const q = target.hash ? new URLSearchParams(target.hash.slice(1)) : target.searchParams;
    return { status: response.status, error: q.get('error') ?? undefined, description: q.get('error_description') ?? undefined, state: q.get('state') ?? undefined };
  }
  const page = await response.text();
  const error = /Error: <code>([^<]*)<\/code>/.exec(page)?.[1];
  const description = /Details: ([^<]*)<\/p>/.exec(page)?.[1];
  return { status: response.status, error: error && unescape(error), description: description && unescape(description) };
}

import { randomBytes, createHash } from 'node:crypto';

import { compactDecrypt, createRemoteJWKSet, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify, type JWK } from 'jose';
import type Provider from 'oidc-provider';

import { issueInitialAccessToken, revokeInitialAccessToken } from '../registration/initial-access-tokens.js';
import { DemoFlowError } from '../errors.js';
import { basicAuthorization } from '../web/basic-auth.js';
import type { DemoResult } from '../pages/demo-pages.js';

/** The demo relying party's registration, its private decryption key and its request-object signing key. */
export interface DemoClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  privateKey: CryptoKey;
  /** Signs its request objects (PS256). */
  signingKey: CryptoKey;
  signingKid: string;
  /** The provider requires pushed authorization requests of it (`svc.par.required`). */
  requiresPar: boolean;
}

/** The OAuth error of a JSON answer (`error`, `error_description`), or the fallbacks. */
export function oauthError(body: Record<string, unknown>, error: string, description: string): DemoFlowError {
  const text = (value: unknown, fallback: string): string => (typeof value === 'string' ? value : fallback);
  return new DemoFlowError(text(body.error, error), text(body.error_description, description));
}

/** POSTs `fields` as a form with the client's `client_secret_basic` authentication. */
export const postForm = async (client: DemoClient, url: string, fields: Record<string, string>): Promise<Response> =>
  fetch(url, {
    method: 'POST',
    headers: { authorization: basicAuthorization(client.clientId, client.clientSecret, { formEncoded: true }), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });

/**
 * Seconds the demo's own initial access token lives: it is presented at once, and an anonymous POST of the
 * demo form issues one whenever the registration before it failed.
 */
export const DEMO_REGISTRATION_TOKEN_TTL = 60;

/**
 * Registers the demo client at the registration endpoint, with its own encryption and request-signing keys.
 * The initial access token it issues itself is destroyed when the registration fails, so a demo page that
 * cannot register leaves nothing behind in the store, however often it is asked to.
 */
export async function registerDemoClient(provider: Provider, issuer: string, redirectUri: string): Promise<DemoClient> {
  const { publicKey, privateKey } = await generateKeyPair('RSA-OAEP-256', { modulusLength: 2048 });
  const jwk = { ...(await exportJWK(publicKey)), use: 'enc', kid: 'demo-enc' };
  const signing = await generateKeyPair('PS256', { modulusLength: 2048 });
  const signingJwk = { ...(await exportJWK(signing.publicKey)), use: 'sig', kid: 'demo-sig' };
  const { token } = await issueInitialAccessToken(provider, { expiresIn: DEMO_REGISTRATION_TOKEN_TTL });
  const registered = await register(issuer, token, redirectUri, [jwk, signingJwk]).catch(async (err: unknown) => {
    await revokeInitialAccessToken(provider, token);
    throw err;
  });
  return { ...registered, privateKey, signingKey: signing.privateKey, signingKid: signingJwk.kid };
}

/** POSTs the demo client's metadata to `/register` with `token`; its id, secret and whether it must push its requests. */
async function register(issuer: string, token: string, redirectUri: string, keys: JWK[]): Promise<Pick<DemoClient, 'clientId' | 'clientSecret' | 'redirectUri' | 'requiresPar'>> {
  const response = await fetch(`${issuer}/register`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'svc-connect demo page',
      redirect_uris: [redirectUri],
      id_token_encrypted_response_alg: 'RSA-OAEP-256',
      id_token_encrypted_response_enc: 'A256GCM',
      userinfo_encrypted_response_alg: 'RSA-OAEP-256',
      userinfo_encrypted_response_enc: 'A256GCM',
      request_object_signing_alg: 'PS256',
      // Every request of the demo is signed: an authorization URL handed to someone else cannot be changed (its
      // response_mode, say, which would keep her code out of the query that ends the flow in her browser).
      require_signed_request_object: true,
      request_object_encryption_alg: 'RSA-OAEP-256',
      request_object_encryption_enc: 'A256GCM',
      jwks: { keys },
    }),
  }).catch(() => {
    throw new DemoFlowError('registration_failed', `the demo page could not reach ${issuer}/register: svc.base-url must be reachable from the server itself`);
  });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (response.status !== 201) throw oauthError(body, 'registration_failed', `HTTP ${response.status}`);
  return {
    clientId: body.client_id as string,
    clientSecret: body.client_secret as string,
    redirectUri,
    requiresPar: body.require_pushed_authorization_requests === true,
  };
}

/** A fresh PKCE pair, state and nonce for one demo flow. */
export function newFlowSecrets(): { verifier: string; challenge: string; state: string; nonce: string } {
  const verifier = randomBytes(32).toString('base64url');
  return {
    verifier,
    challenge: createHash('sha256').update(verifier).digest('base64url'),
    state: randomBytes(16).toString('base64url'),
    nonce: randomBytes(16).toString('base64url'),
  };
}

async function decryptAndVerify(jwe: string, client: DemoClient, issuer: string, jwks: ReturnType<typeof createRemoteJWKSet>) {
  const jweHeader = decodeProtectedHeader(jwe) as Record<string, unknown>;
  const { plaintext } = await compactDecrypt(jwe, client.privateKey);
  const jws = new TextDecoder().decode(plaintext);
  const { payload, protectedHeader } = await jwtVerify(jws, jwks, { issuer, audience: client.clientId });
  return { jweHeader, jwsHeader: protectedHeader as Record<string, unknown>, claims: payload };
}

/** Redeems the code, then decrypts and verifies the ID token and the UserInfo response. */
export async function completeDemoFlow(client: DemoClient, issuer: string, code: string, verifier: string, nonce: string): Promise<DemoResult> {
  const grant = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: client.redirectUri };
  const tokenHttp = await postForm(client, `${issuer}/token`, grant);
  const tokenResponse = (await tokenHttp.json()) as Record<string, unknown>;
  if (tokenHttp.status !== 200) throw oauthError(tokenResponse, 'token_error', '');
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
  const idToken = await decryptAndVerify(String(tokenResponse.id_token), client, issuer, jwks);
  if (idToken.claims.nonce !== nonce) throw new DemoFlowError('invalid_id_token', 'the ID token nonce does not match');
  const userinfoHttp = await fetch(`${issuer}/userinfo`, { headers: { authorization: `Bearer ${String(tokenResponse.access_token)}` } });
  const contentType = userinfoHttp.headers.get('content-type') ?? '';
  if (userinfoHttp.status !== 200) throw oauthError((await userinfoHttp.json()) as Record<string, unknown>, 'userinfo_error', '');
  const userinfo = contentType.includes('application/jwt')
    ? await decryptAndVerify(await userinfoHttp.text(), client, issuer, jwks).then((r) => ({ contentType, jweHeader: r.jweHeader, claims: r.claims }))
    : { contentType, claims: (await userinfoHttp.json()) as Record<string, unknown> };
  return { tokenResponse, idToken, userinfo };
}

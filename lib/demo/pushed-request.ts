import { randomBytes } from 'node:crypto';

import { CompactEncrypt, importJWK, SignJWT, type JWK } from 'jose';

import { oauthError, postForm, type DemoClient } from './relying-party.js';
import { DemoFlowError } from '../errors.js';
import type { DemoRequestMode } from '../pages/demo-pages.js';

const REQUEST_OBJECT_TTL = 60;

/** The provider's RSA encryption key for request objects, from its JWKS (`use: "enc"`). */
async function providerEncryptionKey(issuer: string): Promise<{ key: CryptoKey; kid?: string }> {
  const response = await fetch(`${issuer}/jwks`);
  const { keys } = (await response.json()) as { keys: JWK[] };
  const jwk = keys.find((k) => k.use === 'enc' && k.kty === 'RSA');
  if (!jwk) throw new DemoFlowError('request_object_encryption', 'the provider publishes no RSA encryption key (use "enc") in its JWKS: regenerate svc.keys.file with svc-connect keys generate');
  return { key: (await importJWK(jwk, 'RSA-OAEP-256')) as CryptoKey, kid: jwk.kid };
}

/** `params` as a request object (RFC 9101), signed PS256 with the demo's key, valid {@link REQUEST_OBJECT_TTL} seconds. */
async function signedRequestObject(client: DemoClient, issuer: string, params: Record<string, string>): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { ...params };
  if (typeof params.claims === 'string') claims.claims = JSON.parse(params.claims) as unknown;
  return new SignJWT({ ...claims, iss: client.clientId, aud: issuer, iat: now, nbf: now, exp: now + REQUEST_OBJECT_TTL, jti: randomBytes(16).toString('base64url') })
    .setProtectedHeader({ alg: 'PS256', kid: client.signingKid, typ: 'oauth-authz-req+jwt' })
    .sign(client.signingKey);
}

/** `params` as a signed request object encrypted to the provider, so only it reads the claims. */
async function encryptedRequestObject(client: DemoClient, issuer: string, params: Record<string, string>): Promise<string> {
  const jws = await signedRequestObject(client, issuer, params);
  const { key, kid } = await providerEncryptionKey(issuer);
  return new CompactEncrypt(new TextEncoder().encode(jws)).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', cty: 'JWT', ...(kid ? { kid } : {}) }).encrypt(key);
}

/** Pushes `fields` to `/par` (RFC 9126); returns the `request_uri`. */
async function pushAuthorizationRequest(client: DemoClient, issuer: string, fields: Record<string, string>): Promise<string> {
  const response = await postForm(client, `${issuer}/par`, fields);
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status !== 201 || typeof body.request_uri !== 'string') {
    throw oauthError(body, 'pushed_authorization_request_failed', `HTTP ${response.status}`);
  }
  return body.request_uri;
}

/**
 * The authorization URL: in query mode every parameter in it, as a signed request object (the demo client requires
 * one, so nobody holding the URL can change a parameter); else only `client_id` and the pushed `request_uri`.
 */
export async function authorizationRedirect(client: DemoClient, issuer: string, params: Record<string, string>, mode: DemoRequestMode): Promise<URL> {
  const url = new URL(`${issuer}/authorize`);
  url.searchParams.set('client_id', client.clientId);
  if (mode === 'query') {
    url.searchParams.set('request', await signedRequestObject(client, issuer, params));
    return url;
  }
  const request = mode === 'par-encrypted' ? await encryptedRequestObject(client, issuer, params) : await signedRequestObject(client, issuer, params);
  url.searchParams.set('request_uri', await pushAuthorizationRequest(client, issuer, { client_id: client.clientId, request }));
  return url;
}

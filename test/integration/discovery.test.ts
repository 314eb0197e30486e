import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { startApp, type RunningApp } from '../helpers/app.js';

const ENC_ALGS = ['RSA-OAEP', 'RSA-OAEP-256', 'ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW'];
const ENC_ENCS = ['A128CBC-HS256', 'A192CBC-HS384', 'A256CBC-HS512', 'A128GCM', 'A256GCM'];

describe('discovery (C2, C3, C6)', () => {
  let running: RunningApp;
  let doc: Record<string, unknown>;

  beforeAll(async () => {
    running = await startApp();
    const response = await fetch(`${running.issuer}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    doc = (await response.json()) as Record<string, unknown>;
  });
  afterAll(async () => running.close());

  it('names the issuer {base_url}/oidc/v1 exactly', () => {
    expect(doc.issuer).toBe(`${running.baseUrl}/oidc/v1`);
  });

  it('serves every endpoint at its C2 path', () => {
    const base = running.issuer;
    expect(doc.authorization_endpoint).toBe(`${base}/authorize`);
    expect(doc.token_endpoint).toBe(`${base}/token`);
    expect(doc.userinfo_endpoint).toBe(`${base}/userinfo`);
    expect(doc.end_session_endpoint).toBe(`${base}/logout`);
    expect(doc.registration_endpoint).toBe(`${base}/register`);
    expect(doc.jwks_uri).toBe(`${base}/jwks`);
  });

  it('offers the code flow with S256 PKCE only and no refresh tokens or implicit grant', () => {
    expect(doc.response_types_supported).toEqual(['code']);
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect(doc.grant_types_supported).toEqual(['authorization_code']);
  });

  it('advertises exactly the C6 encryption lists for ID token and UserInfo', () => {
    expect(doc.id_token_encryption_alg_values_supported).toEqual(ENC_ALGS);
    expect(doc.id_token_encryption_enc_values_supported).toEqual(ENC_ENCS);
    expect(doc.userinfo_encryption_alg_values_supported).toEqual(ENC_ALGS);
    expect(doc.userinfo_encryption_enc_values_supported).toEqual(ENC_ENCS);
  });

  it('signs with RS256, PS256 and ES256 only', () => {
    expect([...(doc.id_token_signing_alg_values_supported as string[])].sort()).toEqual(['ES256', 'PS256', 'RS256']);
    expect([...(doc.userinfo_signing_alg_values_supported as string[])].sort()).toEqual(['ES256', 'PS256', 'RS256']);
  });

  it('supports the claims parameter and not request_uri', () => {
    expect(doc.claims_parameter_supported).toBe(true);
    expect(doc.request_uri_parameter_supported).toBe(false);
  });

  it('offers the C3 client authentication methods', () => {
    expect(doc.token_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none']);
  });

  it('does not offer offline_access, address or phone', () => {
    const scopes = doc.scopes_supported as string[];
    expect(scopes).toContain('openid');
    for (const s of ['offline_access', 'address', 'phone']) expect(scopes).not.toContain(s);
  });

  it('does not advertise acr values', () => {
    expect(doc.acr_values_supported).toBeUndefined();
  });

  it('publishes public signing keys only, each with a unique kid', async () => {
    const response = await fetch(`${running.issuer}/jwks`);
    const { keys } = (await response.json()) as { keys: Record<string, unknown>[] };
    expect(keys.map((k) => k.kty).sort()).toEqual(['EC', 'RSA']);
    expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);
    for (const key of keys) {
      expect(typeof key.kid).toBe('string');
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(key).not.toHaveProperty(member);
    }
  });
});

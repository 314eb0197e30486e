import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import type { ClaimModule } from '../../lib/index.js';
import { generateSigningKeys } from '../../lib/provider/keys.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { capturingLogger } from '../helpers/logs.js';

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

  it('offers no token revocation or introspection (RFC 7009, RFC 7662), device or CIBA endpoint: none is advertised, and each path is 404', async () => {
    for (const member of ['revocation_endpoint', 'introspection_endpoint', 'device_authorization_endpoint', 'backchannel_authentication_endpoint']) expect(doc[member]).toBeUndefined();
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    for (const path of ['/token/revocation', '/token/introspection', '/device/auth', '/backchannel']) {
      expect([path, (await fetch(`${running.issuer}${path}`, { method: 'POST', headers: form, body: 'token=x&client_id=x' })).status]).toEqual([path, 404]);
    }
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

  it('offers request objects by value: signed RS256, PS256 or ES256 (never none or HMAC), encrypted with the C6 lists, not required', () => {
    expect(doc.request_parameter_supported).toBe(true);
    expect(doc.request_object_signing_alg_values_supported).toEqual(['RS256', 'PS256', 'ES256']);
    expect(doc.request_object_encryption_alg_values_supported).toEqual(ENC_ALGS);
    expect(doc.request_object_encryption_enc_values_supported).toEqual(ENC_ENCS);
    expect(doc).not.toHaveProperty('require_signed_request_object');
  });

  it('offers pushed authorization requests at /par, not required by default (RFC 9126)', () => {
    expect(doc.pushed_authorization_request_endpoint).toBe(`${running.issuer}/par`);
    expect(doc).not.toHaveProperty('require_pushed_authorization_requests');
  });

  it('lists every request-object and PAR member exactly, and no other request-related one', () => {
    const members = Object.keys(doc).filter((k) => /request/.test(k)).sort();
    expect(members).toEqual([
      'pushed_authorization_request_endpoint',
      'request_object_encryption_alg_values_supported',
      'request_object_encryption_enc_values_supported',
      'request_object_signing_alg_values_supported',
      'request_parameter_supported',
      'request_uri_parameter_supported',
    ]);
  });

  it('signs private_key_jwt assertions with RS256, PS256 or ES256 only', () => {
    expect(doc.token_endpoint_auth_signing_alg_values_supported).toEqual(['RS256', 'PS256', 'ES256']);
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

  it('publishes public keys only: signing keys (use sig) and request-object encryption keys (use enc), each with a unique kid', async () => {
    const response = await fetch(`${running.issuer}/jwks`);
    const { keys } = (await response.json()) as { keys: Record<string, unknown>[] };
    expect(keys.map((k) => `${String(k.use)}:${String(k.kty)}`).sort()).toEqual(['enc:EC', 'enc:RSA', 'sig:EC', 'sig:RSA']);
    expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);
    for (const key of keys) {
      expect(typeof key.kid).toBe('string');
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) expect(key).not.toHaveProperty(member);
    }
  });
});

describe('discovery tells what the claim modules provide (C5, issue 15)', () => {
  const discover = async (running: RunningApp): Promise<{ scopes: string[]; claims: string[] }> => {
    const doc = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as { scopes_supported: string[]; claims_supported: string[] };
    return { scopes: doc.scopes_supported, claims: doc.claims_supported };
  };

  it('offers openid alone, and protocol claims only, without claim modules', async () => {
    const running = await startApp({ claimModules: [] });
    try {
      const { scopes, claims } = await discover(running);
      expect(scopes).toEqual(['openid']);
      expect([...claims].sort()).toEqual(['auth_time', 'iss', 'scope', 'sid', 'sub']);
    } finally {
      await running.close();
    }
  });

  it('offers every scope of the map, and every claim the example modules provide, with them installed', async () => {
    const running = await startApp({ claimModules: createDemoClaimModules() });
    try {
      const { scopes, claims } = await discover(running);
      expect([...scopes].sort()).toEqual(['email', 'openid', 'profile', 'svc.insurance', 'svc.insurance.verified']);
      for (const claim of ['name', 'given_name', 'family_name', 'birthdate', 'email', 'email_verified', 'demo.ver.healthinsurance.l0.api.demo', 'svc.ver.idcard.l3.nfc']) {
        expect(claims).toContain(claim);
      }
    } finally {
      await running.close();
    }
  });

  it('leaves out a scope whose claims a module provides only in part, lists the claims provided, and says so at start', async () => {
    const { logger, lines } = capturingLogger();
    const partial: ClaimModule = { name: 'names-and-mail', provides: ['name', 'email', 'email_verified'], resolve: () => ({}) };
    const running = await startApp({ claimModules: [partial], logger });
    try {
      const { scopes, claims } = await discover(running);
      expect(scopes).toEqual(['openid', 'email']);
      expect([...claims].sort()).toEqual(['auth_time', 'email', 'email_verified', 'iss', 'name', 'scope', 'sid', 'sub']);
      const warnings = lines.map((l) => JSON.parse(l) as Record<string, string>).filter((l) => l.e === 'scope_not_offered');
      expect(warnings.map((w) => [w.scope, w.missing])).toEqual([
        ['profile', 'given_name family_name birthdate'],
        ['svc.insurance', 'demo.ver.healthinsurance.l0.api.demo birthdate'],
      ]);
    } finally {
      await running.close();
    }
  });
});

describe('discovery with signing keys only (no enc keys in svc.keys.file)', () => {
  const running = appPerSuite(async () => ({ jwks: await generateSigningKeys() }));

  it('offers signed request objects and no encryption for them: it advertises only what works', async () => {
    const doc = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.request_parameter_supported).toBe(true);
    expect(doc.request_object_signing_alg_values_supported).toEqual(['RS256', 'PS256', 'ES256']);
    expect(doc.request_object_encryption_alg_values_supported).toEqual([]);
    const { keys } = (await (await fetch(`${running.issuer}/jwks`)).json()) as { keys: Record<string, unknown>[] };
    expect(keys.map((k) => k.use)).toEqual(['sig', 'sig']);
  });
});

describe('discovery with svc.par.required', () => {
  const running = appPerSuite({ properties: { 'svc.par.required': true } });

  it('says require_pushed_authorization_requests: true', async () => {
    const doc = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.require_pushed_authorization_requests).toBe(true);
    expect(doc.pushed_authorization_request_endpoint).toBe(`${running.issuer}/par`);
  });
});

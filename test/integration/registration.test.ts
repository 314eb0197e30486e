import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';

import { issueInitialAccessToken } from '../../lib/index.js';
import { hashClientSecret } from '../../lib/registration/client-secrets.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, pkcePair } from '../helpers/flow.js';
import {
  encryptionKey,
  makeCertificateChain,
  manage,
  register,
  startDocServer,
  type CertificateChain,
  type DocServer,
} from '../helpers/registration.js';

const REDIRECT = 'https://rp.example/cb';

describe('client registration (C6)', () => {
  let running: RunningApp;
  let docs: DocServer;
  let chain: CertificateChain;
  const iat = async (expiresIn?: number): Promise<string> => (await issueInitialAccessToken(running.app.svc.provider, { expiresIn })).token;

  beforeAll(async () => {
    running = await startApp({ properties: { 'svc.fetch.allow-private-network': true } });
    docs = await startDocServer();
    chain = makeCertificateChain();
  });
  afterAll(async () => {
    await docs.close();
    await running.close();
  });

  describe('accepted registrations', () => {
    it('registers a minimal {redirect_uris} client with the C6 response', async () => {
      const before = Math.floor(Date.now() / 1000);
      const res = await register(running, { redirect_uris: [REDIRECT] }, await iat());
      const after = Math.floor(Date.now() / 1000);
      expect(res.status).toBe(201);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = res.body;
      expect(body.client_id).toMatch(/^[\w-]{20,}$/);
      expect(body.client_secret).toEqual(expect.any(String));
      expect(body.registration_access_token).toEqual(expect.any(String));
      expect(body.registration_client_uri).toBe(`${running.issuer}/register/${body.client_id as string}`);
      expect(body.client_id_issued_at).toBeGreaterThanOrEqual(before);
      expect(body.client_id_issued_at).toBeLessThanOrEqual(after);
      expect(body.allow_unencrypted_userinfo).toBe(false);
      expect(body.redirect_uris).toEqual([REDIRECT]);
    });

    it('accepts RSA-OAEP-256 with an RSA key and defaults the UserInfo signing alg to RS256', async () => {
      const key = await encryptionKey('RSA-OAEP-256');
      const res = await register(
        running,
        { redirect_uris: [REDIRECT], userinfo_encrypted_response_alg: 'RSA-OAEP-256', id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [key.jwk] } },
        await iat(),
      );
      expect(res.status).toBe(201);
      expect(res.body.userinfo_signed_response_alg).toBe('RS256');
      expect(res.body.userinfo_encrypted_response_enc).toBe('A128CBC-HS256');
    });

    it('accepts ECDH-ES+A256KW with a P-256 key', async () => {
      const key = await encryptionKey('ECDH-ES+A256KW');
      const res = await register(
        running,
        { redirect_uris: [REDIRECT], id_token_encrypted_response_alg: 'ECDH-ES+A256KW', id_token_encrypted_response_enc: 'A256GCM', jwks: { keys: [key.jwk] } },
        await iat(),
      );
      expect(res.status).toBe(201);
      expect(res.body.id_token_encrypted_response_alg).toBe('ECDH-ES+A256KW');
    });

    it('accepts a jwks_uri it fetched and vetted', async () => {
      const key = await encryptionKey('RSA-OAEP-256');
      let fetched = 0;
      docs.handler = (_req, res) => {
        fetched += 1;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ keys: [key.jwk] }));
      };
      const res = await register(
        running,
        { redirect_uris: [REDIRECT], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: `${docs.url}/jwks` },
        await iat(),
      );
      expect(res.status).toBe(201);
      expect(fetched).toBe(1);
      expect(res.body.jwks_uri).toBe(`${docs.url}/jwks`);
    });

    it('accepts a key with a valid x5c chain and matching thumbprints', async () => {
      const { createHash, X509Certificate } = await import('node:crypto');
      const leaf = new X509Certificate(chain.leafPem);
      const jwk = {
        ...chain.jwk,
        x5c: chain.x5c,
        x5t: createHash('sha1').update(leaf.raw).digest('base64url'),
        'x5t#S256': createHash('sha256').update(leaf.raw).digest('base64url'),
      };
      const res = await register(running, { redirect_uris: [REDIRECT], userinfo_encrypted_response_alg: 'RSA-OAEP', jwks: { keys: [jwk] } }, await iat());
      expect(res.status).toBe(201);
    });

    it('accepts a key whose x5u chain it fetched and validated', async () => {
      docs.handler = (_req, res) => {
        res.setHeader('content-type', 'application/pem-certificate-chain');
        res.end(`${chain.leafPem}${chain.caPem}`);
      };
      const jwk = { ...chain.jwk, x5u: `${docs.url}/chain.pem` };
      const res = await register(running, { redirect_uris: [REDIRECT], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [jwk] } }, await iat());
      expect(res.status).toBe(201);
    });

    it('accepts a native app with an http://127.0.0.1 redirect', async () => {
      const res = await register(
        running,
        { application_type: 'native', redirect_uris: ['http://127.0.0.1:8765/cb'], token_endpoint_auth_method: 'none' },
        await iat(),
      );
      expect(res.status).toBe(201);
      expect(res.body.client_secret).toBeUndefined();
    });

    it('lets a native app use any port on its loopback redirect (RFC 8252 7.3), and a web client only the port it registered', async () => {
      const authorize = async (clientId: string, redirectUri: string): Promise<{ status: number; location: string | null; html: string }> => {
        const url = authorizationUrl(running.issuer, { client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
        const response = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html' } });
        return { status: response.status, location: response.headers.get('location'), html: await response.text() };
      };
      const registered = ['http://127.0.0.1/cb', 'http://[::1]/cb', 'http://localhost/cb'];
      const native = await register(running, { application_type: 'native', redirect_uris: registered, token_endpoint_auth_method: 'none' }, await iat());
      expect(native.status).toBe(201);
      for (const presented of ['http://127.0.0.1:53123/cb', 'http://[::1]:8765/cb', 'http://localhost:1234/cb', 'http://127.0.0.1/cb']) {
        const answer = await authorize(native.body.client_id as string, presented);
        expect([presented, answer.status, answer.location]).toEqual([presented, 303, expect.stringMatching(/^\/oidc\/v1\/interaction\//)]);
      }
      for (const presented of ['http://127.0.0.1:53123/other', 'http://127.0.0.2:53123/cb', 'https://127.0.0.1:53123/cb']) {
        const answer = await authorize(native.body.client_id as string, presented);
        expect([presented, answer.status, answer.location, answer.html.includes('invalid_redirect_uri')]).toEqual([presented, 400, null, true]);
      }
      const web = await register(running, { redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' }, await iat());
      expect(web.status).toBe(201);
      const other = await authorize(web.body.client_id as string, 'http://127.0.0.1:53123/cb');
      expect([other.status, other.location, other.html.includes('invalid_redirect_uri')]).toEqual([400, null, true]);
    });

    it('keeps redirect URIs as written when every parser reads them alike: no path, an @ in path or query, IPv6, a private-use scheme, a non-ASCII host and path', async () => {
      const web = ['https://rp.example', 'https://rp.example/@team/cb?next=a@b', 'https://[2001:db8::1]/cb', 'https://bücher.example/cb', 'https://rp.example/café/\u{1F600}'];
      const res = await register(running, { redirect_uris: web, post_logout_redirect_uris: ['https://rp.example/bye?who=a@b'], subject_type: 'public' }, await iat());
      expect(res.status).toBe(201);
      expect({ redirect: res.body.redirect_uris, logout: res.body.post_logout_redirect_uris }).toEqual({ redirect: web, logout: ['https://rp.example/bye?who=a@b'] });
      const native = await register(running, { application_type: 'native', redirect_uris: ['com.example.app:/cb', 'http://[::1]:8765/cb'], token_endpoint_auth_method: 'none' }, await iat());
      expect(native.status).toBe(201);
    });

    it('drops keys with neither use nor key_ops from the stored JWKS', async () => {
      const enc = await encryptionKey('RSA-OAEP-256');
      const sig = await encryptionKey('RSA-OAEP-256', { use: 'sig', kid: 'sig-1' });
      const bare = { kty: enc.jwk.kty, n: (await encryptionKey('RSA-OAEP')).jwk.n, e: 'AQAB', kid: 'bare' };
      const res = await register(
        running,
        { redirect_uris: [REDIRECT], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [enc.jwk, sig.jwk, bare] } },
        await iat(),
      );
      expect(res.status).toBe(201);
      const kids = ((res.body.jwks as { keys: { kid: string }[] }).keys ?? []).map((k) => k.kid);
      expect(kids).toEqual(['enc-RSA-OAEP-256', 'sig-1']);
    });

    it('accepts default_acr_values at registration and update and stores none (acr is never issued, acr_values are ignored: C3)', async () => {
      const res = await register(running, { redirect_uris: [REDIRECT], default_acr_values: ['urn:mace:incommon:iap:silver'] }, await iat());
      expect([res.status, res.body.error_description]).toEqual([201, undefined]);
      expect(res.body).not.toHaveProperty('default_acr_values');
      const stored = await running.app.svc.store.adapter('Client').find(res.body.client_id as string);
      expect(stored).toBeDefined();
      expect(stored).not.toHaveProperty('default_acr_values');
      const read = await manage(res.body.registration_client_uri as string, 'GET', res.body.registration_access_token as string);
      const updated = await manage(res.body.registration_client_uri as string, 'PUT', read.body.registration_access_token as string, {
        client_id: res.body.client_id,
        redirect_uris: [REDIRECT],
        default_acr_values: ['urn:mace:incommon:iap:bronze'],
      });
      expect([updated.status, updated.body.error_description]).toEqual([200, undefined]);
      expect(updated.body).not.toHaveProperty('default_acr_values');
    });

    it('stores a scope naming address, phone or offline_access without them, at registration and update, and serves her authorization requests naming them (C5)', async () => {
      const res = await register(running, { redirect_uris: [REDIRECT], scope: 'openid offline_access address phone' }, await iat());
      expect([res.status, res.body.error_description, res.body.scope]).toEqual([201, undefined, 'openid']);
      expect(await running.app.svc.store.adapter('Client').find(res.body.client_id as string)).toMatchObject({ scope: 'openid' });
      const authorize = (scope: string): Promise<Response> =>
        fetch(`${running.issuer}/authorize?${new URLSearchParams({ client_id: res.body.client_id as string, redirect_uri: REDIRECT, response_type: 'code', scope, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGjSwc9UBw', code_challenge_method: 'S256' })}`, { redirect: 'manual' });
      const served = await authorize('openid offline_access address');
      expect([served.status, served.headers.get('location')]).toEqual([303, expect.stringMatching(/\/interaction\//)]);
      const read = await manage(res.body.registration_client_uri as string, 'GET', res.body.registration_access_token as string);
      const updated = await manage(res.body.registration_client_uri as string, 'PUT', read.body.registration_access_token as string, {
        client_id: res.body.client_id,
        redirect_uris: [REDIRECT],
        scope: 'offline_access openid',
      });
      expect([updated.status, updated.body.error_description, updated.body.scope]).toEqual([200, undefined, 'openid']);
    });

    it('stores allow_unencrypted_userinfo: true', async () => {
      const res = await register(running, { redirect_uris: [REDIRECT], allow_unencrypted_userinfo: true }, await iat());
      expect(res.status).toBe(201);
      expect(res.body.allow_unencrypted_userinfo).toBe(true);
    });
  });

  describe('initial access tokens', () => {
    it('works once: a second registration with it → 401 invalid_token', async () => {
      const token = await iat();
      expect((await register(running, { redirect_uris: [REDIRECT] }, token)).status).toBe(201);
      const again = await register(running, { redirect_uris: [REDIRECT] }, token);
      expect(again.status).toBe(401);
      expect(again.body.error).toBe('invalid_token');
      expect(again.headers.get('www-authenticate')).toContain('error="invalid_token"');
    });

    it('expires: after its TTL → 401 invalid_token', async () => {
      const token = await iat(1);
      // The store expires it at its TTL (oidc-provider itself would accept it up to 15 s late, its
      // clock tolerance): wait for that event by polling the store, not for a fixed time.
      const stored = running.app.svc.store.adapter('InitialAccessToken');
      expect(await stored.find(token)).toBeDefined();
      while (await stored.find(token)) await new Promise((resolve) => setTimeout(resolve, 50));
      const res = await register(running, { redirect_uris: [REDIRECT] }, token);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_token');
    });

    it('is valid for two days by default', async () => {
      const before = Math.floor(Date.now() / 1000);
      const { expiresAt } = await issueInitialAccessToken(running.app.svc.provider);
      const after = Math.floor(Date.now() / 1000);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 172_800);
      expect(expiresAt).toBeLessThanOrEqual(after + 172_800);
    });

    it('tells the expiry the store holds, also when the save crosses a second', async () => {
      // The clock jumps 1.5 s after the first reading: a save on a busy machine.
      const real = Date.now.bind(Date);
      let readings = 0;
      const spy = jest.spyOn(Date, 'now').mockImplementation(() => real() + (readings++ > 0 ? 1500 : 0));
      let issued: Awaited<ReturnType<typeof issueInitialAccessToken>>;
      try {
        issued = await issueInitialAccessToken(running.app.svc.provider);
      } finally {
        spy.mockRestore();
      }
      const stored = await running.app.svc.store.adapter('InitialAccessToken').find(issued.token);
      expect(stored?.exp).toBe(issued.expiresAt);
    });

    it('rejects unknown and missing tokens with 401 invalid_token', async () => {
      expect((await register(running, { redirect_uris: [REDIRECT] }, 'no-such-token')).body.error).toBe('invalid_token');
      const missing = await register(running, { redirect_uris: [REDIRECT] });
      expect(missing.status).toBe(401);
      expect(missing.body.error).toBe('invalid_token');
    });

    it('survives a rejected registration and still works afterwards', async () => {
      const token = await iat();
      const bad = await register(running, { redirect_uris: [REDIRECT], userinfo_encrypted_response_alg: 'A128KW' }, token);
      expect(bad.status).toBe(400);
      expect((await register(running, { redirect_uris: [REDIRECT] }, token)).status).toBe(201);
    });

    it('lets exactly one of 50 concurrent registrations with one token succeed', async () => {
      const token = await iat();
      const results = await Promise.all(Array.from({ length: 50 }, () => register(running, { redirect_uris: [REDIRECT] }, token)));
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      const losers = results.filter((r) => r.status !== 201);
      expect(losers).toHaveLength(49);
      for (const r of losers) expect([r.status, r.body.error]).toEqual([401, 'invalid_token']);
    });
  });

  describe('registration access tokens', () => {
    const fresh = async (): Promise<{ uri: string; token: string; clientId: string }> => {
      const res = await register(running, { redirect_uris: [REDIRECT], client_name: 'first' }, await iat());
      return { uri: res.body.registration_client_uri as string, token: res.body.registration_access_token as string, clientId: res.body.client_id as string };
    };

    it('GET returns the stored metadata and a new token; the old one is dead', async () => {
      const c = await fresh();
      const got = await manage(c.uri, 'GET', c.token);
      expect(got.status).toBe(200);
      expect(got.body.client_name).toBe('first');
      expect(got.body.client_id).toBe(c.clientId);
      expect(got.body.registration_access_token).not.toBe(c.token);
      expect((await manage(c.uri, 'GET', c.token)).status).toBe(401);
      expect((await manage(c.uri, 'GET', got.body.registration_access_token as string)).status).toBe(200);
    });

    it('POST replaces the metadata and rotates the token', async () => {
      const c = await fresh();
      const posted = await manage(c.uri, 'POST', c.token, { redirect_uris: ['https://rp.example/other'], client_name: 'second' });
      expect(posted.status).toBe(200);
      expect(posted.body.client_name).toBe('second');
      expect(posted.body.redirect_uris).toEqual(['https://rp.example/other']);
      expect(posted.body.registration_access_token).not.toBe(c.token);
      expect((await manage(c.uri, 'GET', c.token)).body.error).toBe('invalid_token');
      const read = await manage(c.uri, 'GET', posted.body.registration_access_token as string);
      expect(read.body.client_name).toBe('second');
    });

    it('PUT replaces the metadata and rotates the token', async () => {
      const c = await fresh();
      const put = await manage(c.uri, 'PUT', c.token, { client_id: c.clientId, redirect_uris: [REDIRECT], client_name: 'third' });
      expect(put.status).toBe(200);
      expect(put.body.client_name).toBe('third');
      expect((await manage(c.uri, 'PUT', c.token, { client_id: c.clientId, redirect_uris: [REDIRECT] })).status).toBe(401);
    });

    it('honest: a PUT, then a POST, of exactly what GET answered updates nothing and rotates the token; the members the provider keeps are its own', async () => {
      const key = await encryptionKey('RSA-OAEP-256', { use: undefined, key_ops: ['encrypt'] });
      const registered = await register(running, { redirect_uris: [REDIRECT], client_name: 'echo', id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [key.jwk] } }, await iat());
      const uri = registered.body.registration_client_uri as string;
      const read = await manage(uri, 'GET', registered.body.registration_access_token as string);
      const put = await manage(uri, 'PUT', read.body.registration_access_token as string, read.body);
      expect([put.status, put.body.error_description]).toEqual([200, undefined]);
      const { registration_access_token: readToken, ...readRest } = read.body;
      const { registration_access_token: putToken, ...putRest } = put.body;
      expect(putRest).toEqual(readRest);
      expect(putToken).not.toBe(readToken);
      const again = await manage(uri, 'GET', putToken as string);
      const posted = await manage(uri, 'POST', again.body.registration_access_token as string, again.body);
      expect([posted.status, posted.body.error_description]).toEqual([200, undefined]);
      const changed = { ...posted.body, client_id_issued_at: 1, client_secret_expires_at: 1, registration_client_uri: 'https://rp.example/elsewhere', registration_access_token: 'chosen' };
      const kept = await manage(uri, 'PUT', posted.body.registration_access_token as string, changed);
      expect([kept.status, kept.body.client_id_issued_at, kept.body.client_secret_expires_at, kept.body.registration_client_uri]).toEqual([200, read.body.client_id_issued_at, 0, uri]);
      expect(kept.body.registration_access_token).not.toBe('chosen');
      expect((await manage(uri, 'GET', 'chosen')).status).toBe(401);
    });

    it('drops the secret of a client that updates to a method without one, and issues a new one when it returns (RFC 7592 2.2)', async () => {
      const registered = await register(running, { redirect_uris: [REDIRECT] }, await iat());
      const clientId = registered.body.client_id as string;
      const uri = registered.body.registration_client_uri as string;
      const stored = async (): Promise<unknown> => (await running.app.svc.store.adapter('Client').find(clientId))?.client_secret;
      const kept = await manage(uri, 'PUT', registered.body.registration_access_token as string, { client_id: clientId, redirect_uris: [REDIRECT], client_name: 'renamed' });
      expect([kept.body.client_secret, kept.body.client_secret_expires_at]).toEqual([undefined, 0]);
      expect(await stored()).toBe(hashClientSecret(registered.body.client_secret as string));
      const publicClient = await manage(uri, 'PUT', kept.body.registration_access_token as string, { client_id: clientId, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' });
      expect(publicClient.status).toBe(200);
      expect(Object.keys(publicClient.body).filter((name) => name.startsWith('client_secret'))).toEqual([]);
      expect(await stored()).toBeUndefined();
      const back = await manage(uri, 'PUT', publicClient.body.registration_access_token as string, { client_id: clientId, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' });
      expect(back.status).toBe(200);
      expect(back.body.client_secret).toEqual(expect.any(String));
      expect(back.body.client_secret).not.toBe(registered.body.client_secret);
      expect(await stored()).toBe(hashClientSecret(back.body.client_secret as string));
    });

    it('keeps the token valid when an update is rejected', async () => {
      const c = await fresh();
      const bad = await manage(c.uri, 'POST', c.token, { redirect_uris: [REDIRECT], id_token_encrypted_response_alg: 'dir' });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('invalid_client_metadata');
      expect((await manage(c.uri, 'GET', c.token)).status).toBe(200);
    });

    it('refuses an update (PUT, POST) to an empty grant_types or a response_types without code, and keeps the client usable', async () => {
      const c = await fresh();
      const answers = [];
      for (const [method, change] of [['PUT', { grant_types: [] }], ['PUT', { response_types: [] }], ['POST', { response_types: ['none'] }]] as const) {
        const bad = await manage(c.uri, method, c.token, { client_id: c.clientId, redirect_uris: [REDIRECT], ...change });
        answers.push([bad.status, bad.body.error]);
      }
      expect(answers).toEqual(Array.from({ length: 3 }, () => [400, 'invalid_client_metadata']));
      const read = await manage(c.uri, 'GET', c.token);
      expect([read.body.grant_types, read.body.response_types]).toEqual([['authorization_code'], ['code']]);
    });

    it('refuses an update that adds a redirect URI with user information, and keeps the registered ones', async () => {
      const c = await fresh();
      const bad = await manage(c.uri, 'PUT', c.token, { client_id: c.clientId, redirect_uris: [REDIRECT, 'https://rp.example\\@evil.example/cb'] });
      expect({ status: bad.status, error: bad.body.error }).toEqual({ status: 400, error: 'invalid_redirect_uri' });
      const read = await manage(c.uri, 'GET', c.token);
      expect(read.body.redirect_uris).toEqual([REDIRECT]);
    });

    it('lets exactly one of 20 concurrent GETs with one token succeed, leaving one live token', async () => {
      const c = await fresh();
      const results = await Promise.all(Array.from({ length: 20 }, () => manage(c.uri, 'GET', c.token)));
      const winners = results.filter((r) => r.status === 200);
      expect(winners).toHaveLength(1);
      for (const r of results.filter((x) => x.status !== 200)) expect([r.status, r.body.error]).toEqual([401, 'invalid_token']);
      expect((await manage(c.uri, 'GET', c.token)).status).toBe(401);
      expect((await manage(c.uri, 'GET', winners[0]?.body.registration_access_token as string)).status).toBe(200);
    });

    it('DELETE removes the client (204) and its token', async () => {
      const c = await fresh();
      const del = await fetch(c.uri, { method: 'DELETE', headers: { authorization: `Bearer ${c.token}` } });
      expect(del.status).toBe(204);
      expect((await manage(c.uri, 'GET', c.token)).status).toBe(401);
      expect(await running.app.svc.store.adapter('Client').find(c.clientId)).toBeUndefined();
    });

    it('rejects a token of another client with 401', async () => {
      const a = await fresh();
      const b = await fresh();
      expect((await manage(a.uri, 'GET', b.token)).status).toBe(401);
    });
  });
});

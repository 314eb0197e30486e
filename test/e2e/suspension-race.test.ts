import { createHash } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt, SignJWT, type JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { PUSHED_REQUEST_USE_MODEL } from '../../lib/provider/pushed-requests.js';
import { basicAuthorization } from '../../lib/web/basic-auth.js';
import { pairwiseSubOf, startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, pkcePair, redeemCode, signIn } from '../helpers/flow.js';
import { managementCalls } from '../helpers/management-calls.js';
import { encryptionKey, manage, register, startKeySetServer, type KeySetServer } from '../helpers/registration.js';
import { outcomeOf, signingKey } from '../helpers/request-objects.js';

const REDIRECT = 'https://rp.example/cb';
const ALG = 'RSA-OAEP-256';
const USER = 'probe-admin';
const PASSWORD = 'probe-admin-password-0123456789';
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

/**
 * Requests of a client in flight while the operator disables it, deletes it or revokes its invitation.
 * C2: "disabling a client is reversible: while
 * disabled, its requests are refused without consuming, rotating or destroying any of its tokens (registration
 * read/update/delete → 403, token and PAR → invalid_client)". A request that loaded the client just before the
 * operator disabled it is made to wait at a point the test controls (its outbound fetch of the client's
 * `jwks_uri`, answered only once the disable has been answered), then let go. No sleeps: the key server holds the
 * fetch until the test releases it.
 */
describe('requests in flight when the operator disables or deletes the client, or revokes its invitation (C2, C6, C7)', () => {
  let running: RunningApp;
  let docs: KeySetServer;
  let path = 0;
  const call = () => managementCalls(running, AUTH);

  beforeAll(async () => {
    docs = await startKeySetServer();
    running = await startApp({
      properties: { 'svc.fetch.allow-private-network': true, 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true },
      claimModules: createDemoClaimModules(),
    });
  });
  afterAll(async () => {
    await running.close();
    await docs.close();
  });

  /** The models of the token records the store holds for `clientId`. */
  async function storedTokensOf(clientId: string): Promise<string[]> {
    const inventory = running.app.svc.store.inventory;
    if (!inventory) throw new Error('the store has no inventory');
    const models: string[] = [];
    for (const model of ['AccessToken', 'RefreshToken', 'ClientCredentials']) {
      let cursor: string | undefined;
      do {
        const page = await inventory.list(model, { limit: 500, ...(cursor ? { cursor } : {}) });
        models.push(...page.records.filter((r) => r.payload.clientId === clientId).map(() => model));
        cursor = page.cursor;
      } while (cursor);
    }
    return models;
  }

  /** How many live records of `model` the store holds (those of `pushedBy` alone, when given). */
  async function countOf(model: string, pushedBy?: string): Promise<number> {
    const inventory = running.app.svc.store.inventory;
    if (!inventory) throw new Error('the store has no inventory');
    let [count, cursor]: [number, string | undefined] = [0, undefined];
    do {
      const page = await inventory.list(model, { limit: 500, ...(cursor ? { cursor } : {}) });
      count += page.records.filter((r) => pushedBy === undefined || (typeof r.payload.request === 'string' && decodeJwt(r.payload.request).iss === pushedBy)).length;
      cursor = page.cursor;
    } while (cursor);
    return count;
  }

  async function registerAt(keys: JWK[], extra: Partial<ClientMetadata> = {}): Promise<{ client: ClientMetadata; where: string }> {
    path += 1;
    const where = `/race-${path}/jwks`;
    docs.sets.set(where, keys);
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: [REDIRECT], jwks_uri: `${docs.url}${where}`, id_token_encrypted_response_alg: ALG, userinfo_encrypted_response_alg: ALG, ...extra }, token);
    expect(res.status).toBe(201);
    return { client: res.body as unknown as ClientMetadata, where };
  }

  /** A client signed in to, whose token request waits at its jwks_uri (its ID token is encrypted to a key there). */
  async function redeemingHeld(): Promise<{ client: ClientMetadata; gate: { release: () => void }; redeeming: ReturnType<typeof redeemCode>; browser: FormBrowser }> {
    const key = await encryptionKey(ALG, { kid: 'rp-enc' });
    const { client, where } = await registerAt([key.jwk]);
    const { verifier, challenge } = pkcePair();
    const { callbackUrl, browser } = await signIn(codeFlowUrl(running.issuer, client, { code_challenge: challenge, scope: 'openid email' }));
    const gate = docs.hold(where);
    const redeeming = redeemCode(running.issuer, client, callbackUrl.searchParams.get('code') as string, verifier);
    await gate.arrived;
    return { client, gate, redeeming, browser };
  }

  it('an RFC 7592 update in flight when the client is disabled is refused (403) and changes nothing (C2)', async () => {
    const key = await encryptionKey(ALG, { kid: 'rp-enc' });
    const { client, where } = await registerAt([key.jwk]);
    const { registration_access_token: rat, registration_client_uri: uri, client_secret_expires_at: _e, client_id_issued_at: _i, ...metadata } = client as Record<string, unknown>;
    const gate = docs.hold(where);
    const update = manage(String(uri), 'PUT', String(rat), { ...metadata, redirect_uris: ['https://rp.example/changed-while-disabled'] });
    await gate.arrived;
    const disabled = await call()('POST', `/oidc/v1/management/clients/${String(client.client_id)}/disable`);
    expect([disabled.status, disabled.body.disabled]).toEqual([200, true]);
    gate.release();
    const answered = await update;

    // The operator's view once the disable was answered: the registration as it was, its token unspent.
    expect(answered.status).toBe(403);
    const stored = await running.app.svc.store.adapter('Client').find(String(client.client_id));
    expect(stored?.redirect_uris).toEqual([REDIRECT]);
  });

  it('a token request in flight when the client is disabled is answered 401 invalid_client, and the tokens it made do not work', async () => {
    const key = await encryptionKey(ALG, { kid: 'rp-enc' });
    const { client, where } = await registerAt([key.jwk]);
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, client, { code_challenge: challenge, scope: 'openid email' }));
    const code = callbackUrl.searchParams.get('code') as string;
    // The ID token is encrypted to a key fetched from jwks_uri: the token request waits for it there.
    const gate = docs.hold(where);
    const redeeming = redeemCode(running.issuer, client, code, verifier);
    // The set is fresh for 60 s after registration: only a fetch that is due is held. When the token request
    // needs no fetch, this test cannot hold it, and says so rather than pass.
    const arrivedOrDone = await Promise.race([gate.arrived.then(() => 'held' as const), redeeming.then(() => 'not held' as const)]);
    if (arrivedOrDone === 'not held') {
      docs.unhold(where);
      return expect('token request not held at the jwks_uri fetch (set still fresh)').toBe('held');
    }
    const disabled = await call()('POST', `/oidc/v1/management/clients/${String(client.client_id)}/disable`);
    expect(disabled.status).toBe(200);
    gate.release();
    const tokens = await redeeming;
    expect(tokens.body.access_token).toBeUndefined();
    expect([tokens.status, tokens.body.error]).toEqual([401, 'invalid_client']);
    expect(await storedTokensOf(String(client.client_id))).toEqual([]);
    // Answered as a request that arrives after the disable is (RFC 6749 5.2: Basic was used, so a Basic challenge).
    const after = await redeemCode(running.issuer, client, code, verifier);
    const answer = (r: typeof after): unknown[] => [r.status, r.body, r.headers.get('www-authenticate'), r.headers.get('cache-control')];
    expect(answer(after)).toEqual([401, { error: 'invalid_client', error_description: 'client authentication failed' }, expect.stringMatching(/^Basic realm="[^"]+", error="invalid_client"/), 'no-store']);
    expect(answer(tokens)).toEqual(answer(after));
  });

  it('honest: a token request of a client disabled and enabled again before it was answered gets its tokens', async () => {
    const { client, gate, redeeming } = await redeemingHeld();
    expect((await call()('POST', `/oidc/v1/management/clients/${String(client.client_id)}/disable`)).status).toBe(200);
    expect((await call()('POST', `/oidc/v1/management/clients/${String(client.client_id)}/enable`)).status).toBe(200);
    gate.release();
    const tokens = await redeeming;
    expect(tokens.status).toBe(200);
    expect(await storedTokensOf(String(client.client_id))).toEqual(['AccessToken']);
  });
  it('honest: the RP retries a withdrawn code once the client is enabled again: it is redeemed, and her grant stays (no replay revocation)', async () => {
    const key = await encryptionKey(ALG, { kid: 'rp-enc' });
    const { client, where } = await registerAt([key.jwk]);
    const id = String(client.client_id);
    // She signs in twice at this relying party (one browser, one grant): two codes.
    const browser = new FormBrowser();
    const [first, second] = [pkcePair(), pkcePair()];
    const codeOf = async (challenge: string): Promise<string> =>
      (await signIn(codeFlowUrl(running.issuer, client, { code_challenge: challenge, scope: 'openid email' }), { browser })).callbackUrl.searchParams.get('code') as string;
    const [firstCode, secondCode] = [await codeOf(first.challenge), await codeOf(second.challenge)];
    const gate = docs.hold(where);
    const redeeming = redeemCode(running.issuer, client, firstCode, first.verifier);
    await gate.arrived;
    expect((await call()('POST', `/oidc/v1/management/clients/${id}/disable`)).status).toBe(200);
    gate.release();
    expect([(await redeeming).status, (await redeeming).body.error]).toEqual([401, 'invalid_client']);
    expect((await call()('POST', `/oidc/v1/management/clients/${id}/enable`)).status).toBe(200);
    const secondTokens = await redeemCode(running.issuer, client, secondCode, second.verifier);
    const userinfo = async (): Promise<number> => (await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${String(secondTokens.body.access_token)}` } })).status;
    expect(await userinfo()).toBe(200);
    const retry = await redeemCode(running.issuer, client, firstCode, first.verifier);
    expect({ retry: retry.status, userinfo: await userinfo() }).toEqual({ retry: 200, userinfo: 200 });
  });

  /** The registration body of `client` for an RFC 7592 update, with `changes`. */
  function updateBody(client: ClientMetadata, changes: Record<string, unknown>): Record<string, unknown> {
    const { registration_access_token: _t, registration_client_uri: _u, client_secret_expires_at: _e, client_id_issued_at: _i, ...metadata } = client as Record<string, unknown>;
    return { ...metadata, ...changes };
  }

  it('attack: an RFC 7592 update in flight when the operator deletes the client does not bring it back', async () => {
    const key = await encryptionKey(ALG, { kid: 'rp-enc' });
    const { client, where } = await registerAt([key.jwk]);
    const id = String(client.client_id);
    // The client's own jwks_uri answers when it likes (up to the fetch timeout): its update waits there while the operator deletes it.
    const gate = docs.hold(where);
    const update = manage(String(client.registration_client_uri), 'PUT', String(client.registration_access_token), updateBody(client, { redirect_uris: ['https://rp.example/after-delete'] }));
    await gate.arrived;
    const deleted = await call()('DELETE', `/oidc/v1/management/clients/${id}`);
    expect([deleted.status, deleted.body.deleted]).toEqual([200, true]);
    gate.release();
    const answered = await update;

    expect([answered.status, answered.body.error]).toEqual([401, 'invalid_token']);
    expect(answered.body.registration_access_token).toBeUndefined();
    expect(await running.app.svc.store.adapter('Client').find(id)).toBeUndefined();
    expect((await call()('GET', `/oidc/v1/management/clients/${id}`)).status).toBe(404);
    const { challenge } = pkcePair();
    const authorize = await fetch(codeFlowUrl(running.issuer, { ...client, redirect_uris: ['https://rp.example/after-delete'] }, { code_challenge: challenge }), { redirect: 'manual' });
    expect(authorize.status).toBe(400);
  });

  it('honest: an RFC 7592 update of a client the operator did not delete applies, and so does a registration after a delete', async () => {
    const key = await encryptionKey(ALG, { kid: 'rp-enc' });
    const { client: deletedOne } = await registerAt([key.jwk]);
    expect((await call()('DELETE', `/oidc/v1/management/clients/${String(deletedOne.client_id)}`)).status).toBe(200);

    const { client, where } = await registerAt([key.jwk]);
    const gate = docs.hold(where);
    const update = manage(String(client.registration_client_uri), 'PUT', String(client.registration_access_token), updateBody(client, { redirect_uris: ['https://rp.example/changed'] }));
    await gate.arrived;
    gate.release();
    const answered = await update;
    expect(answered.status).toBe(200);
    expect((await running.app.svc.store.adapter('Client').find(String(client.client_id)))?.redirect_uris).toEqual(['https://rp.example/changed']);
    const read = await manage(String(client.registration_client_uri), 'GET', String(answered.body.registration_access_token));
    expect([read.status, read.body.redirect_uris]).toEqual([200, ['https://rp.example/changed']]);
  });

  /** The id the toolbox lists an initial access token under. */
  const invitationIdOf = (token: string): string => `inv_${createHash('sha256').update(token).digest('base64url')}`;

  /** The stored clients whose redirect URIs are `uris`. */
  async function clientsWith(uris: string[]): Promise<string[]> {
    const page = await running.app.svc.store.inventory?.list('Client', { limit: 500 });
    return (page?.records ?? []).filter((r) => JSON.stringify(r.payload.redirect_uris) === JSON.stringify(uris)).map((r) => String(r.payload.client_id));
  }

  it('attack: a registration in flight when the operator revokes its invitation registers nothing (C7)', async () => {
    const key = await encryptionKey(ALG, { kid: 'rp-enc' });
    path += 1;
    const where = `/invitation-${path}/jwks`;
    docs.sets.set(where, [key.jwk]);
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const uris = [`https://rp.example/revoked-${path}`];
    const gate = docs.hold(where);
    const registering = register(running, { redirect_uris: uris, jwks_uri: `${docs.url}${where}`, id_token_encrypted_response_alg: ALG }, token);
    await gate.arrived;
    const revoked = await call()('DELETE', `/oidc/v1/management/invitations/${invitationIdOf(token)}`);
    expect([revoked.status, revoked.body.revoked]).toEqual([200, true]);
    gate.release();
    const registered = await registering;

    expect([registered.status, registered.body.error]).toEqual([401, 'invalid_token']);
    expect(registered.headers.get('www-authenticate')).toMatch(/^Bearer realm=".*", error="invalid_token"/);
    expect(registered.body.client_id).toBeUndefined();
    expect(await clientsWith(uris)).toEqual([]);
    const again = await register(running, { redirect_uris: uris }, token);
    expect([again.status, again.body.error]).toEqual([401, 'invalid_token']);
  });

  it('honest: a registration in flight while the operator revokes another invitation registers its client', async () => {
    const key = await encryptionKey(ALG, { kid: 'rp-enc' });
    path += 1;
    const where = `/invitation-${path}/jwks`;
    docs.sets.set(where, [key.jwk]);
    const [{ token }, other] = [await issueInitialAccessToken(running.app.svc.provider), await issueInitialAccessToken(running.app.svc.provider)];
    const uris = [`https://rp.example/kept-${path}`];
    const gate = docs.hold(where);
    const registering = register(running, { redirect_uris: uris, jwks_uri: `${docs.url}${where}`, id_token_encrypted_response_alg: ALG }, token);
    await gate.arrived;
    expect((await call()('DELETE', `/oidc/v1/management/invitations/${invitationIdOf(other.token)}`)).status).toBe(200);
    gate.release();
    const registered = await registering;
    expect(registered.status).toBe(201);
    expect(await clientsWith(uris)).toEqual([registered.body.client_id]);
  });

  it('a token request in flight when the operator deletes the client is answered 401 invalid_client, and keeps no token', async () => {
    const { client, gate, redeeming } = await redeemingHeld();
    expect((await call()('DELETE', `/oidc/v1/management/clients/${String(client.client_id)}`)).status).toBe(200);
    gate.release();
    const tokens = await redeeming;
    expect([tokens.status, tokens.body.error, tokens.body.id_token]).toEqual([401, 'invalid_client', undefined]);
    expect(await storedTokensOf(String(client.client_id))).toEqual([]);
  });

  it.each([
    ['the operator revokes the grants of the client', (id: string) => call()('POST', `/oidc/v1/management/clients/${id}/revoke-grants`)],
    ['the operator revokes her', (id: string, sub: string) => call()('POST', '/oidc/v1/management/subjects/revoke', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ sub, client_id: id }).toString() })],
  ])('attack: a token request in flight when %s gets no ID token (her e-mail address inside), but invalid_grant as after it, and keeps no token', async (_name, revoke) => {
    const { client, gate, redeeming } = await redeemingHeld();
    const id = String(client.client_id);
    const revoked = await revoke(id, pairwiseSubOf(REDIRECT));
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_grants).toBeGreaterThanOrEqual(1);
    gate.release();
    const tokens = await redeeming;
    expect([tokens.status, tokens.body.error, tokens.body.id_token, tokens.body.access_token]).toEqual([400, 'invalid_grant', undefined, undefined]);
    expect(await storedTokensOf(id)).toEqual([]);
  });

  it('attack: a token request in flight when she signs out (her grant revoked by the logout) gets no ID token, but invalid_grant, and keeps no token', async () => {
    const { client, gate, redeeming, browser } = await redeemingHeld();
    await browser.follow(`${running.issuer}/logout?client_id=${String(client.client_id)}`, running.baseUrl);
    const signedOut = await browser.submit('op.logoutForm', { logout: 'yes' }, running.baseUrl);
    expect(signedOut.response?.status).toBe(200);
    gate.release();
    const tokens = await redeeming;
    expect([tokens.status, tokens.body.error, tokens.body.id_token, tokens.body.access_token]).toEqual([400, 'invalid_grant', undefined, undefined]);
    expect(await storedTokensOf(String(client.client_id))).toEqual([]);
  });

  it('honest: a token request in flight while she signs out in another browser (another session, another grant) gets its tokens', async () => {
    const elsewhere = await signIn(codeFlowUrl(running.issuer, (await registerAt([(await encryptionKey(ALG, { kid: 'rp-enc' })).jwk])).client, { scope: 'openid' }));
    const { client, gate, redeeming } = await redeemingHeld();
    await elsewhere.browser.follow(`${running.issuer}/logout`, running.baseUrl);
    expect((await elsewhere.browser.submit('op.logoutForm', { logout: 'yes' }, running.baseUrl)).response?.status).toBe(200);
    gate.release();
    const tokens = await redeeming;
    expect([tokens.status, typeof tokens.body.id_token]).toEqual([200, 'string']);
    expect(await storedTokensOf(String(client.client_id))).toEqual(['AccessToken']);
  });

  /** A client signed in to, with its tokens, whose UserInfo request waits at its jwks_uri (UserInfo is encrypted to a key there). */
  async function userinfoHeld(): Promise<{ id: string; gate: { release: () => void }; asking: Promise<{ status: number; body: string; type: string | null; challenge: string | null }> }> {
    const { client, gate, redeeming } = await redeemingHeld();
    gate.release();
    const tokens = await redeeming;
    expect(tokens.status).toBe(200);
    // Its keys move to another jwks_uri (RFC 7592; tokens issued stay valid, C6), so UserInfo fetches them again.
    path += 1;
    const where = `/race-${path}/jwks`;
    docs.sets.set(where, docs.sets.get(new URL(String(client.jwks_uri)).pathname) ?? []);
    const moved = await manage(String(client.registration_client_uri), 'PUT', String(client.registration_access_token), updateBody(client, { jwks_uri: `${docs.url}${where}` }));
    expect(moved.status).toBe(200);
    const held = docs.hold(where);
    const asking = fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${String(tokens.body.access_token)}` } }).then(async (r) => ({
      status: r.status,
      body: await r.text(),
      type: r.headers.get('content-type'),
      challenge: r.headers.get('www-authenticate'),
    }));
    await held.arrived;
    return { id: String(client.client_id), gate: held, asking };
  }

  it.each([
    ['the operator disables the client', (id: string) => call()('POST', `/oidc/v1/management/clients/${id}/disable`)],
    ['the operator revokes the grants of the client', (id: string) => call()('POST', `/oidc/v1/management/clients/${id}/revoke-grants`)],
  ])('attack: a UserInfo request in flight when %s gets no user data, but 401 invalid_token as after it', async (_name, act) => {
    const { id, gate, asking } = await userinfoHeld();
    expect((await act(id)).status).toBe(200);
    gate.release();
    const answer = await asking;
    expect(answer).toEqual({ status: 401, body: JSON.stringify({ error: 'invalid_token', error_description: 'invalid token provided' }), type: expect.stringMatching(/^application\/json/), challenge: expect.stringMatching(/^Bearer realm="[^"]+", error="invalid_token"/) });
  });

  it('honest: a UserInfo request in flight while its client is disabled and enabled again gets her encrypted UserInfo', async () => {
    const { id, gate, asking } = await userinfoHeld();
    expect((await call()('POST', `/oidc/v1/management/clients/${id}/disable`)).status).toBe(200);
    expect((await call()('POST', `/oidc/v1/management/clients/${id}/enable`)).status).toBe(200);
    gate.release();
    const answer = await asking;
    expect([answer.status, answer.type, answer.body.split('.').length]).toEqual([200, expect.stringMatching(/^application\/jwt/), 5]);
  });

  it("honest: a token request in flight while the operator revokes another client's grants, or another person, gets its tokens", async () => {
    const bystander = await registerAt([(await encryptionKey(ALG, { kid: 'rp-enc' })).jwk]);
    const { client, gate, redeeming } = await redeemingHeld();
    expect((await call()('POST', `/oidc/v1/management/clients/${String(bystander.client.client_id)}/revoke-grants`)).status).toBe(200);
    const other = await call()('POST', '/oidc/v1/management/subjects/revoke', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'sub=demo-0002' });
    expect(other.status).toBe(200);
    gate.release();
    const tokens = await redeeming;
    expect([tokens.status, typeof tokens.body.id_token]).toEqual([200, 'string']);
    expect(await storedTokensOf(String(client.client_id))).toEqual(['AccessToken']);
    const userinfo = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${String(tokens.body.access_token)}` } });
    expect(userinfo.status).toBe(200);
  });

  /** A client signing its request objects with a key at its `jwks_uri`, and a push of such an object to `/par` by it. */
  async function pushingClient(): Promise<{ id: string; where: string; push: () => Promise<{ status: number; body: Record<string, unknown> }> }> {
    const sig = await signingKey('PS256');
    const { client, where } = await registerAt([sig.jwk, (await encryptionKey(ALG, { kid: 'rp-enc' })).jwk], { request_object_signing_alg: 'PS256' });
    const id = String(client.client_id);
    const headers = { authorization: basicAuthorization(id, String(client.client_secret), { formEncoded: true }), 'content-type': 'application/x-www-form-urlencoded' };
    const push = async (): Promise<{ status: number; body: Record<string, unknown> }> => {
      const now = Math.floor(Date.now() / 1000);
      const request = await new SignJWT({ iss: id, aud: running.issuer, iat: now, exp: now + 60, client_id: id, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })
        .setProtectedHeader({ alg: 'PS256', kid: sig.jwk.kid, typ: 'oauth-authz-req+jwt' })
        .sign(sig.privateKey);
      const res = await fetch(`${running.issuer}/par`, { method: 'POST', headers, body: new URLSearchParams({ client_id: id, request }) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    return { id, where, push };
  }

  /** `count` concurrent pushes of one client, each waiting on the one fetch of its `jwks_uri` (the request objects' key) the test holds. */
  async function pushesHeld(count: number): Promise<{ id: string; push: () => Promise<{ status: number; body: Record<string, unknown> }>; gate: { release: () => void }; pushing: Promise<{ status: number; body: Record<string, unknown> }[]> }> {
    const { id, where, push } = await pushingClient();
    const gate = docs.hold(where);
    const pushing = Promise.all(Array.from({ length: count }, push));
    await gate.arrived;
    return { id, push, gate, pushing };
  }

  const authorizeWith = (id: string, requestUri: unknown): string => `${running.issuer}/authorize?${new URLSearchParams({ client_id: id, request_uri: String(requestUri) })}`;

  it('attack: pushes in flight when the client is disabled are answered 401 invalid_client as after it, and store nothing a later enable would bring back', async () => {
    const marksBefore = await countOf(PUSHED_REQUEST_USE_MODEL);
    const { id, push, gate, pushing } = await pushesHeld(4);
    expect((await call()('POST', `/oidc/v1/management/clients/${id}/disable`)).status).toBe(200);
    gate.release();
    const answers = await pushing;
    const after = await push();
    expect(after).toEqual({ status: 401, body: { error: 'invalid_client', error_description: 'client authentication failed' } });
    expect(answers).toEqual(answers.map(() => after));
    expect([await countOf('PushedAuthorizationRequest', id), await countOf(PUSHED_REQUEST_USE_MODEL)]).toEqual([0, marksBefore]);
    // Honest: enabled again, the client pushes and its request_uri starts her sign-in.
    expect((await call()('POST', `/oidc/v1/management/clients/${id}/enable`)).status).toBe(200);
    const pushed = await push();
    expect(pushed.status).toBe(201);
    expect((await outcomeOf(authorizeWith(id, pushed.body.request_uri))).interaction).toBeDefined();
  });

  it('honest: pushes in flight while the client is disabled and enabled again are stored (201), and each request_uri starts her sign-in', async () => {
    const { id, gate, pushing } = await pushesHeld(4);
    expect((await call()('POST', `/oidc/v1/management/clients/${id}/disable`)).status).toBe(200);
    expect((await call()('POST', `/oidc/v1/management/clients/${id}/enable`)).status).toBe(200);
    gate.release();
    const answers = await pushing;
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201]);
    for (const { body } of answers) expect((await outcomeOf(authorizeWith(id, body.request_uri))).interaction).toBeDefined();
  });

  it('honest: a push of another client in flight while one client is disabled is stored (201)', async () => {
    const other = await pushingClient();
    const { id, gate, pushing } = await pushesHeld(2);
    expect((await call()('POST', `/oidc/v1/management/clients/${other.id}/disable`)).status).toBe(200);
    gate.release();
    expect((await pushing).map((a) => a.status)).toEqual([201, 201]);
    expect(await countOf('PushedAuthorizationRequest', id)).toBe(2);
  });
});

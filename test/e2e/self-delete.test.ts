import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt, SignJWT } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { basicAuthorization } from '../../lib/web/basic-auth.js';
import type { RunningApp } from '../helpers/app.js';
import { registerClient, updateRegistration } from '../helpers/clients.js';
import { codeFlowUrl, FormBrowser, pkcePair, redeemCode, signIn } from '../helpers/flow.js';
import { encryptionKey, manage, register, startKeySetServer, type KeySetServer } from '../helpers/registration.js';
import { signingKey } from '../helpers/request-objects.js';
import { describeEachStore, type StoreKind } from '../helpers/stores.js';
import { appPerSuite } from '../helpers/suite-app.js';

const REDIRECT = 'https://rp.example/cb';
const ALG = 'RSA-OAEP-256';
/** Every model whose records can name a client (the client itself, her grant and tokens, pending requests, sessions). */
const MODELS = ['Client', 'Grant', 'AccessToken', 'AuthorizationCode', 'RefreshToken', 'RegistrationAccessToken', 'PushedAuthorizationRequest', 'Interaction', 'Session'];

/**
 * A client deleting itself (RFC 7592 section 2.3) ends what it held as the operator's delete does: her grants of it and
 * every token and code issued under them are gone from the store, and a token request it had in flight keeps nothing.
 */
function selfDeletes(kind: StoreKind, properties: () => Record<string, string>): void {
  describe('a client deleting itself through RFC 7592', () => {
    let docs: KeySetServer;
    beforeAll(async () => (docs = await startKeySetServer()));
    afterAll(async () => docs.close());
    const running: RunningApp = appPerSuite(() => ({ properties: { ...properties(), 'svc.fetch.allow-private-network': true }, claimModules: createDemoClaimModules() }));

    /** The models of the live records that name `clientId` (a session by its entry for the client). */
    async function recordsNaming(clientId: string): Promise<string[]> {
      const inventory = running.app.svc.store.inventory;
      if (!inventory) throw new Error('the store has no inventory');
      const found: string[] = [];
      for (const model of MODELS) {
        let cursor: string | undefined;
        do {
          const page = await inventory.list(model, { limit: 500, ...(cursor ? { cursor } : {}) });
          for (const { payload } of page.records) {
            const { params } = payload;
            const authorizations = payload.authorizations as Record<string, unknown> | undefined;
            const pushedBy = typeof payload.request === 'string' ? decodeJwt(payload.request).iss : undefined;
            if (pushedBy === clientId || payload.clientId === clientId || payload.client_id === clientId || params?.client_id === clientId || authorizations?.[clientId]) found.push(model);
          }
          cursor = page.cursor;
        } while (cursor);
      }
      return found.sort();
    }

    /** RFC 7592 DELETE with its registration access token, at `spelling` of its configuration path (none: as registered). */
    const deleteItself = async (client: ClientMetadata, spelling?: string): Promise<number> =>
      (await manage(spelling ? `${running.issuer}${spelling}` : String(client.registration_client_uri), 'DELETE', String(client.registration_access_token))).status;
    const userinfo = async (token: unknown): Promise<number> => (await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${String(token)}` } })).status;
    /** Signs her in at `client` (in `browser`) and redeems the code: its access token. */
    const tokensOf = async (client: ClientMetadata, browser: FormBrowser): Promise<string> => {
      const { verifier, challenge } = pkcePair();
      const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, client, { code_challenge: challenge, scope: 'openid email' }), { browser });
      const tokens = await redeemCode(running.issuer, client, callbackUrl.searchParams.get('code') as string, verifier);
      expect(tokens.status).toBe(200);
      return String(tokens.body.access_token);
    };
    const codeOf = async (client: ClientMetadata, browser: FormBrowser): Promise<{ code: string; verifier: string }> => {
      const { verifier, challenge } = pkcePair();
      const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, client, { code_challenge: challenge, scope: 'openid email' }), { browser });
      return { code: callbackUrl.searchParams.get('code') as string, verifier };
    };
    const push = async (client: ClientMetadata): Promise<number> => {
      const body = new URLSearchParams({ client_id: String(client.client_id), response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
      const headers = { authorization: basicAuthorization(client.client_id, client.client_secret as string, { formEncoded: true }), 'content-type': 'application/x-www-form-urlencoded' };
      return (await fetch(`${running.issuer}/par`, { method: 'POST', headers, body })).status;
    };

    it('attack: her grant, its access token and code, a pushed request and the registration token are gone; honest: her grant of another client works on', async () => {
      const [client, other] = [await registerClient(running, 'plain'), await registerClient(running, 'plain')];
      const id = String(client.metadata.client_id);
      const browser = new FormBrowser();
      const [access, otherAccess] = [await tokensOf(client.metadata, browser), await tokensOf(other.metadata, browser)];
      const pending = await codeOf(client.metadata, browser);
      expect(await push(client.metadata)).toBe(201);
      expect(await recordsNaming(id)).toEqual(expect.arrayContaining(['AccessToken', 'AuthorizationCode', 'Client', 'Grant', 'PushedAuthorizationRequest', 'RegistrationAccessToken']));

      expect(await deleteItself(client.metadata)).toBe(204);
      expect(await recordsNaming(id)).toEqual(['Session']);
      expect(await userinfo(access)).toBe(401);
      const redeemed = await redeemCode(running.issuer, client.metadata, pending.code, pending.verifier);
      expect([redeemed.status, redeemed.body.error]).toEqual([401, 'invalid_client']);

      expect(await userinfo(otherAccess)).toBe(200);
      expect(await recordsNaming(String(other.metadata.client_id))).toEqual(['AccessToken', 'AuthorizationCode', 'Client', 'Grant', 'RegistrationAccessToken', 'Session']);
      const next = await codeOf(other.metadata, browser);
      expect((await redeemCode(running.issuer, other.metadata, next.code, next.verifier)).status).toBe(200);
    });

    if (kind !== 'memory') return;

    it('attack: a code of a public client (PKCE, no authentication) issued before it deleted itself is refused, and stored no more', async () => {
      const client = await registerClient(running, 'plain', { token_endpoint_auth_method: 'none' });
      const id = String(client.metadata.client_id);
      const { code, verifier } = await codeOf(client.metadata, new FormBrowser());
      expect(await deleteItself(client.metadata, `/REGISTER/${id}/`)).toBe(204);
      const body = new URLSearchParams({ grant_type: 'authorization_code', client_id: id, code, code_verifier: verifier, redirect_uri: REDIRECT });
      const answer = await fetch(`${running.issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
      expect([answer.status, ((await answer.json()) as { error?: string }).error]).toEqual([401, 'invalid_client']);
      expect(await recordsNaming(id)).toEqual(['Session']);
    });

    it('attack: her consent page open when the client deletes itself, answered Allow, stores no grant for it', async () => {
      const client = await registerClient(running, 'plain');
      const id = String(client.metadata.client_id);
      const browser = new FormBrowser();
      await browser.follow(codeFlowUrl(running.issuer, client.metadata), running.baseUrl);
      await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
      expect(browser.lastPage).toContain('id="consent-allow"');
      expect(await deleteItself(client.metadata)).toBe(204);
      const allowed = await browser.submit('consent-allow', {}, running.baseUrl);
      expect([allowed.response?.status, allowed.leftTo]).toEqual([400, undefined]);
      expect((await recordsNaming(id)).filter((m) => m !== 'Interaction' && m !== 'Session')).toEqual([]);
    });

    /** A client with an encrypted ID token, its key at a `jwks_uri` the test can hold. */
    let path = 0;
    async function heldClient(): Promise<{ client: ClientMetadata; where: string }> {
      path += 1;
      const where = `/self-${path}/jwks`;
      docs.sets.set(where, [(await encryptionKey(ALG, { kid: 'rp-enc' })).jwk]);
      const { token } = await issueInitialAccessToken(running.app.svc.provider);
      const res = await register(running, { redirect_uris: [REDIRECT], jwks_uri: `${docs.url}${where}`, id_token_encrypted_response_alg: ALG }, token);
      expect(res.status).toBe(201);
      return { client: res.body as unknown as ClientMetadata, where };
    }

    it('attack: a token request in flight when the client deletes itself gets no ID token (her e-mail inside), is answered as after the delete, and keeps no token', async () => {
      const { client, where } = await heldClient();
      const { code, verifier } = await codeOf(client, new FormBrowser());
      const gate = docs.hold(where);
      const redeeming = redeemCode(running.issuer, client, code, verifier);
      await gate.arrived;
      expect(await deleteItself(client)).toBe(204);
      gate.release();
      const tokens = await redeeming;
      expect([tokens.status, tokens.body.error, tokens.body.id_token, tokens.body.access_token]).toEqual([401, 'invalid_client', undefined, undefined]);
      expect(await recordsNaming(String(client.client_id))).toEqual(['Session']);
    });

    /** A client signing its request objects with a key at a `jwks_uri` the test can hold, and a push of one held there. */
    async function heldPush(): Promise<{ id: string; client: ClientMetadata; pushed: Promise<Response>; gate: { arrived: Promise<void>; release: () => void } }> {
      path += 1;
      const where = `/self-${path}/jwks`;
      const sig = await signingKey('PS256');
      docs.sets.set(where, [sig.jwk, (await encryptionKey(ALG, { kid: 'rp-enc' })).jwk]);
      const { token } = await issueInitialAccessToken(running.app.svc.provider);
      const res = await register(running, { redirect_uris: [REDIRECT], jwks_uri: `${docs.url}${where}`, id_token_encrypted_response_alg: ALG, request_object_signing_alg: 'PS256' }, token);
      expect(res.status).toBe(201);
      const client = res.body as unknown as ClientMetadata;
      const id = String(client.client_id);
      const now = Math.floor(Date.now() / 1000);
      const request = await new SignJWT({ iss: id, aud: running.issuer, iat: now, exp: now + 60, client_id: id, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })
        .setProtectedHeader({ alg: 'PS256', kid: sig.jwk.kid, typ: 'oauth-authz-req+jwt' })
        .sign(sig.privateKey);
      const gate = docs.hold(where);
      const headers = { authorization: basicAuthorization(id, client.client_secret as string, { formEncoded: true }), 'content-type': 'application/x-www-form-urlencoded' };
      const pushed = fetch(`${running.issuer}/par`, { method: 'POST', headers, body: new URLSearchParams({ client_id: id, request }) });
      return { id, client, pushed, gate };
    }

    it('attack: a pushed request in flight when the client deletes itself (its request object waiting on the jwks_uri) is refused (401 invalid_client) and not stored', async () => {
      const { id, client, pushed, gate } = await heldPush();
      await gate.arrived;
      expect(await deleteItself(client)).toBe(204);
      gate.release();
      const answer = await pushed;
      expect([answer.status, await answer.json()]).toEqual([401, expect.objectContaining({ error: 'invalid_client' })]);
      expect(await recordsNaming(id)).toEqual([]);
    });

    it('honest: a pushed request in flight while another client deletes itself is stored (201)', async () => {
      const other = await registerClient(running, 'plain');
      const { id, pushed, gate } = await heldPush();
      await gate.arrived;
      expect(await deleteItself(other.metadata)).toBe(204);
      gate.release();
      expect((await pushed).status).toBe(201);
      expect(await recordsNaming(id)).toEqual(['Client', 'PushedAuthorizationRequest', 'RegistrationAccessToken']);
    });

    it('honest: a client that updates itself (PUT) keeps her grant and tokens; its token request in flight during the update gets its tokens', async () => {
      const client = await registerClient(running, 'plain');
      const id = String(client.metadata.client_id);
      const browser = new FormBrowser();
      const access = await tokensOf(client.metadata, browser);
      const updated = await updateRegistration(client, { client_name: 'renamed' });
      expect(await userinfo(access)).toBe(200);
      expect(await recordsNaming(id)).toEqual(['AccessToken', 'AuthorizationCode', 'Client', 'Grant', 'RegistrationAccessToken', 'Session']);
      expect(await tokensOf(updated.metadata, browser)).toEqual(expect.any(String));
      const { client: held, where } = await heldClient();
      const { code, verifier } = await codeOf(held, browser);
      const gate = docs.hold(where);
      const redeeming = redeemCode(running.issuer, held, code, verifier);
      await gate.arrived;
      const { registration_access_token: rat, registration_client_uri: uri, client_secret_expires_at: _e, client_id_issued_at: _i, ...metadata } = held as Record<string, unknown>;
      expect((await manage(String(uri), 'PUT', String(rat), { ...metadata, client_name: 'renamed while redeeming' })).status).toBe(200);
      gate.release();
      const tokens = await redeeming;
      expect([tokens.status, typeof tokens.body.id_token]).toEqual([200, 'string']);
    });
  });
}

describeEachStore('self-delete', selfDeletes, ['memory', 'redis standalone']);

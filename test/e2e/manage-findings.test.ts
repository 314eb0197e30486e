import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, pkcePair } from '../helpers/flow.js';
import { managementCalls } from '../helpers/management-calls.js';
import { encryptionKey, manage, register, startDocServer, type DocServer } from '../helpers/registration.js';

const REDIRECT = 'https://rp.example/cb';
const ALG = 'RSA-OAEP-256';
const USER = 'probe-admin';
const PASSWORD = 'probe-admin-password-0123456789';
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

/**
 * Findings of a hostile probe of the management surface (C2, C6, C7). Requests in flight are held at the client's own
 * `jwks_uri` (answered only when the test says), as in suspension-race.test.ts: no sleeps.
 */
describe('the operator deletes a client while its own requests are in flight (C2, C6)', () => {
  let running: RunningApp;
  let docs: DocServer;
  const sets = new Map<string, JWK[]>();
  const holds = new Map<string, { arrived: () => void; answer: Promise<void> }>();
  let path = 0;
  const call = () => managementCalls(running, AUTH);

  beforeAll(async () => {
    docs = await startDocServer();
    docs.handler = (req, res: ServerResponse) => {
      const url = req.url ?? '';
      const send = (): void => {
        res.setHeader('content-type', 'application/json');
        res.setHeader('cache-control', 'no-cache, no-store');
        res.end(JSON.stringify({ keys: sets.get(url) ?? [] }));
      };
      const hold = holds.get(url);
      if (!hold) return send();
      holds.delete(url);
      hold.arrived();
      void hold.answer.then(send);
    };
    running = await startApp({
      properties: { 'svc.fetch.allow-private-network': true, 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true },
      claimModules: createDemoClaimModules(),
    });
  });
  afterAll(async () => {
    await running.close();
    await docs.close();
  });

  function hold(where: string): { arrived: Promise<void>; release: () => void } {
    let arrived!: () => void;
    let release!: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const answer = new Promise<void>((resolve) => (release = resolve));
    holds.set(where, { arrived, answer });
    return { arrived: arrival, release };
  }

  async function registerAt(keys: JWK[]): Promise<{ client: ClientMetadata; where: string }> {
    path += 1;
    const where = `/race-${path}/jwks`;
    sets.set(where, keys);
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: [REDIRECT], jwks_uri: `${docs.url}${where}`, id_token_encrypted_response_alg: ALG, userinfo_encrypted_response_alg: ALG }, token);
    expect(res.status).toBe(201);
    return { client: res.body as unknown as ClientMetadata, where };
  }

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
    const gate = hold(where);
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
    const gate = hold(where);
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
    sets.set(where, [key.jwk]);
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const uris = [`https://rp.example/revoked-${path}`];
    const gate = hold(where);
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
    sets.set(where, [key.jwk]);
    const [{ token }, other] = [await issueInitialAccessToken(running.app.svc.provider), await issueInitialAccessToken(running.app.svc.provider)];
    const uris = [`https://rp.example/kept-${path}`];
    const gate = hold(where);
    const registering = register(running, { redirect_uris: uris, jwks_uri: `${docs.url}${where}`, id_token_encrypted_response_alg: ALG }, token);
    await gate.arrived;
    expect((await call()('DELETE', `/oidc/v1/management/invitations/${invitationIdOf(other.token)}`)).status).toBe(200);
    gate.release();
    const registered = await registering;
    expect(registered.status).toBe(201);
    expect(await clientsWith(uris)).toEqual([registered.body.client_id]);
  });
});

import { describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import { refOf } from '../../adapters/inventory.js';
import { createMemoryStore } from '../../adapters/memory.js';
import { withAdapter } from '../helpers/store-with-adapter.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { StoreUnavailableError } from '../../lib/errors.js';
import { subjectHash } from '../../lib/management/audit.js';
import { accountsHeldAt, heldCall } from '../helpers/held-call.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { registerClient } from '../helpers/clients.js';
import { codeFlowUrl, FormBrowser, redirectParams, runCodeFlow, signIn } from '../helpers/flow.js';
import { confidentialClient, sessionsOf } from '../helpers/app.js';
import { capturingLogger } from '../helpers/logs.js';
import { managementCalls } from '../helpers/management-calls.js';
import { manage, register, type HttpResult } from '../helpers/registration.js';

const USER = 'operator';
const PASSWORD = 'toolbox-password-123';
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const STATIC: ClientMetadata = { client_id: 'static-rp', client_secret: 'static-rp-secret-that-is-long-enough-0123', redirect_uris: ['https://static.example/cb'] };

describe('operator toolbox over HTTP', () => {
  const { logger, lines } = capturingLogger();
  const running = appPerSuite({
    logger,
    clients: [STATIC],
    properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true, 'svc.management.lockout-threshold': 3 },
  });
  const call = managementCalls(running, AUTH);
  const M = '/oidc/v1/management';
  const userinfo = async (accessToken: string): Promise<{ status: number; error?: string }> => {
    const response = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    const challenge = response.headers.get('www-authenticate') ?? '';
    return { status: response.status, error: /error="([^"]+)"/.exec(challenge)?.[1] };
  };
  const tokenWithSecret = async (client: ClientMetadata): Promise<HttpResult> => {
    const response = await fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${String(client.client_secret)}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=nope&redirect_uri=https%3A%2F%2Frp.example%2Fcb&code_verifier=' + 'v'.repeat(43),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
  };
  const audits = (action: string): Record<string, unknown>[] =>
    lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'management_audit' && l.action === action);


  it('lists every stored client a page at a time, static clients apart, never a secret', async () => {
    const clients = await Promise.all(Array.from({ length: 7 }, () => registerClient(running, 'plain')));
    const ids = new Set<string>();
    let cursor: string | undefined;
    let pages = 0;
    let statics: unknown;
    do {
      const page = await call('GET', `${M}/clients?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('cache-control')).toBe('no-store');
      const list = page.body.clients as Record<string, unknown>[];
      expect(list.length).toBeLessThanOrEqual(3);
      for (const c of list) ids.add(String(c.client_id));
      if (pages === 0) statics = page.body.static_clients;
      else expect(page.body).not.toHaveProperty('static_clients');
      cursor = page.body.next_cursor as string | undefined;
      pages += 1;
      const dump = JSON.stringify(page.body);
      for (const c of clients) {
        expect(dump).not.toContain(String(c.metadata.client_secret));
        expect(dump).not.toContain(String(c.metadata.registration_access_token));
      }
      expect(dump).not.toContain('sha256:');
    } while (cursor);
    for (const c of clients) expect(ids).toContain(c.metadata.client_id);
    expect(ids).not.toContain('static-rp');
    expect(statics).toEqual([expect.objectContaining({ client_id: 'static-rp', static: true, disabled: false })]);
    expect(pages).toBeGreaterThanOrEqual(3);
  });

  it('shows one client without its secret, its hash or a registration access token; 404 for none; static ones marked', async () => {
    const client = await registerClient(running, 'rsa');
    const shown = await call('GET', `${M}/clients/${client.metadata.client_id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ disabled: false, static: false, client: { client_id: client.metadata.client_id, redirect_uris: ['https://rp.example/cb'] } });
    const view = shown.body.client as Record<string, unknown>;
    expect(view).not.toHaveProperty('client_secret');
    expect(Object.keys(view).filter((k) => /secret|token$/.test(k) && k !== 'client_secret_expires_at')).toEqual([]);
    expect((view.jwks as { keys: Record<string, unknown>[] }).keys[0]).not.toHaveProperty('d');
    const dump = JSON.stringify(shown.body);
    expect(dump).not.toContain(String(client.metadata.client_secret));
    expect(dump).not.toContain(String(client.metadata.registration_access_token));
    expect(dump).not.toContain('sha256:');
    expect((await call('GET', `${M}/clients/no-such-client`)).body).toMatchObject({ error: 'not_found' });
    const statik = await call('GET', `${M}/clients/static-rp`);
    expect(statik.body).toMatchObject({ static: true, client: { client_id: 'static-rp' } });
    expect(JSON.stringify(statik.body)).not.toContain(String(STATIC.client_secret));
    expect(audits('clients.show').some((a) => a.client_id === client.metadata.client_id && a.user === USER && a.outcome === 'done')).toBe(true);
  });

  it('disables a client: refused at authorize, PAR, token and UserInfo (its live access token too), and its registration (403, the token kept); enable restores it', async () => {
    const client = await registerClient(running, 'plain');
    const basicOf = `Basic ${Buffer.from(`${client.metadata.client_id}:${String(client.metadata.client_secret)}`).toString('base64')}`;
    const flow = await runCodeFlow(running.issuer, client.metadata, { skipUserinfo: true });
    expect((await userinfo(flow.tokens.access_token)).status).toBe(200);
    const disabled = await call('POST', `${M}/clients/${client.metadata.client_id}/disable`);
    expect([disabled.status, disabled.body]).toEqual([200, { client_id: client.metadata.client_id, disabled: true, changed: true }]);
    expect((await call('POST', `${M}/clients/${client.metadata.client_id}/disable`)).body).toMatchObject({ changed: false });
    expect((await call('GET', `${M}/clients/${client.metadata.client_id}`)).body).toMatchObject({ disabled: true, disabled_by: USER, disabled_at: expect.any(Number) });

    await expect(runCodeFlow(running.issuer, client.metadata, { skipUserinfo: true })).rejects.toThrow();
    const authorize = await fetch(`${running.issuer}/authorize?client_id=${client.metadata.client_id}&response_type=code&scope=openid&redirect_uri=https%3A%2F%2Frp.example%2Fcb&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`, { redirect: 'manual' });
    expect(authorize.status).toBe(400);
    expect(await authorize.text()).toContain('invalid_client');
    const token = await tokenWithSecret(client.metadata);
    expect([token.status, token.body.error]).toEqual([401, 'invalid_client']);
    const par = await fetch(`${running.issuer}/par`, {
      method: 'POST',
      headers: { authorization: basicOf, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ response_type: 'code', scope: 'openid', redirect_uri: 'https://rp.example/cb', code_challenge: 'a'.repeat(43), code_challenge_method: 'S256' }).toString(),
    });
    expect([par.status, ((await par.json()) as { error?: string }).error]).toEqual([401, 'invalid_client']);
    expect(await userinfo(flow.tokens.access_token)).toEqual({ status: 401, error: 'invalid_token' });
    // Its registration is refused with 403 client_disabled, under every method and spelling, and
    // the registration access token it presented is neither spent nor destroyed.
    const uri = String(client.metadata.registration_client_uri);
    const rat = String(client.metadata.registration_access_token);
    const { registration_access_token: _rat, registration_client_uri: _uri, client_id_issued_at: _iat, client_secret_expires_at: _exp, ...updateBody } = client.metadata;
    const refusals = [
      await manage(uri, 'GET', rat),
      await manage(uri, 'PUT', rat, updateBody),
      await manage(uri, 'POST', rat, updateBody),
      await manage(uri, 'DELETE', rat),
    ];
    expect(refusals.map((r) => [r.status, r.body.error])).toEqual(Array(4).fill([403, 'client_disabled']));
    for (const spelling of [uri.replace('/register/', '/REGISTER/'), uri.replace('/oidc/v1/register/', '/oidc/v1//register/'), `${uri}/`, uri.replace('/register/', '/%72egister/')]) {
      // Another spelling gets the same check or 404; never a 401 that spends the token.
      const answer = await call('GET', spelling.slice(running.baseUrl.length), { auth: `Bearer ${rat}` });
      expect(answer.status === 404 || (answer.status === 403 && answer.body.error === 'client_disabled')).toBe(true);
    }
    expect((await fetch(uri, { method: 'HEAD', headers: { authorization: `Bearer ${rat}` } })).status).toBe(405);
    // A token of another client presented for the disabled one learns nothing: 401, as for any client.
    const stranger = await registerClient(running, 'plain');
    expect((await manage(uri, 'GET', String(stranger.metadata.registration_access_token))).status).toBe(401);

    expect((await call('POST', `${M}/clients/${client.metadata.client_id}/enable`)).body).toEqual({ client_id: client.metadata.client_id, disabled: false, changed: true });
    expect((await userinfo(flow.tokens.access_token)).status).toBe(200);
    expect((await tokenWithSecret(client.metadata)).body.error).toBe('invalid_grant');
    // The registration access token presented while disabled works again, once, and rotates.
    const read = await manage(uri, 'GET', rat);
    expect([read.status, read.body.client_id]).toEqual([200, client.metadata.client_id]);
    expect(read.body.registration_access_token).toEqual(expect.any(String));
    expect((await manage(uri, 'GET', rat)).status).toBe(401);
    expect(audits('clients.disable').filter((a) => a.client_id === client.metadata.client_id).map((a) => a.changed)).toEqual([true, false]);
  });

  it('revokes every grant of a client: its access tokens stop working, the client does not', async () => {
    const client = await registerClient(running, 'plain');
    const first = await runCodeFlow(running.issuer, client.metadata, { skipUserinfo: true });
    const second = await runCodeFlow(running.issuer, client.metadata, { skipUserinfo: true, login: 'demo-basic', password: 'demo-basic' });
    const other = await registerClient(running, 'plain');
    const untouched = await runCodeFlow(running.issuer, other.metadata, { skipUserinfo: true });
    const revoked = await call('POST', `${M}/clients/${client.metadata.client_id}/revoke-grants`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ client_id: client.metadata.client_id, revoked_grants: 2 });
    expect(revoked.body.revoked_tokens).toBeGreaterThanOrEqual(2);
    for (const flow of [first, second]) expect(await userinfo(flow.tokens.access_token)).toEqual({ status: 401, error: 'invalid_token' });
    expect((await userinfo(untouched.tokens.access_token)).status).toBe(200);
    expect((await runCodeFlow(running.issuer, client.metadata)).userinfo.sub).toBe(first.claims.sub);
    expect((await call('POST', `${M}/clients/no-such-client/revoke-grants`)).status).toBe(404);
  });

  it('attack: after her grants at a client are revoked, her live session there yields nothing silently (consent_required) and no code before she allows again', async () => {
    const client = await registerClient(running, 'plain');
    const browser = new FormBrowser();
    await runCodeFlow(running.issuer, client.metadata, { skipUserinfo: true, browser, scope: 'openid email' });
    expect((await call('POST', `${M}/clients/${client.metadata.client_id}/revoke-grants`)).body).toMatchObject({ revoked_grants: 1 });
    const silent = await browser.follow(codeFlowUrl(running.issuer, client.metadata, { prompt: 'none', state: 'after', scope: 'openid email' }), running.baseUrl);
    expect([redirectParams(silent.leftTo as string).get('error'), redirectParams(silent.leftTo as string).get('state'), redirectParams(silent.leftTo as string).has('code')]).toEqual(['consent_required', 'after', false]);
    const asked = await browser.follow(codeFlowUrl(running.issuer, client.metadata, { state: 'again', scope: 'openid email' }), running.baseUrl);
    expect({ left: asked.leftTo, consent: browser.lastPage.includes('id="consent-allow"'), login: browser.lastPage.includes('id="login-form"') }).toEqual({ left: undefined, consent: true, login: false });
  });

  it('honest: she signs in again after the revocation in the same browser: asked only for her consent, she allows and her application gets its code and state', async () => {
    const client = await registerClient(running, 'plain');
    const browser = new FormBrowser();
    await runCodeFlow(running.issuer, client.metadata, { skipUserinfo: true, browser, scope: 'openid email' });
    await call('POST', `${M}/clients/${client.metadata.client_id}/revoke-grants`);
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, client.metadata, { state: 'again', scope: 'openid email' }), { browser });
    expect([callbackUrl.searchParams.has('code'), callbackUrl.searchParams.get('state')]).toEqual([true, 'again']);
  });

  /** The stored registration access tokens of `clientId` (their records carry the client id; the store has no TTL for them). */
  const registrationTokensOf = async (clientId: unknown): Promise<number> =>
    (await running.app.svc.store.inventory?.list('RegistrationAccessToken', { limit: 500 }))?.records.filter((r) => r.payload.clientId === clientId).length ?? -1;

  it('deletes a client with its grants and its registration access token (kept without expiry, it would stay forever); static clients are refused with 409', async () => {
    const client = await registerClient(running, 'plain');
    const neighbour = await registerClient(running, 'plain');
    const flow = await runCodeFlow(running.issuer, client.metadata, { skipUserinfo: true });
    expect(await registrationTokensOf(client.metadata.client_id)).toBe(1);
    const deleted = await call('DELETE', `${M}/clients/${client.metadata.client_id}`);
    expect(await registrationTokensOf(client.metadata.client_id)).toBe(0);
    expect(await registrationTokensOf(neighbour.metadata.client_id)).toBe(1);
    expect((await manage(String(neighbour.metadata.registration_client_uri), 'GET', String(neighbour.metadata.registration_access_token))).status).toBe(200);
    expect([deleted.status, deleted.body]).toEqual([200, { client_id: client.metadata.client_id, deleted: true, revoked_grants: 1, revoked_tokens: expect.any(Number) }]);
    expect((await call('GET', `${M}/clients/${client.metadata.client_id}`)).status).toBe(404);
    expect((await call('DELETE', `${M}/clients/${client.metadata.client_id}`)).status).toBe(404);
    expect((await tokenWithSecret(client.metadata)).body.error).toBe('invalid_client');
    expect((await userinfo(flow.tokens.access_token)).status).toBe(401);
    for (const [method, path] of [['DELETE', ''], ['POST', '/disable'], ['POST', '/enable']]) {
      const refused = await call(method as string, `${M}/clients/static-rp${path as string}`);
      expect([refused.status, refused.body.error]).toEqual([409, 'static_client']);
    }
    expect(audits('clients.delete').some((a) => a.client_id === client.metadata.client_id && a.outcome === 'done' && a.revoked_grants === 1)).toBe(true);
    expect(audits('clients.delete').some((a) => a.client_id === 'static-rp' && a.outcome === 'static_client')).toBe(true);
  });

  it('lists pending invitations by an id that is not the token, with their expiry, and revokes one', async () => {
    const issued = await Promise.all(Array.from({ length: 3 }, () => issueInitialAccessToken(running.app.svc.provider)));
    const used = await issueInitialAccessToken(running.app.svc.provider);
    expect((await register(running, { redirect_uris: ['https://rp.example/cb'] }, used.token)).status).toBe(201);
    const invitations: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    do {
      const page = await call('GET', `${M}/invitations?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      invitations.push(...(page.body.invitations as Record<string, unknown>[]));
      cursor = page.body.next_cursor as string | undefined;
      for (const t of [...issued, used]) expect(JSON.stringify(page.body)).not.toContain(t.token);
    } while (cursor);
    const listed = new Map(invitations.map((i) => [String(i.id), i]));
    for (const i of invitations) expect(i.id).toMatch(/^inv_[A-Za-z0-9_-]{43}$/);
    const now = Math.floor(Date.now() / 1000);
    for (const t of issued) {
      const entry = listed.get(`inv_${refOf(t.token)}`);
      expect(entry).toMatchObject({ expires_at: t.expiresAt, issued_at: expect.any(Number) });
      expect(Number(entry?.expires_at) - now).toBeGreaterThan(172_700);
    }
    expect(listed.has(`inv_${refOf(used.token)}`)).toBe(false);

    const target = issued[0] as { token: string };
    const id = `inv_${refOf(target.token)}`;
    const answer = await call('DELETE', `${M}/invitations/${id}`);
    expect([answer.status, answer.body]).toEqual([200, { id, revoked: true }]);
    const refused = await register(running, { redirect_uris: ['https://rp.example/cb'] }, target.token);
    expect([refused.status, refused.body.error]).toEqual([401, 'invalid_token']);
    expect((await call('DELETE', `${M}/invitations/${id}`)).status).toBe(404);
    expect((await register(running, { redirect_uris: ['https://rp.example/cb'] }, (issued[1] as { token: string }).token)).status).toBe(201);
    expect(audits('invitations.revoke').filter((a) => a.invitation === id).map((a) => a.outcome)).toEqual(['done', 'not_found']);
    const pasted = await call('DELETE', `${M}/invitations/${(issued[2] as { token: string }).token}`);
    expect([pasted.status, pasted.body.error]).toEqual([400, 'invalid_request']);
    for (const t of issued) expect(lines.join('\n')).not.toContain(t.token);
  });

  it("revokes a person's sessions and grants by sub, logging only a keyed hash of it", async () => {
    const a = await registerClient(running, 'plain');
    const b = await registerClient(running, 'plain');
    const flows = [await runCodeFlow(running.issuer, a.metadata, { skipUserinfo: true }), await runCodeFlow(running.issuer, b.metadata, { skipUserinfo: true })];
    const someoneElse = await runCodeFlow(running.issuer, a.metadata, { skipUserinfo: true, login: 'demo-basic', password: 'demo-basic' });
    // The account id: both clients are pairwise (the default) and received subs of their own.
    const sub = 'demo-0001';
    expect(flows.map((f) => f.claims.sub)).not.toContain(sub);
    const revoked = await call('POST', `${M}/subjects/revoke`, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `sub=${encodeURIComponent(sub)}` });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_sessions).toBeGreaterThanOrEqual(2);
    expect(revoked.body.revoked_grants).toBeGreaterThanOrEqual(2);
    for (const flow of flows) expect((await userinfo(flow.tokens.access_token)).status).toBe(401);
    expect((await userinfo(someoneElse.tokens.access_token)).status).toBe(200);
    const events = audits('subjects.revoke');
    expect(events.at(-1)).toMatchObject({ user: USER, outcome: 'done', sub_hash: subjectHash(sub, running.app.svc.cookieKeys[0] as string) });
    expect(JSON.stringify(events)).not.toContain(sub);
    expect((await call('POST', `${M}/subjects/revoke`)).body).toEqual({ error: 'invalid_request', error_description: 'the sub parameter is required' });
    expect((await call('POST', `${M}/subjects/revoke?sub=x&sub=y`)).body.error_description).toBe('give the sub parameter once');
    expect((await call('POST', `${M}/subjects/revoke?sub=${'x'.repeat(256)}`)).body.error_description).toBe('the sub parameter is longer than 255 characters');
  });

  it("revokes by the sub a client received (client_id): a pairwise sub finds its person, and only in that client's sector", async () => {
    const a = await registerClient(running, 'plain', { redirect_uris: ['https://sector-a.example/cb'] });
    const b = await registerClient(running, 'plain', { redirect_uris: ['https://sector-b.example/cb'] });
    const flowA = await runCodeFlow(running.issuer, a.metadata, { skipUserinfo: true });
    const flowB = await runCodeFlow(running.issuer, b.metadata, { skipUserinfo: true });
    const someoneElse = await runCodeFlow(running.issuer, a.metadata, { skipUserinfo: true, login: 'demo-basic', password: 'demo-basic' });
    const revoke = (sub: string, clientId: string): Promise<{ status: number; body: Record<string, unknown> }> =>
      call('POST', `${M}/subjects/revoke`, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ sub, client_id: clientId }).toString() });
    // A's pairwise sub means nobody in B's sector.
    expect((await revoke(flowA.claims.sub, String(b.metadata.client_id))).body).toMatchObject({ revoked_sessions: 0, revoked_grants: 0 });
    expect((await userinfo(flowA.tokens.access_token)).status).toBe(200);
    const revoked = await revoke(flowA.claims.sub, String(a.metadata.client_id));
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_grants).toBeGreaterThanOrEqual(2);
    for (const flow of [flowA, flowB]) expect((await userinfo(flow.tokens.access_token)).status).toBe(401);
    expect((await userinfo(someoneElse.tokens.access_token)).status).toBe(200);
    expect(audits('subjects.revoke').at(-1)).toMatchObject({ outcome: 'done', client_id: a.metadata.client_id, sub_hash: subjectHash(flowA.claims.sub, running.app.svc.cookieKeys[0] as string) });
    expect(JSON.stringify(audits('subjects.revoke'))).not.toContain(flowA.claims.sub);
    expect((await revoke(flowA.claims.sub, 'no-such-client')).status).toBe(404);
    expect((await call('POST', `${M}/subjects/revoke?sub=x&client_id=a&client_id=b`)).body.error_description).toBe('give the client_id parameter once');
  });

  it('revokes by the sub of a client stored without subject_type (registered before pairwise subjects): its account id, as oidc-provider gives it', async () => {
    const client = await registerClient(running, 'plain', { redirect_uris: ['https://legacy.example/cb'], subject_type: 'public' });
    const clientId = String(client.metadata.client_id);
    const clients = running.app.svc.store.adapter('Client');
    const { subject_type: _type, ...legacy } = (await clients.find(clientId)) as Record<string, unknown>;
    // Clients are stored without expiry.
    await clients.upsert(clientId, legacy, undefined);
    const flow = await runCodeFlow(running.issuer, client.metadata, { skipUserinfo: true });
    expect(flow.claims.sub).toBe('demo-0001');
    const revoked = await call('POST', `${M}/subjects/revoke`, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ sub: flow.claims.sub, client_id: clientId }).toString() });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_grants).toBeGreaterThanOrEqual(1);
    expect((await userinfo(flow.tokens.access_token)).status).toBe(401);
  });

  it('refuses bad paging parameters and cursors it did not hand out', async () => {
    for (const query of ['limit=0', 'limit=501', 'limit=abc', 'limit=1&limit=2', 'limit=-1', 'cursor=a&cursor=b']) {
      const answer = await call('GET', `${M}/clients?${query}`);
      expect([answer.status, answer.body.error]).toEqual([400, 'invalid_request']);
    }
    for (const path of ['clients', 'invitations']) {
      const answer = await call('GET', `${M}/${path}?cursor=${Buffer.from('{"n":"x","c":"0","p":[]}').toString('base64url')}`);
      expect([answer.status, answer.body.error]).toEqual([400, 'invalid_request']);
    }
  });

  const ACTIONS: [string, string][] = [
    ['GET', '/clients'],
    ['GET', '/clients/static-rp'],
    ['DELETE', '/clients/static-rp'],
    ['POST', '/clients/static-rp/disable'],
    ['POST', '/clients/static-rp/enable'],
    ['POST', '/clients/static-rp/revoke-grants'],
    ['GET', '/invitations'],
    ['DELETE', `/invitations/inv_${'a'.repeat(43)}`],
    ['POST', '/subjects/revoke?sub=demo-basic'],
  ];

  it('refuses every action without credentials (401), with wrong ones (401), from another site (403) and with another method (405), under every spelling the router serves', async () => {
    for (const [method, path] of ACTIONS) {
      const [route, query = ''] = path.split('?');
      for (const spelling of [route, (route as string).toUpperCase(), `${route as string}/`]) {
        const url = `${M}${spelling as string}${query ? `?${query}` : ''}`;
        const none = await call(method, url, { auth: null });
        expect([method, url, none.status, none.body.error]).toEqual([method, url, 401, 'unauthorized']);
        expect(none.headers.get('www-authenticate')).toBe('Basic realm="svc-connect management", charset="UTF-8"');
        expect((await call(method, url, { auth: `Basic ${Buffer.from(`${USER}:wrong`).toString('base64')}` })).status).toBe(401);
        for (const site of [{ 'sec-fetch-site': 'cross-site' }, { origin: 'https://evil.example' }, { origin: 'null' }, { referer: 'https://evil.example/x' }] as Record<string, string>[]) {
          const refused = await call(method, url, { headers: site });
          expect([url, refused.status, refused.body.error]).toEqual([url, 403, 'cross_site_request']);
        }
        const wrongMethod = await call(method === 'GET' ? 'PUT' : 'PATCH', url);
        expect([url, wrongMethod.status]).toEqual([url, 405]);
      }
      // Spellings the management router does not serve are not served at all.
      for (const other of [`/oidc/v1/MANAGEMENT${path}`, `/oidc/v1//management${path}`, `${M}${path.replace('/c', '/%63').replace('/i', '/%69').replace('/s', '/%73')}`]) {
        expect([other, (await call(method, other, { auth: null })).status]).toEqual([other, 404]);
      }
    }
    const head = await call('HEAD', `${M}/clients`, { auth: null });
    expect(head.status).toBe(401);
    expect((await call('HEAD', `${M}/clients`)).status).toBe(200);
  });

  it('counts failed toolbox logins in the same lockout as invitations', async () => {
    const from = '203.0.113.77';
    for (let i = 0; i < 3; i += 1) expect((await call('GET', `${M}/clients`, { auth: `Basic ${Buffer.from(`${USER}:guess-${i}`).toString('base64')}`, from })).status).toBe(401);
    expect((await call('GET', `${M}/invite_client?email=a%40example.com`, { from })).status).toBe(429);
    expect((await call('POST', `${M}/subjects/revoke?sub=demo`, { from })).status).toBe(429);
  });

  it('logs a client id once it names a client: a token pasted where a client id belongs answers 404 and stays out of the log', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const from = lines.length;
    const answers = [
      await call('GET', `${M}/clients/${token}`),
      await call('POST', `${M}/clients/${token}/disable`),
      await call('DELETE', `${M}/clients/${token}`),
      await call('POST', `${M}/subjects/revoke?sub=someone&client_id=${token}`),
    ];
    expect(answers.map((a) => [a.status, a.body.error])).toEqual(Array.from({ length: 4 }, () => [404, 'not_found']));
    expect(lines.slice(from).join('\n')).not.toContain(token);
    // Nor in the answer: an error message travels on (the CLI's stderr, a CI log, a proxy logging error bodies).
    expect(JSON.stringify(answers.map((a) => a.body))).not.toContain(token);
    const shown = await call('GET', `${M}/clients/${encodeURIComponent(String(STATIC.client_id))}`);
    expect(shown.status).toBe(200);
    expect(audits('clients.show').at(-1)).toMatchObject({ client_id: STATIC.client_id, outcome: 'done' });
  });

  it('writes one management_audit line per action, with no secret, token or claim value', async () => {
    // Its own actions, one per toolbox route (the test runs alone and in any order).
    const from = lines.length;
    const client = await registerClient(running, 'plain');
    const id = encodeURIComponent(client.metadata.client_id);
    const answers = [
      await call('GET', `${M}/clients?limit=2`),
      await call('GET', `${M}/clients/${id}`),
      await call('POST', `${M}/clients/${id}/disable`),
      await call('POST', `${M}/clients/${id}/enable`),
      await call('POST', `${M}/clients/${id}/revoke-grants`),
      await call('DELETE', `${M}/clients/${id}`),
      await call('GET', `${M}/invitations`),
      await call('DELETE', `${M}/invitations/inv_${'A'.repeat(43)}`),
      await call('POST', `${M}/subjects/revoke?sub=someone`),
      await call('GET', `${M}/invite_client`),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 404, 200, 400]);
    const mine = lines.slice(from);
    const audit = mine.filter((l) => l.includes('"e":"management_audit"'));
    expect(audit.map((l) => (JSON.parse(l) as Record<string, unknown>).action)).toEqual([
      'clients.list', 'clients.show', 'clients.disable', 'clients.enable', 'clients.revoke_grants', 'clients.delete', 'invitations.list', 'invitations.revoke', 'subjects.revoke',
    ]);
    for (const line of audit) {
      const event = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(event).every((k) => ['e', 'request_id', 'user', 'action', 'outcome', 'client_id', 'invitation', 'sub_hash', 'count', 'changed', 'revoked_grants', 'revoked_tokens', 'revoked_sessions'].includes(k))).toBe(true);
      expect(line).not.toContain(PASSWORD);
      expect(line).not.toContain(String(STATIC.client_secret));
    }
    // Request lines name route templates: no client id, invitation id or sub from a path.
    const routes = new Set(mine.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'request' && String(l.route).includes('/management/')).map((l) => l.route));
    expect([...routes].sort()).toEqual([
      '/oidc/v1/management/clients',
      '/oidc/v1/management/clients/:client_id',
      '/oidc/v1/management/clients/:client_id/disable',
      '/oidc/v1/management/clients/:client_id/enable',
      '/oidc/v1/management/clients/:client_id/revoke-grants',
      '/oidc/v1/management/invitations',
      '/oidc/v1/management/invitations/:id',
      '/oidc/v1/management/invite_client',
      '/oidc/v1/management/subjects/revoke',
    ]);
  });
});

describe('deleting a client while an RFC 7592 read of it rotates its registration access token', () => {
  /** The next write of a registration access token, held when the test asks. */
  const write = heldCall();
  const running = appPerSuite(() => {
    const store = withAdapter(createMemoryStore(), 'RegistrationAccessToken', (adapter) => ({
      upsert: async (id, payload, expiresIn) => {
        await write.pass();
        return adapter.upsert(id, payload, expiresIn);
      },
    }));
    return { store, properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true } };
  });
  const call = managementCalls(running, AUTH);
  const hold = write.hold;
  const registrationTokensOf = async (clientId: unknown): Promise<number> =>
    (await running.app.svc.store.inventory?.list('RegistrationAccessToken', { limit: 500 }))?.records.filter((r) => r.payload.clientId === clientId).length ?? -1;

  it('attack: the read\'s next token, written after the delete removed the client\'s tokens, is not left in the store', async () => {
    const client = await registerClient(running, 'plain');
    const gate = hold();
    const read = manage(String(client.metadata.registration_client_uri), 'GET', String(client.metadata.registration_access_token));
    await gate.arrived;
    const deleted = await call('DELETE', `/oidc/v1/management/clients/${String(client.metadata.client_id)}`);
    expect([deleted.status, deleted.body.deleted]).toEqual([200, true]);
    gate.release();
    const answered = await read;
    expect([answered.status, answered.body.error, answered.body.registration_access_token]).toEqual([401, 'invalid_token', undefined]);
    expect(await registrationTokensOf(client.metadata.client_id)).toBe(0);
  });

  it('honest: a read held as long, of a client nobody deletes, answers its next token, the only one stored', async () => {
    const client = await registerClient(running, 'plain');
    const gate = hold();
    const read = manage(String(client.metadata.registration_client_uri), 'GET', String(client.metadata.registration_access_token));
    await gate.arrived;
    gate.release();
    const answered = await read;
    expect([answered.status, typeof answered.body.registration_access_token]).toEqual([200, 'string']);
    expect(await registrationTokensOf(client.metadata.client_id)).toBe(1);
    const again = await manage(String(client.metadata.registration_client_uri), 'GET', String(answered.body.registration_access_token));
    expect(again.status).toBe(200);
  });
});

describe('revoking a person while a request of her session is in flight', () => {
  const rp = confidentialClient();
  /** The next account lookup (oidc-provider's, after it read the session), held when the test asks. */
  const lookup = heldCall();
  const running = appPerSuite({
    clients: [rp],
    authenticator: accountsHeldAt(lookup),
    properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true },
  });
  const call = managementCalls(running, AUTH);
  const url = (params: Record<string, string> = {}): string => codeFlowUrl(running.issuer, rp, { state: 'st', ...params });
  const revoke = async (sub: string): Promise<HttpResult> => call('POST', '/oidc/v1/management/subjects/revoke', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ sub }).toString() });
  /** Sends `request` and revokes `sub` while the request waits after reading the session; what the request answered. */
  const revokedDuring = async <T>(request: () => Promise<T>, sub = 'demo-0001'): Promise<[T, HttpResult]> => {
    const { arrived, release } = lookup.hold();
    const answer = request();
    await arrived;
    const revoked = await revoke(sub);
    release();
    return [await answer, revoked];
  };
  const silent = async (browser: FormBrowser): Promise<string> => {
    const step = await browser.follow(url({ prompt: 'none' }), running.baseUrl);
    return step.leftTo ? (redirectParams(step.leftTo).get('error') ?? 'code') : `status ${step.response?.status}`;
  };

  it('attack: a silent authorization in flight writes her session back when it ends: the session signs nobody in and leaves the store when next read', async () => {
    const { browser } = await signIn(url());
    const [, revoked] = await revokedDuring(() => browser.follow(url({ prompt: 'none' }), running.baseUrl));
    expect(revoked.body.revoked_sessions).toBe(1);
    expect(await silent(browser)).toBe('login_required');
    expect(await sessionsOf(running, 'demo-0001')).toBe(0);
  });

  it('attack: an authorization resumed after her consent, in flight, writes her session back under a new id: it signs nobody in', async () => {
    const browser = new FormBrowser();
    await browser.follow(url({ prompt: 'consent' }), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    const [, revoked] = await revokedDuring(() => browser.submit('consent-allow', {}, running.baseUrl));
    expect(revoked.body.revoked_sessions).toBe(1);
    expect(await silent(browser)).toBe('login_required');
    await browser.follow(url(), running.baseUrl);
    expect(browser.lastPage).toContain('id="login-form"');
    expect(await sessionsOf(running, 'demo-0001')).toBe(0);
  });

  it('honest: she signs in again at once after her revocation and stays signed in; another person revoked while her request is in flight leaves her signed in', async () => {
    const { browser } = await signIn(url());
    expect((await revoke('demo-0001')).body.revoked_sessions).toBe(1);
    await signIn(url(), { browser });
    expect(await silent(browser)).toBe('code');
    const other = await signIn(url(), { login: 'demo-basic', password: 'demo-basic' });
    const [inFlight, revoked] = await revokedDuring(() => browser.follow(url({ prompt: 'none' }), running.baseUrl), 'demo-0002');
    expect([revoked.body.revoked_sessions, redirectParams(String(inFlight.leftTo)).get('code')]).toEqual([1, expect.any(String)]);
    expect({ hers: await silent(browser), his: await silent(other.browser), sessions: await sessionsOf(running, 'demo-0001') }).toEqual({ hers: 'code', his: 'login_required', sessions: 1 });
  });
});

describe('disabling a client while the operator deletes it', () => {
  /** The next read of a disabling mark (the disable's own, after it found the client), held when the test asks. */
  const read = heldCall();
  const running = appPerSuite(() => {
    const store = withAdapter(createMemoryStore(), 'ClientSuspension', (adapter) => ({
      find: async (id) => {
        await read.pass();
        return adapter.find(id);
      },
    }));
    return { store, properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true } };
  });
  const call = managementCalls(running, AUTH);
  const M = '/oidc/v1/management';
  const markOf = async (clientId: string): Promise<unknown> => running.app.svc.store.adapter('ClientSuspension').find(clientId);

  it('attack: a disable that found the client before the delete removed it leaves no mark of a client that is gone, and answers 404', async () => {
    const id = String((await registerClient(running, 'plain')).metadata.client_id);
    const gate = read.hold();
    const disabling = call('POST', `${M}/clients/${id}/disable`);
    await gate.arrived;
    const deleted = await call('DELETE', `${M}/clients/${id}`);
    expect([deleted.status, deleted.body.deleted]).toEqual([200, true]);
    gate.release();
    const disabled = await disabling;
    expect([disabled.status, disabled.body.error]).toEqual([404, 'not_found']);
    expect(await markOf(id)).toBeUndefined();
  });

  it('honest: a disable held as long, of a client nobody deletes, disables it', async () => {
    const client = await registerClient(running, 'plain');
    const id = String(client.metadata.client_id);
    const gate = read.hold();
    const disabling = call('POST', `${M}/clients/${id}/disable`);
    await gate.arrived;
    gate.release();
    expect((await disabling).body).toEqual({ client_id: id, disabled: true, changed: true });
    expect(await markOf(id)).toMatchObject({ disabled_by: USER });
    expect((await call('GET', `${M}/clients/${id}`)).body).toMatchObject({ disabled: true, disabled_by: USER });
  });
});

describe('disabling a client whose delete failed part-way', () => {
  /** Whether the next removal of a client record fails as a store outage does. */
  let failClientRemoval = false;
  const running = appPerSuite(() => {
    const store = withAdapter(createMemoryStore(), 'Client', (adapter) => ({
      destroy: async (id) => {
        if (failClientRemoval) {
          failClientRemoval = false;
          throw new StoreUnavailableError();
        }
        return adapter.destroy(id);
      },
    }));
    return { store, properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true } };
  });
  const call = managementCalls(running, AUTH);
  const M = '/oidc/v1/management';

  /** A client's token request with its secret (a made-up code): `invalid_grant` once it authenticates, `invalid_client` when refused. */
  const tokenError = async (client: ClientMetadata): Promise<unknown> => {
    const response = await fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${String(client.client_secret)}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&code=nope&redirect_uri=${encodeURIComponent(String(client.redirect_uris?.[0]))}&code_verifier=${'v'.repeat(43)}`,
    });
    return ((await response.json()) as { error?: unknown }).error;
  };

  it('honest: the operator disables a client her delete failed to remove (503): it is disabled and stays refused once the deletion mark expires, not answered 404 "no client" while it stays stored', async () => {
    const { metadata } = await registerClient(running, 'plain');
    const id = String(metadata.client_id);
    failClientRemoval = true;
    const deleted = await call('DELETE', `${M}/clients/${id}`);
    expect([deleted.status, deleted.body.error]).toEqual([503, 'server_error']);
    expect((await call('GET', `${M}/clients/${id}`)).status).toBe(200);
    const disabled = await call('POST', `${M}/clients/${id}/disable`);
    expect([disabled.status, disabled.body]).toEqual([200, { client_id: id, disabled: true, changed: true }]);
    // The deletion mark expires after a day; the client, never removed, is still refused.
    await running.app.svc.store.adapter('ClientDeletion').destroy(id);
    expect({ shown: (await call('GET', `${M}/clients/${id}`)).body, token: await tokenError(metadata) }).toEqual({ shown: expect.objectContaining({ disabled: true, disabled_by: USER }), token: 'invalid_client' });
    // Her delete, tried again, removes the client and its mark.
    expect((await call('DELETE', `${M}/clients/${id}`)).status).toBe(200);
    expect(await running.app.svc.store.adapter('ClientSuspension').find(id)).toBeUndefined();
  });
});

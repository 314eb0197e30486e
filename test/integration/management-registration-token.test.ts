import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import { createMemoryStore } from '../../adapters/memory.js';
import type { SvcStore } from '../../adapters/store.js';
import { StoreUnavailableError } from '../../lib/errors.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { runCli } from '../helpers/cli.js';
import { capturingLogger } from '../helpers/logs.js';
import { managementCalls } from '../helpers/management-calls.js';
import { encryptionKey, isUnspent, manage, register, startKeySetServer, type HttpResult, type KeySetServer } from '../helpers/registration.js';
import { describeEachStore } from '../helpers/stores.js';
import { withAdapter } from '../helpers/store-with-adapter.js';
import { appPerSuite } from '../helpers/suite-app.js';

/*
 * A dynamically registered client that lost its registration access token (the process died between claiming it and
 * settling the request, or the relying party lost it) could never manage its registration again. The operator issues it
 * a new one: shown once, every earlier token of the client dead at once, never for a static client.
 */

const USER = 'operator';
const PASSWORD = 'reissue-password-1234';
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const STATIC: ClientMetadata = { client_id: 'static-rp', client_secret: 'static-rp-secret-that-is-long-enough-0123', redirect_uris: ['https://static.example/cb'] };
const REDIRECT = 'https://rp.example/cb';
const M = '/oidc/v1/management';

describeEachStore('a new registration access token from the operator (toolbox)', (_kind, storeProperties) => {
  const { logger, lines } = capturingLogger();
  const running = appPerSuite(() => ({
    logger,
    clients: [STATIC],
    properties: { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.fetch.allow-private-network': true, ...storeProperties() },
  }));
  const call = managementCalls(running, AUTH);
  let keys: KeySetServer;

  beforeAll(async () => {
    keys = await startKeySetServer();
    keys.sets.set('/rp', [(await encryptionKey('RSA-OAEP-256')).jwk]);
  });
  afterAll(async () => {
    await keys.close();
  });

  const registered = async (): Promise<{ id: string; uri: string; token: string }> => {
    const res = await register(running, { redirect_uris: [REDIRECT], client_name: 'before', id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: `${keys.url}/rp` }, (await issueInitialAccessToken(running.app.svc.provider)).token);
    return { id: String(res.body.client_id), uri: String(res.body.registration_client_uri), token: String(res.body.registration_access_token) };
  };
  const reissue = (clientId: string): Promise<HttpResult> => call('POST', `${M}/clients/${encodeURIComponent(clientId)}/registration-access-token`);
  const update = (client: { id: string; uri: string }, token: string, name: string): Promise<HttpResult> =>
    manage(client.uri, 'PUT', token, { client_id: client.id, redirect_uris: [REDIRECT], client_name: name, id_token_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: `${keys.url}/rp` });
  const audits = (): Record<string, unknown>[] =>
    lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'management_audit' && l.action === 'clients.registration_access_token');
  const storedName = async (clientId: string): Promise<unknown> => (await running.app.svc.store.adapter('Client').find(clientId))?.client_name;

  it('honest: a client whose token was claimed and never settled (the process died) is locked out; the new token reads and updates it, and rotates as any other', async () => {
    const client = await registered();
    await running.app.svc.store.adapter('RegistrationAccessToken').consume(client.token);
    expect((await manage(client.uri, 'GET', client.token)).body.error).toBe('invalid_token');

    const issued = await reissue(client.id);
    expect([issued.status, issued.headers.get('cache-control'), Object.keys(issued.body).sort()]).toEqual([200, 'no-store', ['client_id', 'registration_access_token']]);
    expect(issued.body.client_id).toBe(client.id);
    const fresh = String(issued.body.registration_access_token);
    const read = await manage(client.uri, 'GET', fresh);
    expect([read.status, read.body.client_id]).toEqual([200, client.id]);
    const put = await update(client, String(read.body.registration_access_token), 'after');
    expect([put.status, put.body.client_name]).toEqual([200, 'after']);
    expect((await manage(client.uri, 'GET', String(put.body.registration_access_token))).status).toBe(200);
    for (const spent of [client.token, fresh, read.body.registration_access_token]) expect((await manage(client.uri, 'GET', String(spent))).status).toBe(401);

    // Shown once: in no log line; stored as the others are (named by its hash, no jti).
    expect(lines.join('\n')).not.toContain(fresh);
    const records = (await running.app.svc.store.inventory?.list('RegistrationAccessToken', { limit: 500 }))?.records ?? [];
    expect(JSON.stringify(records)).not.toContain(fresh);
    expect(audits()).toContainEqual(expect.objectContaining({ user: USER, client_id: client.id, outcome: 'done' }));
  });

  it('attack: every earlier token of the client is dead at once, the live one and one of a reissue before; nothing else of it changes', async () => {
    const client = await registered();
    const first = String((await reissue(client.id)).body.registration_access_token);
    const second = String((await reissue(client.id)).body.registration_access_token);
    for (const dead of [client.token, first]) expect((await manage(client.uri, 'GET', dead)).body.error).toBe('invalid_token');
    expect((await update(client, client.token, 'by the old token')).status).toBe(401);
    expect(await storedName(client.id)).toBe('before');
    expect((await manage(client.uri, 'GET', second)).status).toBe(200);
  });

  it('attack: an update presenting the old token, in flight (waiting on its jwks_uri) as the new token is issued, is refused and undone: one live token after', async () => {
    const client = await registered();
    const held = keys.hold('/rp');
    const inFlight = update(client, client.token, 'by the old token');
    await held.arrived;
    const fresh = String((await reissue(client.id)).body.registration_access_token);
    held.release();
    const put = await inFlight;
    expect([put.status, put.body.error, put.body.error_description]).toEqual([401, 'invalid_token', 'a new registration access token was issued to the client while the request was served']);
    expect(await storedName(client.id)).toBe('before');
    expect((await manage(client.uri, 'GET', client.token)).status).toBe(401);
    expect((await manage(client.uri, 'GET', fresh)).status).toBe(200);
  });

  it('attack: an update and a reissue sent together, ten times: whichever the store takes first, only the new token works after', async () => {
    for (let i = 0; i < 10; i += 1) {
      const client = await registered();
      const [put, issued] = await Promise.all([update(client, client.token, `race ${i}`), reissue(client.id)]);
      expect(issued.status).toBe(200);
      const answered = [client.token, ...(put.status === 200 ? [String(put.body.registration_access_token)] : [])];
      for (const dead of answered) expect([i, (await manage(client.uri, 'GET', dead)).status]).toEqual([i, 401]);
      expect([i, (await manage(client.uri, 'GET', String(issued.body.registration_access_token))).status]).toEqual([i, 200]);
    }
  });

  it('refuses a static client (409 static_client) and an unknown one (404, its id in no log line), writing nothing; GET is 405', async () => {
    const before = (await running.app.svc.store.inventory?.list('RegistrationAccessToken', { limit: 500 }))?.records.length;
    const statik = await reissue('static-rp');
    expect([statik.status, statik.body.error]).toEqual([409, 'static_client']);
    const unknown = await reissue('no-such-client-0123456789');
    expect([unknown.status, unknown.body.error]).toEqual([404, 'not_found']);
    expect((await running.app.svc.store.inventory?.list('RegistrationAccessToken', { limit: 500 }))?.records.length).toBe(before);
    expect(audits()).toEqual(expect.arrayContaining([expect.objectContaining({ client_id: 'static-rp', outcome: 'static_client' }), expect.objectContaining({ outcome: 'not_found' })]));
    expect(lines.join('\n')).not.toContain('no-such-client-0123456789');
    expect((await call('GET', `${M}/clients/static-rp/registration-access-token`)).status).toBe(405);
  });

  it('honest: a disabled client may be given one: refused 403 while disabled (the token kept), it works once enabled', async () => {
    const client = await registered();
    await call('POST', `${M}/clients/${client.id}/disable`);
    const fresh = String((await reissue(client.id)).body.registration_access_token);
    expect((await manage(client.uri, 'GET', fresh)).body.error).toBe('client_disabled');
    await call('POST', `${M}/clients/${client.id}/enable`);
    expect((await manage(client.uri, 'GET', fresh)).status).toBe(200);
  });

  it('a deleted client is given none (404), and its delete leaves no mark of a reissue behind', async () => {
    const client = await registered();
    await reissue(client.id);
    expect((await call('DELETE', `${M}/clients/${client.id}`)).status).toBe(200);
    expect((await reissue(client.id)).status).toBe(404);
    expect(await running.app.svc.store.adapter('RegistrationAccessTokenReissue').find(client.id)).toBeUndefined();
    const tokens = (await running.app.svc.store.inventory?.list('RegistrationAccessToken', { limit: 500 }))?.records ?? [];
    expect(tokens.filter((r) => r.payload.clientId === client.id)).toEqual([]);
  });

  it('svc-connect clients registration-token prints the token alone (a note on stderr); a static client exits 1', async () => {
    const client = await registered();
    const env = { SVC_MANAGEMENT_PASSWORD: PASSWORD, SVC_MANAGEMENT_USER: USER, SVC_BASE_URL: running.baseUrl };
    const run = await runCli(['clients', 'registration-token', client.id], env);
    expect([run.code, run.stdout]).toEqual([0, expect.stringMatching(/^[A-Za-z0-9_-]{43}\n$/)]);
    expect(run.stderr).toContain(`client ${client.id}`);
    expect((await manage(client.uri, 'GET', run.stdout.trim())).status).toBe(200);
    expect((await manage(client.uri, 'GET', client.token)).status).toBe(401);
    const statik = await runCli(['clients', 'registration-token', 'static-rp'], env);
    expect([statik.code, statik.stderr]).toEqual([1, expect.stringContaining('HTTP 409 static_client')]);
  });
}, ['memory', 'redis standalone']);

describe('the store failing as a read or update of a registration checks its token against the reissue mark, once served', () => {
  /** Reads of the reissue mark (or of an initial access token) still to pass before one fails (0: none fails). */
  let passing = 0;
  const failing = (model: string) => (store: SvcStore): SvcStore =>
    withAdapter(store, model, (adapter) => ({
      find: async (id) => {
        if (passing > 0 && --passing === 0) throw new StoreUnavailableError({ cause: new Error('injected') });
        return adapter.find(id);
      },
    }));
  const running = appPerSuite(() => ({ store: failing('InitialAccessToken')(failing('RegistrationAccessTokenReissue')(createMemoryStore())) }));
  const metadata = { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'before' };

  it('honest: the 503 changed nothing, and the same token is sent again and served (registration.md: "send it again with the same token")', async () => {
    for (const method of ['PUT', 'GET'] as const) {
      const res = await register(running, metadata, (await issueInitialAccessToken(running.app.svc.provider)).token);
      const [id, uri, token] = [String(res.body.client_id), String(res.body.registration_client_uri), String(res.body.registration_access_token)];
      // The first read (the token's lookup) passes; the second, once the request was served, fails.
      passing = 2;
      const failed = await manage(uri, method, token, method === 'PUT' ? { client_id: id, ...metadata, client_name: 'after' } : undefined);
      passing = 0;
      expect([method, failed.status, failed.body.error, failed.body.registration_access_token]).toEqual([method, 503, 'server_error', undefined]);
      expect((await running.app.svc.store.adapter('Client').find(id))?.client_name).toBe('before');
      const again = await manage(uri, method, token, method === 'PUT' ? { client_id: id, ...metadata, client_name: 'after' } : undefined);
      expect([method, again.status]).toEqual([method, 200]);
    }
  });

  it('honest: so is a registration whose initial access token cannot be checked once served (revoked meanwhile?): no client, the token unspent', async () => {
    const token = (await issueInitialAccessToken(running.app.svc.provider)).token;
    const before = (await running.app.svc.store.inventory?.list('Client', { limit: 500 }))?.records.length;
    passing = 2;
    const failed = await register(running, metadata, token);
    passing = 0;
    expect([failed.status, failed.body.error]).toEqual([503, 'server_error']);
    expect([(await running.app.svc.store.inventory?.list('Client', { limit: 500 }))?.records.length, await isUnspent(running, token)]).toEqual([before, true]);
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { encryptionKey, isUnspent, manage, register, startKeySetServer, type KeySetServer } from '../helpers/registration.js';

const REDIRECT = 'https://rp.example/cb';

/**
 * A relying party that stops waiting (its HTTP client's timeout, a proxy's) while the provider fetches its keys never
 * receives the answer that carries its credentials: the provider must not keep what that answer announced.
 */
describe('a registration or update whose client hung up before its answer (RFC 7591, RFC 7592)', () => {
  let running: RunningApp;
  let keys: KeySetServer;
  /** The same app behind a server of the test's own: it learns when a connection closed and when a request was served. */
  let server: Server;
  let served: Promise<void>[] = [];
  let closed: Promise<void>[] = [];

  beforeAll(async () => {
    running = await startApp({ properties: { 'svc.fetch.allow-private-network': true } });
    keys = await startKeySetServer();
    keys.sets.set('/rp', [(await encryptionKey('RSA-OAEP-256')).jwk]);
    const callback = running.app.callback();
    server = createServer((req, res) => void served.push(Promise.resolve(callback(req, res)).then(() => undefined)));
    server.on('connection', (socket) => void closed.push(new Promise((resolve) => socket.once('close', () => resolve()))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await keys.close();
    await running.close();
  });

  /** Sends `init` to `path` of the test's server and hangs up once the provider fetches the key set; resolves when served. */
  const hangUpWhileKeysFetched = async (path: string, init: RequestInit): Promise<void> => {
    served = [];
    closed = [];
    const held = keys.hold('/rp');
    const aborter = new AbortController();
    const { port } = server.address() as AddressInfo;
    const sent = fetch(`http://127.0.0.1:${port}${path}`, { ...init, signal: aborter.signal }).catch(() => undefined);
    await held.arrived;
    aborter.abort();
    await sent;
    await Promise.all(closed);
    held.release();
    await Promise.all(served);
  };

  const metadata = { redirect_uris: [REDIRECT], id_token_encrypted_response_alg: 'RSA-OAEP-256' };

  it('a registration is undone and its initial access token stays usable', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const clientsBefore = (await running.app.svc.store.inventory?.list('Client', { limit: 500 }))?.records.length;
    await hangUpWhileKeysFetched('/oidc/v1/register', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...metadata, client_name: 'gave up', jwks_uri: `${keys.url}/rp` }),
    });
    expect(await isUnspent(running, token)).toBe(true);
    expect((await running.app.svc.store.inventory?.list('Client', { limit: 500 }))?.records.length).toBe(clientsBefore);
    expect((await register(running, { ...metadata, jwks_uri: `${keys.url}/rp` }, token)).status).toBe(201);
  });

  it('an update is undone and the registration access token it presented works again', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const created = await register(running, { ...metadata, client_name: 'before', jwks_uri: `${keys.url}/rp` }, token);
    const uri = created.body.registration_client_uri as string;
    const rat = created.body.registration_access_token as string;
    await hangUpWhileKeysFetched(new URL(uri).pathname, {
      method: 'PUT',
      headers: { authorization: `Bearer ${rat}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...metadata, client_id: created.body.client_id, client_name: 'after', jwks_uri: `${keys.url}/rp` }),
    });
    const read = await manage(uri, 'GET', rat);
    expect([read.status, read.body.client_name]).toEqual([200, 'before']);
  });
});

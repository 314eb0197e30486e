import { execFileSync } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import { createServer as createHttpsServer } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken, OutboundFetchError } from '../../lib/index.js';
import { fetchDocument } from '../../lib/net/fetch.js';
import { isForbiddenAddress } from '../../lib/net/addresses.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { encryptionKey, isUnspent, makeCertificateChain, register } from '../helpers/registration.js';

const TARGETS = [
  'https://127.0.0.1/keys',
  'https://[::1]/keys',
  'https://10.0.0.1/keys',
  'https://172.16.0.1/keys',
  'https://192.168.1.1/keys',
  'https://169.254.169.254/latest/meta-data/keys',
  'https://localhost/keys',
  'http://rp.example/keys',
  // IPv6 spellings of loopback and metadata addresses (issue 14, item 5), as the URL parser writes them
  'https://[::7f00:1]/keys',
  'https://[::ffff:a9fe:a9fe]/latest/meta-data/keys',
  'https://[::ffff:0:7f00:1]/keys',
  'https://[64:ff9b::a9fe:a9fe]/latest/meta-data/keys',
  'https://[2002:7f00:1::]/keys',
  'https://[2001:0:7f00:1::1]/keys',
  'https://[::]/keys',
];

describe('SSRF: jwks_uri and x5u never reach private addresses', () => {
  let running: RunningApp;
  let token: string;
  let enc: Awaited<ReturnType<typeof encryptionKey>>;
  const chain = makeCertificateChain();

  beforeAll(async () => {
    running = await startApp();
    token = (await issueInitialAccessToken(running.app.svc.provider)).token;
    enc = await encryptionKey('RSA-OAEP-256');
  });
  afterAll(async () => running.close());

  it.each(TARGETS)('refuses jwks_uri %s with invalid_client_metadata', async (url) => {
    const res = await register(running, { redirect_uris: ['https://rp.example/cb'], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: url }, token);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_client_metadata']);
    expect(res.body.error_description).toContain(`jwks_uri: ${url}`);
    expect(await isUnspent(running, token)).toBe(true);
  });

  it.each(TARGETS)('refuses x5u %s with invalid_client_metadata', async (url) => {
    const res = await register(running, { redirect_uris: ['https://rp.example/cb'], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [{ ...chain.jwk, x5u: url }] } }, token);
    expect([res.status, res.body.error]).toEqual([400, 'invalid_client_metadata']);
    expect(res.body.error_description).toContain(`x5u ${url}`);
    expect(await isUnspent(running, token)).toBe(true);
  });

  it('leaves an initial access token usable after a refusal: it then registers a client', async () => {
    const own = (await issueInitialAccessToken(running.app.svc.provider)).token;
    const refused = await register(running, { redirect_uris: ['https://rp.example/cb'], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: TARGETS[0] }, own);
    expect(refused.status).toBe(400);
    expect((await register(running, { redirect_uris: ['https://rp.example/cb'], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [enc.jwk] } }, own)).status).toBe(201);
  });
});

describe('SSRF: an https URL that redirects to a private address', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ssrf-'));
  let publicUrl = '';
  let privatePort = 0;
  let privateConnections = 0;
  let ca = '';
  const servers: { close(cb: () => void): void; closeAllConnections?: () => void }[] = [];

  beforeAll(async () => {
    // A TLS server on 127.0.0.2 stands in for a public host (the fetch is told so); 127.0.0.1 stays private.
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-subj', '/CN=127.0.0.2', '-days', '1', '-addext', 'subjectAltName=IP:127.0.0.2'], { cwd: dir, stdio: 'ignore' });
    ca = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const victim = createNetServer((socket) => {
      privateConnections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => victim.listen(0, '127.0.0.1', resolve));
    privatePort = (victim.address() as AddressInfo).port;
    const redirector = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: ca }, (req, res) => {
      res.statusCode = 302;
      const own = (redirector.address() as AddressInfo).port;
      res.setHeader('location', req.url === '/to-http' ? `http://127.0.0.2:${own}/plain` : `https://127.0.0.1:${privatePort}/latest/meta-data`);
      res.end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.2', resolve));
    publicUrl = `https://127.0.0.2:${(redirector.address() as AddressInfo).port}`;
    servers.push(victim, redirector);
  });
  afterAll(() => {
    for (const s of servers) {
      s.closeAllConnections?.();
      s.close(() => undefined);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const options = { allowPrivateNetwork: false, ca, isForbidden: (a: string) => a !== '127.0.0.2' && isForbiddenAddress(a) };

  it('refuses the redirect before connecting to the private address', async () => {
    const err = await fetchDocument(`${publicUrl}/keys`, { ...options, ca }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundFetchError);
    expect((err as Error).message).toBe(`${publicUrl}/keys: redirects to another host (127.0.0.1:${privatePort})`);
    expect(privateConnections).toBe(0);
  });

  it('refuses a same-host redirect that leaves https', async () => {
    const err = await fetchDocument(`${publicUrl}/to-http`, { ...options, ca }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundFetchError);
    expect((err as Error).message).toBe(`http://127.0.0.2:${new URL(publicUrl).port}/plain: must use https`);
    expect(privateConnections).toBe(0);
  });
});

import { request } from 'node:http';
import { connect } from 'node:net';

import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createHttpServer, createMemoryStore, MAX_REQUEST_HEAD_BYTES, type SvcStore } from '../../lib/index.js';
import { confidentialClient, startApp } from '../helpers/app.js';
import { basicAuthorization } from '../../lib/web/basic-auth.js';
import { codeFlowUrl, pkcePair, signIn } from '../helpers/flow.js';
import { appPerSuite } from '../helpers/suite-app.js';

describe('health, readiness, headers and error rendering (C2)', () => {
  const running = appPerSuite();

  it('answers /healthz with 200 {"status":"ok"}', async () => {
    const response = await fetch(`${running.baseUrl}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 200 while the store answers', async () => {
    const response = await fetch(`${running.baseUrl}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready' });
  });

  it('attack: serves /healthz and /readyz under no other spelling (letter case, a trailing slash): 404, as C2 matches them exactly', async () => {
    for (const path of ['/HEALTHZ', '/Healthz', '/healthz/', '/READYZ', '/readyz/']) {
      const response = await fetch(`${running.baseUrl}${path}`);
      expect([path, response.status, await response.json()]).toEqual([path, 404, { error: 'not_found', error_description: 'no such endpoint' }]);
    }
    // Sent as written (fetch drops a fragment): no request-target has one (RFC 9112 3.2).
    for (const path of ['/healthz#', '/readyz#x']) {
      const status = await new Promise<number | undefined>((resolve, reject) => {
        request(running.baseUrl, { path }, (res) => resolve(res.resume().statusCode)).on('error', reject).end();
      });
      expect([path, status]).toEqual([path, 404]);
    }
  });

  it('honest: a probe with a query string is served as the path it names', async () => {
    expect((await fetch(`${running.baseUrl}/healthz?probe=lb`)).status).toBe(200);
    expect((await fetch(`${running.baseUrl}/readyz?probe=lb`)).status).toBe(200);
    expect((await fetch(`${running.baseUrl}/healthz`, { method: 'HEAD' })).status).toBe(200);
  });

  it('answers /readyz with 503 JSON when the store does not answer', async () => {
    const memory = createMemoryStore();
    const failing: SvcStore = { ...memory, ping: () => Promise.reject(new Error('down')) };
    const other = await startApp({ store: failing });
    try {
      const response = await fetch(`${other.baseUrl}/readyz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as Record<string, string>;
      expect(body.error).toBe('store_unavailable');
      expect(JSON.stringify(body)).not.toContain('down');
    } finally {
      await other.close();
    }
  });

  it('sets security headers on every response', async () => {
    for (const path of ['/healthz', '/oidc/v1/.well-known/openid-configuration', '/oidc/v1/jwks']) {
      const response = await fetch(`${running.baseUrl}${path}`);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('same-origin');
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
  });

  it('renders an unknown interaction as a JSON error without internals', async () => {
    const response = await fetch(`${running.baseUrl}/oidc/v1/interaction/does-not-exist`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(400);
    const body = (await response.json()) as Record<string, string>;
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toBe('interaction session id cookie not found');
  });

  it('answers a bad token request with OAuth JSON', async () => {
    const response = await fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=authorization_code&code=x',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
  });
});

describe('request heads: what the claims budget admits in the query is read; what Node cannot read is refused as JSON (C2, C5)', () => {
  const client = confidentialClient();
  const running = appPerSuite({ claimModules: createDemoClaimModules(), clients: [client] });

  /** The largest `claims` parameter within the 8 KiB budget whose one `value` repeats `char`. */
  const claimsOfBudget = (char: string): string => {
    const of = (n: number): string => JSON.stringify({ userinfo: { email: { value: char.repeat(n) } } });
    let n = 1;
    while (Buffer.byteLength(of(n + 1)) <= 8192) n += 1;
    return of(n);
  };
  /** What the server answers to `request`, sent as is on a socket of its own. */
  const rawAnswer = (request: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const { port } = new URL(running.baseUrl);
      const socket = connect(Number(port), '127.0.0.1', () => socket.end(request));
      const chunks: Buffer[] = [];
      const answered = (): void => resolve(Buffer.concat(chunks).toString('utf8'));
      // A reset after the answer (the server closes with some of a long head unread) still leaves the answer.
      socket.on('data', (c: Buffer) => chunks.push(c)).on('end', answered).on('error', (err) => (chunks.length ? answered() : reject(err)));
    });
  const bodyOf = (answer: string): unknown => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

  it('a claims request within budget, in ASCII or percent-encoded three characters a byte (about 24 KiB), reaches the provider', async () => {
    for (const char of ['a', 'é']) {
      const claims = claimsOfBudget(char);
      const url = codeFlowUrl(running.issuer, client, { state: 'st', claims });
      const res = await fetch(url, { redirect: 'manual' });
      await res.arrayBuffer();
      expect([char, res.status]).toEqual([char, 303]);
    }
    expect(codeFlowUrl(running.issuer, client, { state: 'st', claims: claimsOfBudget('é') }).length).toBeGreaterThan(16 * 1024);
  });

  it('a head beyond MAX_REQUEST_HEAD_BYTES gets 431 and malformed HTTP 400, each as OAuth JSON with no-store and Pragma: no-cache, as every no-store answer', async () => {
    const long = await rawAnswer(`GET /oidc/v1/authorize?x=${'a'.repeat(MAX_REQUEST_HEAD_BYTES)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(long).toMatch(/^HTTP\/1\.1 431 /);
    expect(long).toMatch(/\r\ncache-control: no-store\r\npragma: no-cache\r\n/i);
    expect(bodyOf(long)).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('POST body or pushed (PAR)') });
    const malformed = await rawAnswer('GET /healthz HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(malformed).toMatch(/\r\ncache-control: no-store\r\npragma: no-cache\r\n/i);
    expect(bodyOf(malformed)).toEqual({ error: 'invalid_request', error_description: 'the request is not valid HTTP' });
  });

  /** Sends `first`, waits for its whole answer, then sends `second` on the same connection; everything the server wrote. */
  const secondOnSameConnection = (first: string, second: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const { port } = new URL(running.baseUrl);
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(first));
      let text = '';
      let sent = false;
      const done = (): void => resolve(text);
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (!sent && text.includes('{"status":"ok"}')) {
          sent = true;
          socket.write(second);
        }
      });
      socket.on('end', done).on('close', done).on('error', (err) => (text ? done() : reject(err)));
    });
  const healthz = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
  /** The answers in `text` after the first one (the health check's). */
  const afterFirst = (text: string): string => text.slice(text.indexOf('{"status":"ok"}') + '{"status":"ok"}'.length);

  // Browsers and fetch send most requests on a keep-alive connection that already carried an answer.
  it('a second request whose head is beyond MAX_REQUEST_HEAD_BYTES gets 431 as OAuth JSON, not a dropped connection', async () => {
    const text = await secondOnSameConnection(healthz, `GET /oidc/v1/authorize?x=${'a'.repeat(MAX_REQUEST_HEAD_BYTES)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const second = afterFirst(text);
    expect(second).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(second)).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('POST body or pushed (PAR)') });
  });

  it('a second request that is not valid HTTP gets 400 as OAuth JSON', async () => {
    const second = afterFirst(await secondOnSameConnection(healthz, 'GET /healthz HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n'));
    expect(second).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(second)).toEqual({ error: 'invalid_request', error_description: 'the request is not valid HTTP' });
  });

  it('honest: a response already partly written is never followed by a refusal in its middle', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let headWritten!: () => void;
    const written = new Promise<void>((resolve) => (headWritten = resolve));
    const server = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '10' });
      res.write('12345', () => headWritten());
      void held.then(() => res.end('67890'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      // The rest of the answer is held until the server has dealt with the malformed request: it closes the
      // connection, or writes something after the part already sent.
      const text = await new Promise<string>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
        let received = '';
        let partial = 0;
        socket.on('data', (chunk: Buffer) => {
          received += chunk.toString('utf8');
          if (partial && received.length > partial) resolve(received);
        });
        socket.on('close', () => resolve(received)).on('error', () => undefined);
        void written.then(() => {
          partial = received.length;
          socket.write('GET / HTTP/1.1\r\nHost x\r\n\r\n');
        });
      });
      release();
      expect(text).not.toContain('invalid_request');
      expect(text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('calls from a page (CORS): only a client\'s own redirect origins, and at /token only a public client\'s', () => {
  const spa: ClientMetadata = { client_id: 'cors-spa', token_endpoint_auth_method: 'none', redirect_uris: ['http://spa.localhost:8080/cb'] };
  const web = confidentialClient({ client_id: 'cors-web', redirect_uris: ['http://web.localhost/cb'] });
  let running: Awaited<ReturnType<typeof startApp>>;
  let notices: jest.SpiedFunction<typeof console.info>;

  beforeAll(async () => {
    notices = jest.spyOn(console, 'info');
    running = await startApp({ clients: [spa, web] });
  });
  afterAll(async () => {
    notices.mockRestore();
    await running.close();
  });

  /** A code of `client` (she signed in and allowed it) with its verifier. */
  const codeOf = async (client: ClientMetadata): Promise<{ code: string; verifier: string }> => {
    const { verifier, challenge } = pkcePair();
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, client, { code_challenge: challenge }));
    return { code: callbackUrl.searchParams.get('code') as string, verifier };
  };
  const redeem = (client: ClientMetadata, grant: { code: string; verifier: string }, origin?: string): Promise<Response> =>
    fetch(`${running.issuer}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(origin ? { origin } : {}),
        ...(client.client_secret ? { authorization: basicAuthorization(client.client_id, client.client_secret, { formEncoded: true }) } : {}),
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: grant.code, code_verifier: grant.verifier, redirect_uri: (client.redirect_uris as string[])[0] as string, ...(client.client_secret ? {} : { client_id: client.client_id }) }).toString(),
    });

  it('honest: the public client\'s page redeems its code cross-origin, after a preflight naming its origin', async () => {
    const preflight = await fetch(`${running.issuer}/token`, { method: 'OPTIONS', headers: { origin: 'http://spa.localhost:8080', 'access-control-request-method': 'POST' } });
    expect([preflight.status, preflight.headers.get('access-control-allow-origin')]).toEqual([204, 'http://spa.localhost:8080']);
    const response = await redeem(spa, await codeOf(spa), 'http://spa.localhost:8080');
    expect([response.status, response.headers.get('access-control-allow-origin')]).toEqual([200, 'http://spa.localhost:8080']);
  });

  it.each([
    ['another site', spa, 'http://evil.localhost:8080'],
    ['its host on another port', spa, 'http://spa.localhost:8081'],
    ['its host over https', spa, 'https://spa.localhost:8080'],
    ['the opaque origin of a sandboxed frame', spa, 'null'],
    ['a confidential client, even from its own redirect origin', web, 'http://web.localhost'],
  ])('attack: %s is refused invalid_request with no Access-Control-Allow-Origin, and the code stays unspent', async (_name, client, origin) => {
    const grant = await codeOf(client);
    const refused = await redeem(client, grant, origin);
    const body = (await refused.json()) as Record<string, unknown>;
    expect([refused.status, body.error, refused.headers.get('access-control-allow-origin')]).toEqual([400, 'invalid_request', null]);
    expect((await redeem(client, grant)).status).toBe(200);
  });

  it('honest: a confidential client\'s page calls UserInfo from its redirect origin; attack: another origin gets no answer it may read', async () => {
    const tokens = (await (await redeem(web, await codeOf(web))).json()) as { access_token: string };
    const call = (origin: string): Promise<Response> => fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}`, origin } });
    const own = await call('http://web.localhost');
    expect([own.status, own.headers.get('access-control-allow-origin')]).toEqual([200, 'http://web.localhost']);
    const other = await call('http://evil.localhost');
    expect([other.status, other.headers.get('access-control-allow-origin')]).toEqual([400, null]);
    expect(((await other.json()) as Record<string, unknown>).error).toBe('invalid_request');
  });

  it('oidc-provider prints no notice to the console that the CORS policy should be replaced', () => {
    expect(notices.mock.calls.flat().join('\n')).not.toContain('clientBasedCORS');
  });
});

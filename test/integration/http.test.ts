import { connect } from 'node:net';

import { describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createMemoryStore, MAX_REQUEST_HEAD_BYTES, type SvcStore } from '../../lib/index.js';
import { confidentialClient, startApp } from '../helpers/app.js';
import { codeFlowUrl } from '../helpers/flow.js';
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
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
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

  it('a head beyond MAX_REQUEST_HEAD_BYTES gets 431 and malformed HTTP 400, each as OAuth JSON with no-store', async () => {
    const long = await rawAnswer(`GET /oidc/v1/authorize?x=${'a'.repeat(MAX_REQUEST_HEAD_BYTES)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(long).toMatch(/^HTTP\/1\.1 431 /);
    expect(long).toMatch(/\r\ncache-control: no-store\r\n/i);
    expect(bodyOf(long)).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('POST body or pushed (PAR)') });
    const malformed = await rawAnswer('GET /healthz HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(bodyOf(malformed)).toEqual({ error: 'invalid_request', error_description: 'the request is not valid HTTP' });
  });
});

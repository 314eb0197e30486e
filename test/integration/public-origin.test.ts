import { request } from 'node:http';

import { describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken } from '../../lib/index.js';
import { appPerSuite } from '../helpers/suite-app.js';

/** A raw HTTP request with headers fetch() would not let us forge (Host). */
function raw(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const ENDPOINTS = ['issuer', 'authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'registration_endpoint', 'end_session_endpoint'];
const FORGED: [string, Record<string, string>][] = [
  ['Host: evil.example', { host: 'evil.example' }],
  ['Host with our port on another name', { host: 'evil.example:1' }],
  ['X-Forwarded-Host and X-Forwarded-Proto', { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }],
  ['both', { host: 'evil.example', 'x-forwarded-host': 'evil2.example', 'x-forwarded-proto': 'http' }],
];

describe.each([false, true])('endpoint URLs come from svc.base-url, never from the request (C2; svc.proxy=%s)', (proxy) => {
  const running = appPerSuite({ properties: { 'svc.proxy': proxy } });

  it.each(FORGED)('discovery with %s names only the configured origin', async (_name, headers) => {
    const res = await raw(`${running.issuer}/.well-known/openid-configuration`, 'GET', headers);
    expect(res.status).toBe(200);
    const doc = JSON.parse(res.text) as Record<string, string>;
    for (const field of ENDPOINTS) expect(new URL(doc[field] as string).origin).toBe(new URL(running.baseUrl).origin);
    expect(res.text).not.toContain('evil');
  });

  it.each(FORGED)('a registration with %s answers registration_client_uri on the configured origin', async (_name, headers) => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const body = JSON.stringify({ redirect_uris: ['https://rp.example/cb'] });
    const res = await raw(`${running.issuer}/register`, 'POST', { ...headers, authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body);
    expect(res.status).toBe(201);
    const client = JSON.parse(res.text) as Record<string, string>;
    expect(client.registration_client_uri).toBe(`${running.issuer}/register/${client.client_id}`);
  });
});

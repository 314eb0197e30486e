import { describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken } from '../../lib/index.js';
import { raw } from '../helpers/raw-request.js';
import { appPerSuite } from '../helpers/suite-app.js';

const ENDPOINTS = ['issuer', 'authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'registration_endpoint', 'end_session_endpoint'];
/** Forged headers, and an origin put in front of the path as an absolute-form request target. */
const FORGED: [string, Record<string, string>, string | undefined][] = [
  ['Host: evil.example', { host: 'evil.example' }, undefined],
  ['Host with our port on another name', { host: 'evil.example:1' }, undefined],
  ['X-Forwarded-Host and X-Forwarded-Proto', { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' }, undefined],
  ['both', { host: 'evil.example', 'x-forwarded-host': 'evil2.example', 'x-forwarded-proto': 'http' }, undefined],
  ['an absolute-form target on another origin', {}, 'http://evil.example'],
  ['an absolute-form target in capitals, with a port and credentials', { host: 'evil2.example' }, 'HTTPS://user:pw@EVIL.example:8443'],
];

describe.each([
  [false, 'http'],
  [true, 'http'],
  [false, 'https'],
  [true, 'https'],
] as const)('endpoint URLs come from svc.base-url, never from the request (C2; svc.proxy=%s, base URL %s)', (proxy, scheme) => {
  // An https base URL on this http server: TLS ends in front, with or without svc.proxy declared.
  const running = appPerSuite({ properties: { 'svc.proxy': proxy }, ...(scheme === 'https' ? { publicScheme: scheme } : {}) });
  const publicOrigin = (): string => new URL(running.settings.baseUrl).origin;

  it('discovery names https endpoints for an https base URL and http ones for an http base URL', async () => {
    const doc = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;
    for (const field of ENDPOINTS) expect({ field, protocol: new URL(doc[field] as string).protocol }).toEqual({ field, protocol: `${scheme}:` });
  });

  it.each(FORGED)('discovery with %s names only the configured origin', async (_name, headers, target) => {
    const res = await raw(`${running.issuer}/.well-known/openid-configuration`, 'GET', headers, undefined, target);
    expect(res.status).toBe(200);
    const doc = JSON.parse(res.text) as Record<string, string>;
    for (const field of ENDPOINTS) expect(new URL(doc[field] as string).origin).toBe(publicOrigin());
    expect(res.text).not.toContain('evil');
  });

  it.each(FORGED)('a registration with %s answers registration_client_uri on the configured origin', async (_name, headers, target) => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const body = JSON.stringify({ redirect_uris: ['https://rp.example/cb'] });
    const res = await raw(`${running.issuer}/register`, 'POST', { ...headers, authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body, target);
    expect(res.status).toBe(201);
    const client = JSON.parse(res.text) as Record<string, string>;
    expect(client.registration_client_uri).toBe(`${publicOrigin()}/oidc/v1/register/${client.client_id}`);
  });
});

describe('an absolute-form request target naming the provider itself, as a forward proxy sends it', () => {
  const running = appPerSuite();

  it('is served as its path: discovery, and a query kept', async () => {
    const { origin } = new URL(running.baseUrl);
    const doc = await raw(`${running.issuer}/.well-known/openid-configuration`, 'GET', {}, undefined, origin);
    expect(doc.status).toBe(200);
    expect((JSON.parse(doc.text) as { issuer: string }).issuer).toBe(running.issuer);
    const authorize = await raw(`${running.issuer}/authorize?client_id=nobody&response_type=code&scope=openid`, 'GET', {}, undefined, origin);
    expect(authorize.status).toBe(400);
    expect(authorize.text).toContain('invalid_client');
  });
});

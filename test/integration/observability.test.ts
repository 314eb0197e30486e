import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { METHODS, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import { simpleParser } from 'mailparser';

import { createDemoClaimModules, DEMO_PEOPLE } from '../../lib/demo/claim-modules.js';
import { createPinoLogger } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { encryptionKey, manage, register } from '../helpers/registration.js';
import { tokenIn } from '../helpers/smtp.js';
import * as oidc from 'openid-client';

const SENTINEL = 'SENTINEL-obs-name-61f0';

describe('structured logs and metrics', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-obs-'));
  const logFile = join(dir, 'log.jsonl');
  let running: RunningApp;
  /** What the suite's one invitation, registration, read and code flow produced (its tests only look). */
  let done: {
    invited: Response;
    iat: string;
    registered: Awaited<ReturnType<typeof register>>;
    read: Awaited<ReturnType<typeof manage>>;
    client: ClientMetadata;
    flow: Awaited<ReturnType<typeof runCodeFlow>>;
  };

  beforeAll(async () => {
    running = await startApp({
      logger: createPinoLogger({ destination: logFile, sync: true }),
      claimModules: createDemoClaimModules({ 'demo-0001': { ...DEMO_PEOPLE['demo-0001'], name: SENTINEL } }),
      properties: { 'svc.metrics.enabled': true, 'svc.mail.outbox-dir': join(dir, 'outbox'), 'svc.management.password': 'obs-password' },
    });
    // Done once before the tests, so each of them (logs, metrics) holds alone and in any order.
    const invited = await fetch(`${running.issuer}/management/invite_client?email=rp@example.com`, {
      headers: { authorization: `Basic ${Buffer.from('admin:obs-password').toString('base64')}` },
    });
    const mailFile = readdirSync(join(dir, 'outbox'))[0] as string;
    const iat = tokenIn((await simpleParser(readFileSync(join(dir, 'outbox', mailFile)))).text ?? '');
    const key = await encryptionKey('RSA-OAEP-256');
    const registered = await register(
      running,
      { redirect_uris: ['https://rp.example/cb'], id_token_encrypted_response_alg: 'RSA-OAEP-256', userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [key.jwk] } },
      iat,
    );
    const read = await manage(registered.body.registration_client_uri as string, 'GET', registered.body.registration_access_token as string);
    const client = registered.body as unknown as ClientMetadata;
    const flow = await runCodeFlow(running.issuer, client, {
      scope: 'openid profile',
      configure: (config) => oidc.enableDecryptingResponses(config, undefined, { key: key.privateKey, kid: key.jwk.kid as string }),
    });
    done = { invited, iat, registered, read, client, flow };
  }, 30_000);
  afterAll(async () => running.close());

  it('logs a full flow, a registration and an invitation as JSON lines without tokens or claim values, and counts them', () => {
    const { invited, iat, registered, read, client, flow } = done;
    expect(invited.status).toBe(202);
    const inviteId = invited.headers.get('x-request-id');
    expect(inviteId).toEqual(expect.any(String));
    expect(registered.status).toBe(201);
    expect(flow.claims.name).toBe(SENTINEL);

    const text = readFileSync(logFile, 'utf8');
    const lines = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const line of lines) {
      expect(typeof line.time).toBe('string');
      expect(['info', 'warn', 'error']).toContain(line.level);
      expect(typeof line.event).toBe('string');
    }
    const events = new Set(lines.map((l) => l.event));
    for (const e of ['request', 'invitation_sent', 'initial_access_token_used', 'client_registered', 'registration_access_token_rotated', 'tokens_issued']) {
      expect([...events]).toContain(e);
    }
    const requests = lines.filter((l) => l.event === 'request');
    expect(requests.find((l) => l.request_id === inviteId)).toMatchObject({ route: '/oidc/v1/management/invite_client', status: 202, method: 'GET' });
    expect(requests.some((l) => l.route === '/oidc/v1/interaction/:uid/login')).toBe(true);
    expect(lines.find((l) => l.event === 'invitation_sent')).toMatchObject({ request_id: inviteId, user: 'admin', domain: 'example.com' });

    const secrets = {
      iat,
      client_secret: client.client_secret as string,
      rat1: registered.body.registration_access_token as string,
      rat2: read.body.registration_access_token as string,
      code: flow.code,
      access_token: flow.tokens.access_token,
      sentinel: SENTINEL,
      management_password: 'obs-password',
    };
    for (const [name, secret] of Object.entries(secrets)) expect({ name, found: text.includes(secret) }).toEqual({ name, found: false });
    expect(text).not.toContain('rp@example.com');
  });

  it('serves the named Prometheus series at /metrics after a flow', async () => {
    const response = await fetch(`${running.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const body = await response.text();
    expect(body).toMatch(/^svc_http_requests_total\{route="\/oidc\/v1\/token",method="POST",status="200"\} [1-9]/m);
    expect(body).toMatch(/^svc_http_request_duration_seconds_bucket\{le="0\.005",route="\/oidc\/v1\/token",method="POST"\}/m);
    expect(body).toMatch(/^svc_flows_completed_total [1-9]/m);
    expect(body).toMatch(/^svc_registrations_total\{event="created"\} 1/m);
    expect(body).toMatch(/^svc_security_events_total\{event="invitation_sent"\} 1/m);
    expect(body).toMatch(/^svc_store_errors_total 0/m);
    expect(body).toContain('svc_process_cpu_user_seconds_total');
  });

  it('labels each request by the route its router resolved: ids, other spellings and unknown paths never reach a label', async () => {
    const basic = `Basic ${Buffer.from('admin:obs-password').toString('base64')}`;
    const sent: [string, string, RequestInit?][] = [
      ['label-provider-client', `${running.issuer}/register/client-id-9f3a1`],
      ['label-provider-spelling', `${running.issuer}/REGISTER/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
      ['label-interaction', `${running.issuer}/interaction/uid-77c2e`],
      ['label-toolbox', `${running.issuer}/management/clients/client-id-4d0b8`, { headers: { authorization: basic } }],
      ['label-reset', `${running.issuer}/management/logins/reset`, { method: 'POST', headers: { authorization: basic } }],
      ['label-unknown', `${running.baseUrl}/nowhere/secret-path-5e1`],
    ];
    const ids = new Map<string, string | null>();
    for (const [id, url, init] of sent) ids.set(id, (await fetch(url, init)).headers.get('x-request-id'));
    const lines = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const routeOf = (id: string): unknown => lines.find((l) => l.event === 'request' && l.request_id === ids.get(id))?.route;
    expect(Object.fromEntries(sent.map(([id]) => [id, routeOf(id)]))).toEqual({
      'label-provider-client': '/oidc/v1/register/:clientId',
      'label-provider-spelling': '/oidc/v1/register',
      'label-interaction': '/oidc/v1/interaction/:uid',
      'label-toolbox': '/oidc/v1/management/clients/:client_id',
      'label-reset': '/oidc/v1/management/logins/reset',
      'label-unknown': 'other',
    });
  });

  it("labels a method other than GET, HEAD, POST, PUT, DELETE and OPTIONS `other`: each of Node's methods sent to each route adds no series per method", async () => {
    const sendWith = (url: string, method: string): Promise<void> =>
      new Promise((resolve) => {
        const req = request(url, { method }, (res) => res.resume().on('end', resolve));
        req.on('error', () => resolve()).end();
      });
    const routes = [`${running.issuer}/authorize`, `${running.issuer}/interaction/uid-5c1d`, `${running.baseUrl}/healthz`, `${running.baseUrl}/nowhere`];
    const seriesOf = async (name: string): Promise<Set<string>> =>
      new Set((await (await fetch(`${running.baseUrl}/metrics`)).text()).split('\n').filter((l) => l.startsWith(name)).map((l) => l.split(' ')[0] as string));
    for (const url of routes) for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PROPFIND']) await sendWith(url, method);
    const [counters, histograms] = [await seriesOf('svc_http_requests_total'), await seriesOf('svc_http_request_duration_seconds')];
    for (const url of routes) for (const method of METHODS.filter((m) => m !== 'CONNECT')) await sendWith(url, method);
    const added = async (name: string, before: Set<string>): Promise<string[]> => [...(await seriesOf(name))].filter((series) => !before.has(series));
    const methods = new Set([...(await seriesOf('svc_http_requests_total'))].map((series) => /method="([^"]*)"/.exec(series)?.[1]));
    expect([...methods].filter((m) => !['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'other'].includes(m as string))).toEqual([]);
    expect(await added('svc_http_request_duration_seconds', histograms)).toEqual([]);
    // At most a status the other methods got that PROPFIND did not (404, 405, 501): never one series per method.
    expect((await added('svc_http_requests_total', counters)).length).toBeLessThanOrEqual(routes.length * 2);
  });

  it("honest: GET and POST keep their own label (a flow's authorization and token requests, a client read)", async () => {
    const body = await (await fetch(`${running.baseUrl}/metrics`)).text();
    expect(body).toMatch(/^svc_http_requests_total\{route="\/oidc\/v1\/token",method="POST",status="200"\} [1-9]/m);
    expect(body).toMatch(/^svc_http_requests_total\{route="\/oidc\/v1\/authorize",method="GET",status="303"\} [1-9]/m);
    expect(body).toMatch(/^svc_http_requests_total\{route="\/oidc\/v1\/register\/:clientId",method="GET",status="200"\} [1-9]/m);
  });

  it('attack: serves /metrics under no other spelling (/METRICS, /Metrics, /metrics/): a proxy rule keeping /metrics off the public internet is not walked around', async () => {
    for (const path of ['/METRICS', '/Metrics', '/metrics/']) {
      const response = await fetch(`${running.baseUrl}${path}`);
      const text = await response.text();
      expect([path, response.status, text.includes('svc_')]).toEqual([path, 404, false]);
    }
    // Sent as written (fetch drops a fragment): no request-target has one (RFC 9112 3.2), and a proxy matching the path as sent sees another.
    for (const path of ['/metrics#', '/metrics#x', '/metrics?a#b']) {
      const [status, text] = await new Promise<[number | undefined, string]>((resolve, reject) => {
        const req = request(running.baseUrl, { path }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve([res.statusCode, body]));
        });
        req.on('error', reject).end();
      });
      expect([path, status, text.includes('svc_')]).toEqual([path, 404, false]);
    }
  });

  it('does not serve /metrics unless enabled', async () => {
    const other = await startApp();
    try {
      expect((await fetch(`${other.baseUrl}/metrics`)).status).toBe(404);
    } finally {
      await other.close();
    }
  });
});

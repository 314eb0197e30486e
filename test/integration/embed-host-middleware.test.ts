import * as querystring from 'node:querystring';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Koa, { type Middleware } from 'koa';

import { createSvcConnect, issueInitialAccessToken, loadSettings, type SvcConnect } from '../../lib/index.js';
import { confidentialClient } from '../helpers/app.js';
import { startHostServer, type HostServer } from '../helpers/host-server.js';
import { runCodeFlow } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';

/** A host's body parser run before svc.middleware, as koa-bodyparser does: the body read, parsed, and (with `keepRaw`) its text kept as `rawBody`. */
const hostBodyParser = (keepRaw: boolean): Middleware => async (ctx, next) => {
  if (ctx.is('application/x-www-form-urlencoded', 'application/json')) {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const request = ctx.request as typeof ctx.request & { body?: unknown; rawBody?: string };
    request.body = ctx.is('application/json') ? (JSON.parse(raw) as unknown) : querystring.parse(raw);
    if (keepRaw) request.rawBody = raw;
  }
  await next();
};

describe.each([
  { parser: 'keeping its raw text (koa-bodyparser)', keepRaw: true },
  { parser: 'keeping no raw text', keepRaw: false },
])('a host app whose body parser runs before svc.middleware, $parser', ({ keepRaw }) => {
  let host: HostServer;
  let issuer = '';
  let svc: SvcConnect;
  const client = confidentialClient({ subject_type: 'public' });
  const { logger, lines } = capturingLogger();

  beforeAll(async () => {
    host = await startHostServer();
    const base = host.base;
    issuer = `${base}/oidc/v1`;
    svc = await createSvcConnect(loadSettings({ env: {}, properties: { 'svc.base-url': base } }), { logger, clients: [client] });
    const app = new Koa({ keys: svc.cookieKeys });
    app.use(hostBodyParser(keepRaw));
    app.use(svc.middleware);
    // A host route after svc.middleware, using what the host's parser made of the body.
    app.use((ctx) => {
      ctx.body = { got: (ctx.request as typeof ctx.request & { body?: unknown }).body ?? null };
    });
    host.serve(app);
  });
  afterAll(async () => {
    await host.close();
    await svc.close();
  });

  const registration = (token: string): Promise<Response> =>
    fetch(`${issuer}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ redirect_uris: ['https://rp.example/cb'] }),
    });
  const unspent = async (token: string): Promise<boolean> => {
    const stored = await svc.store.adapter('InitialAccessToken').find(token);
    return stored !== undefined && stored.consumed === undefined;
  };

  it("serves a host route after svc.middleware the body the host's parser read", async () => {
    const answer = await fetch(`${issuer.replace(/\/oidc\/v1$/, '')}/app/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect([answer.status, await answer.json()]).toEqual([200, { got: { a: 1 } }]);
  });

  if (keepRaw) {
    it('runs the code flow: the login form, consent, the token request with its form body, UserInfo', async () => {
      const { claims, userinfo } = await runCodeFlow(issuer, client);
      expect(claims.sub).toBe('demo-0001');
      expect(userinfo.sub).toBe('demo-0001');
    });

    it('registers a client from its JSON body', async () => {
      const { token } = await issueInitialAccessToken(svc.provider);
      const answer = await registration(token);
      expect(answer.status).toBe(201);
      expect(((await answer.json()) as { redirect_uris: string[] }).redirect_uris).toEqual(['https://rp.example/cb']);
      expect(lines.some((line) => (JSON.parse(line) as { e: string }).e === 'client_registered')).toBe(true);
    });
  } else {
    it('refuses a body it cannot read with server_error, stores no client, and logs the fix', async () => {
      const { token } = await issueInitialAccessToken(svc.provider);
      const before = lines.length;
      const answer = await registration(token);
      expect(answer.status).toBe(500);
      expect(((await answer.json()) as { error: string }).error).toBe('server_error');
      const logged = lines.slice(before).map((line) => JSON.parse(line) as { e: string; fix?: string });
      expect(logged.find((line) => line.e === 'request_body_already_read')?.fix).toContain('before');
      expect(logged.some((line) => line.e === 'client_registered')).toBe(false);
      expect(await unspent(token)).toBe(true);
    });

    it('still serves requests without a body', async () => {
      expect((await fetch(`${issuer}/.well-known/openid-configuration`)).status).toBe(200);
    });
  }
});

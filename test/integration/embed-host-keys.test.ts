import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Koa from 'koa';

import { createSvcConnect, loadSettings, type SvcConnect } from '../../lib/index.js';
import { CookieKeyring } from '../../lib/web/cookie-keyring.js';
import { confidentialClient } from '../helpers/app.js';
import { startHostServer, type HostServer } from '../helpers/host-server.js';
import { runCodeFlow } from '../helpers/flow.js';

describe.each([
  { keys: 'its own keys', hostKeys: ['the host app keeps its own cookie key, not ours'] },
  { keys: 'no keys', hostKeys: undefined },
])('a host app with $keys (not svc.cookieKeys)', ({ hostKeys }) => {
  let host: HostServer;
  let base = '';
  let svc: SvcConnect;
  const client = confidentialClient({ subject_type: 'public' });

  beforeAll(async () => {
    host = await startHostServer();
    base = host.base;
    svc = await createSvcConnect(loadSettings({ env: {}, properties: { 'svc.base-url': base } }), { clients: [client] });
    const app = new Koa(hostKeys ? { keys: hostKeys } : {});
    // A session-like host middleware: it reads its signed cookie before svc.middleware and writes it after.
    app.use(async (ctx, next) => {
      if (!hostKeys) {
        await next();
        return;
      }
      const visits = Number(ctx.cookies.get('host-visits', { signed: true }) ?? '0');
      ctx.set('x-host-visits', String(visits));
      await next();
      ctx.cookies.set('host-visits', String(visits + 1), { signed: true });
    });
    app.use(svc.middleware);
    // A host route served after svc.middleware, reading the host's own signed cookie.
    app.use((ctx) => {
      ctx.body = { visits: ctx.cookies.get('host-visits', { signed: true }) ?? null };
    });
    host.serve(app);
  });
  afterAll(async () => {
    await host.close();
    await svc.close();
  });

  it('runs the code flow: svc-connect signs and reads its cookies with svc.cookieKeys', async () => {
    const { claims } = await runCodeFlow(`${base}/oidc/v1`, client);
    expect(claims.sub).toBe('demo-0001');
  });

  if (hostKeys) {
    it("leaves the host's own signed cookies to the host's keys", async () => {
      const first = await fetch(`${base}/healthz`);
      const cookie = first.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const second = await fetch(`${base}/healthz`, { headers: { cookie } });
      expect(second.headers.get('x-host-visits')).toBe('1');
    });

    it("lets a host route after svc.middleware read the host's signed cookie with the host's keys", async () => {
      const first = await fetch(`${base}/app/visits`);
      const cookie = first.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const second = await fetch(`${base}/app/visits`, { headers: { cookie } });
      expect(await second.json()).toEqual({ visits: '1' });
    });

    it("does not take a cookie signed with svc.cookieKeys as the host's, after svc.middleware either", async () => {
      const forged = `host-visits=41; host-visits.sig=${new CookieKeyring(svc.cookieKeys).sign('host-visits=41')}`;
      const before = await fetch(`${base}/healthz`, { headers: { cookie: forged } });
      expect(before.headers.get('x-host-visits')).toBe('0');
      const after = await fetch(`${base}/app/visits`, { headers: { cookie: forged } });
      expect(await after.json()).toEqual({ visits: null });
    });
  }
});

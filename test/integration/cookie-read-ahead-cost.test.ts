import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { CookieKeyring } from '../../lib/web/cookie-keyring.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, signIn } from '../helpers/flow.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';

const client = confidentialClient();

describe('what the cookies of a request cost Redis: the records they name are read ahead only where a browser sends them', () => {
  let redis: OwnRedis;
  let running: RunningApp;
  let admin: Redis;
  let ring: CookieKeyring;
  /** Her cookies on the login page of a second flow, signed in already: her interaction and her session. */
  let hers: string;
  let page: string;

  beforeAll(async () => {
    redis = await startOwnRedis();
    running = await startApp({ clients: [client], properties: { 'svc.redis.url': redis.url } });
    admin = new Redis(redis.url);
    ring = new CookieKeyring(running.app.svc.cookieKeys);
    const browser = new FormBrowser();
    await signIn(codeFlowUrl(running.issuer, client), { browser });
    await browser.follow(codeFlowUrl(running.issuer, client, { prompt: 'login' }), running.baseUrl);
    page = browser.formAction('login-form', running.baseUrl).replace(/\/login$/, '');
    hers = ['_interaction', '_interaction.sig', '_interaction_resume', '_interaction_resume.sig', '_session', '_session.sig'].map((name) => `${name}=${browser.cookie(name) ?? ''}`).join('; ');
  });
  afterAll(async () => {
    admin.disconnect();
    await running.close();
    redis.dispose();
  });

  /** The commands Redis ran for one request (its store connection's answers awaited), by name; INFO, PING and CONFIG left out. */
  async function commandsOf(url: string, cookie?: string): Promise<Record<string, number>> {
    const store = (running.app.svc.store as unknown as { client: Redis }).client;
    await store.ping();
    await admin.config('RESETSTAT');
    await (await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} })).arrayBuffer();
    // Sent after the request's commands on the same connection: answered after them.
    await store.ping();
    const stats = await admin.info('commandstats');
    const counts: Record<string, number> = {};
    for (const [, name, calls] of stats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) if (!/^(info|ping|config)\b/.test(name as string)) counts[name as string] = Number(calls);
    return counts;
  }

  it('attack: her signed cookies replayed to endpoints that read no flow record (health, discovery, JWKS, token) cost what the request without them costs', async () => {
    const token = `${running.issuer}/token`;
    for (const url of [`${running.baseUrl}/healthz`, `${running.issuer}/.well-known/openid-configuration`, `${running.issuer}/jwks`, token]) {
      expect({ url, commands: await commandsOf(url, hers) }).toEqual({ url, commands: await commandsOf(url) });
    }
  });

  it('attack: cookies whose signature does not verify, by the dozen, or signed and naming records that do not exist elsewhere, cost nothing', async () => {
    const value = /_interaction=([^;]*)/.exec(hers)?.[1] as string;
    const forged = Array.from({ length: 40 }, (_, i) => `_interaction=${value}${i}; _interaction.sig=${ring.sign(`_interaction=${value}`)}; _session=s${i}; _session.sig=x`).join('; ');
    expect(await commandsOf(`${running.baseUrl}/healthz`, forged)).toEqual({});
    expect(await commandsOf(page, forged)).toEqual(await commandsOf(page));
    const gone = `_interaction=gone; _interaction.sig=${ring.sign('_interaction=gone')}; _session=gone; _session.sig=${ring.sign('_session=gone')}`;
    expect(await commandsOf(`${running.baseUrl}/healthz`, gone)).toEqual({});
  });

  it('honest: on her page, her interaction and her session are read ahead together, as oidc-provider reads them one after the other', async () => {
    expect(await commandsOf(page, hers)).toEqual({ get: 2 });
  });
});

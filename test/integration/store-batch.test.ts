import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { createMemoryStore } from '../../adapters/memory.js';
import { KNOWN_ADDRESS_MODEL } from '../../lib/management/guard.js';
import { confidentialClient, sessionsOf, startApp, type RunningApp } from '../helpers/app.js';
import { accountsHeldAt, heldCall } from '../helpers/held-call.js';
import { authorizationUrl, codeFlowParams, codeFlowUrl, FormBrowser, signIn } from '../helpers/flow.js';
import { startOwnRedis, type OwnRedis } from '../helpers/redis.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { basicAuthorization } from '../../lib/web/basic-auth.js';

const client = confidentialClient();
const PREFIX = 'batch:';

/** The `/authorize` URL of a request of the client pushed to `/par` at `issuer`. */
async function pushedAt(issuer: string): Promise<string> {
  const response = await fetch(`${issuer}/par`, {
    method: 'POST',
    headers: { authorization: basicAuthorization(client.client_id, client.client_secret as string, { formEncoded: true }), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(codeFlowParams(client, { state: 'st' })).toString(),
  });
  expect(response.status).toBe(201);
  const { request_uri: requestUri } = (await response.json()) as { request_uri: string };
  return authorizationUrl(issuer, { client_id: String(client.client_id), request_uri: requestUri });
}

/** Follows `url` to her consent and allows it: the resume URL it sends her browser to (`GET /authorize/{uid}`). */
async function consentedAt(url: string, browser: FormBrowser, origin: string): Promise<string> {
  await browser.follow(url, origin);
  await browser.submit('login-form', { login: 'demo', password: 'demo' }, origin);
  const consent = await browser.post(browser.formAction('consent-allow', origin), browser.hiddenFields('consent-allow'), origin);
  return new URL(consent.headers.get('location') as string, origin).href;
}

/**
 * A request's writes go to Redis together when it ends (issue 16). When they fail there, the answer
 * it had prepared (a redirect with a code, a session cookie) must not go out: 503 `server_error`,
 * no `Location`, no `Set-Cookie`, and a person can continue once the store takes writes again.
 */
describe('a request whose writes fail when it ends (one unit of store work)', () => {
  let redis: OwnRedis;
  let admin: Redis;
  let running: RunningApp;
  const acl = (...rules: string[]): Promise<unknown> => admin.call('ACL', 'SETUSER', 'app', 'on', '>pw', ...rules);

  beforeAll(async () => {
    redis = await startOwnRedis();
    admin = new Redis(redis.url);
    await acl('+@all', '~*', '&*');
    running = await startApp({ clients: [client], properties: { 'svc.redis.url': `redis://app:pw@127.0.0.1:${redis.port}`, 'svc.redis.key-prefix': PREFIX } });
  });
  afterAll(async () => {
    await running.close();
    admin.disconnect();
    redis.dispose();
  });

  const authorize = (): string => codeFlowUrl(running.issuer, client, { state: 'st' });

  it('answers 503 server_error without the redirect and cookies it had prepared, stores nothing, and serves again once writes land', async () => {
    // The interaction record cannot be written: SET is allowed on no key of the provider.
    await acl('resetkeys', '~*', '&*', '-set');
    try {
      const refused = await fetch(authorize(), { redirect: 'manual', headers: { accept: 'application/json' } });
      expect(refused.status).toBe(503);
      expect(await refused.json()).toEqual({ error: 'server_error', error_description: 'the provider store is temporarily unavailable, try again shortly' });
      expect(refused.headers.get('location')).toBeNull();
      expect(refused.headers.getSetCookie()).toEqual([]);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
      expect(refused.headers.get('x-request-id')).toEqual(expect.any(String));
      expect(await admin.keys(`${PREFIX}Interaction:*`)).toEqual([]);

      const page = await fetch(authorize(), { redirect: 'manual', headers: { accept: 'text/html' } });
      expect(page.status).toBe(503);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain('server_error');
    } finally {
      await acl('+@all', '~*', '&*');
    }
    await running.app.svc.store.ping().catch(() => undefined);
    const browser = new FormBrowser();
    const step = await browser.follow(authorize(), running.baseUrl);
    expect(step.response?.status).toBe(200);
    expect(await admin.keys(`${PREFIX}Interaction:*`)).toHaveLength(1);
  });

  const pushed = (): Promise<string> => pushedAt(running.issuer);
  /** Every key writable but those of `models` (as with the master of their slots away on a Cluster). */
  const refuseWritesOf = (...models: string[]): Promise<unknown> => {
    const others = ['PushedAuthorizationRequest', 'PushedAuthorizationRequestUse', 'Interaction', 'Session', 'sessionUid', 'Grant', 'grant', 'AuthorizationCode', 'Client', 'ClientSuspension', 'ClientDeletion', 'SessionRevocation', 'ConsentUndo', 'attempts'];
    return acl('resetkeys', '%R~*', '&*', ...others.filter((m) => !models.includes(m)).map((m) => `~${PREFIX}${m}:*`));
  };
  /** `/authorize` at `url` while the store refuses writes of `models`: the status of the answer, then the store healed. */
  const refusedAt = async (url: string, browser: FormBrowser, ...models: string[]): Promise<number> => {
    await refuseWritesOf(...models);
    try {
      return (await browser.request(url)).status;
    } finally {
      await acl('resetkeys', '~*', '&*');
      await running.app.svc.store.ping().catch(() => undefined);
    }
  };
  it('honest: a request_uri whose /authorize answered 503 (the interaction not stored) works when she reloads the page once the store takes writes again (RFC 9126 4: a reload may repeat it), and once only', async () => {
    const url = await pushed();
    const browser = new FormBrowser();
    const before = (await admin.keys(`${PREFIX}Interaction:*`)).length;
    expect(await refusedAt(url, browser, 'Interaction')).toBe(503);
    expect(await admin.keys(`${PREFIX}Interaction:*`)).toHaveLength(before);
    expect((await browser.request(url)).headers.get('location')).toMatch(/\/interaction\/[\w-]+$/);
    const again = await new FormBrowser().request(url);
    expect([again.status, /<code>(\w+)<\/code>/.exec(await again.text())?.[1]]).toEqual([400, 'invalid_request_uri']);
  });

  it('honest: a request_uri answered with a code at once (she is signed in and consented) whose code could not be stored works on reload, and once only', async () => {
    const { browser } = await signIn(codeFlowUrl(running.issuer, client));
    const url = await pushed();
    expect(await refusedAt(url, browser, 'AuthorizationCode')).toBe(503);
    const retried = await browser.request(url);
    expect(retried.headers.get('location')).toMatch(/^http:\/\/rp\.localhost\/cb\?code=/);
    const again = await browser.request(url);
    expect([again.status, /<code>(\w+)<\/code>/.exec(await again.text())?.[1]]).toEqual([400, 'invalid_request_uri']);
  });

  it('attack: a request_uri already used, sent again while the store refuses writes, is refused and given nothing back: it stays spent once the store heals', async () => {
    const url = await pushed();
    const first = await new FormBrowser().request(url);
    expect(first.headers.get('location')).toMatch(/\/interaction\//);
    expect(await refusedAt(url, new FormBrowser(), 'Interaction')).toBe(400);
    const after = await new FormBrowser().request(url);
    expect([after.status, /<code>(\w+)<\/code>/.exec(await after.text())?.[1]]).toEqual([400, 'invalid_request_uri']);
  });

  it('honest: the resume after her consent, answered 503 by a full Redis (it refuses her code and session, OOM, and takes deletions), gives her the code when she reloads once Redis has room: her interaction and session were kept', async () => {
    const browser = new FormBrowser();
    const resume = await consentedAt(authorize(), browser, running.baseUrl);
    const used = Number(/^used_memory:(\d+)/m.exec(await admin.info('memory'))?.[1]);
    await admin.config('SET', 'maxmemory', String(used - 1024));
    try {
      expect((await browser.request(resume)).status).toBe(503);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    await running.app.svc.store.ping().catch(() => undefined);
    expect((await browser.request(resume)).headers.get('location')).toMatch(/^http:\/\/rp\.localhost\/cb\?code=[\w-]+&state=st&/);
    // Once only: the interaction is ended with the code that went out.
    expect((await browser.request(resume)).status).toBe(400);
  });

  it('honest: the resume of a pushed request after her consent, answered 503 (her code not stored: its master away), gives her the code when she reloads: her interaction was kept and the pushed request it consumed given back; attack: its request_uri stays spent, and the code goes out once', async () => {
    const url = await pushed();
    const browser = new FormBrowser();
    const resume = await consentedAt(url, browser, running.baseUrl);
    expect(await refusedAt(resume, browser, 'AuthorizationCode')).toBe(503);
    const reused = await new FormBrowser().request(url);
    expect([reused.status, /<code>(\w+)<\/code>/.exec(await reused.text())?.[1]]).toEqual([400, 'invalid_request_uri']);
    expect((await browser.request(resume)).headers.get('location')).toMatch(/^http:\/\/rp\.localhost\/cb\?code=[\w-]+&state=st&/);
    expect((await browser.request(resume)).status).toBe(400);
  });
});

/**
 * The embedded store refuses a write beyond its limit (`svc.memory-store.max-mb`) as a full Redis does: the deletions of
 * the request must not land without its writes there either.
 */
describe('on the embedded memory store, a resume refused for want of room deletes nothing', () => {
  const store = createMemoryStore({ maxBytes: 2 ** 20 });
  const lookup = heldCall();
  const running = appPerSuite({ store, clients: [client], authenticator: accountsHeldAt(lookup) });
  const fillers = store.adapter('AccessToken');
  let filled = 0;
  /** Fills the store to its limit, to the byte, with records nobody's flow needs. */
  const fill = async (): Promise<void> => {
    const put = (size: number): Promise<boolean> => fillers.upsert(`filler-${filled}`, { kind: 'AccessToken', pad: 'x'.repeat(size) }, 3600).then(() => true, () => false);
    for (; await put(8000); filled += 1);
    let size = 0;
    for (let step = 4096; step >= 1; step = Math.floor(step / 2)) while (await put(size + step)) size += step;
    filled += 1;
  };
  const makeRoom = async (): Promise<void> => {
    for (; filled > 0; filled -= 1) await fillers.destroy(`filler-${filled - 1}`);
  };
  const interactions = async (): Promise<number> => (await store.inventory.list('Interaction', { limit: 1000 })).records.length;
  /**
   * `GET resume` with the store full, and what her request frees taken by others' writes meanwhile (while it waits on
   * the authenticator): its answer, then room made.
   */
  const refusedResume = async (resume: string, browser: FormBrowser): Promise<Response> => {
    await fill();
    try {
      const { arrived, release } = lookup.hold();
      const answer = browser.request(resume);
      await arrived;
      await fill();
      release();
      return await answer;
    } finally {
      await makeRoom();
    }
  };

  it('hostile: the resume after her consent, refused by the full store (503, no redirect, no cookie), keeps her interaction and session; honest: her reload once there is room gets the code, the interaction and the session it replaces are gone, and the code goes out once', async () => {
    const browser = new FormBrowser();
    const resume = await consentedAt(codeFlowUrl(running.issuer, client, { state: 'st' }), browser, running.baseUrl);
    const before = [await interactions(), await sessionsOf(running, 'demo-0001')];
    const refused = await refusedResume(resume, browser);
    expect([refused.status, refused.headers.get('location'), refused.headers.getSetCookie()]).toEqual([503, null, []]);
    expect([await interactions(), await sessionsOf(running, 'demo-0001')]).toEqual(before);
    const served = await browser.request(resume);
    expect(served.headers.get('location')).toMatch(/^http:\/\/rp\.localhost\/cb\?code=[\w-]+&state=st&/);
    expect([await interactions(), await sessionsOf(running, 'demo-0001')]).toEqual([(before[0] as number) - 1, 1]);
    expect((await browser.request(resume)).status).toBe(400);
  });

  it('hostile: the resume of a pushed request, refused by the full store, keeps her interaction and gives back the pushed request it consumed, while its request_uri stays spent; honest: her reload once there is room gets the code, once', async () => {
    const url = await pushedAt(running.issuer);
    const browser = new FormBrowser();
    const resume = await consentedAt(url, browser, running.baseUrl);
    expect((await refusedResume(resume, browser)).status).toBe(503);
    const reused = await new FormBrowser().request(url);
    expect([reused.status, /<code>(\w+)<\/code>/.exec(await reused.text())?.[1]]).toEqual([400, 'invalid_request_uri']);
    expect((await browser.request(resume)).headers.get('location')).toMatch(/^http:\/\/rp\.localhost\/cb\?code=[\w-]+&state=st&/);
    expect((await browser.request(resume)).status).toBe(400);
  });
});

describe('on the embedded memory store, a write refused at the limit that its caller goes on without fails nothing else', () => {
  const store = createMemoryStore({ maxBytes: 2 ** 20 });
  const [user, password] = ['ops', 'correct horse battery staple'];
  const running = appPerSuite({ store, clients: [client], properties: { 'svc.management.user': user, 'svc.management.password': password, 'svc.proxy': true } });
  /** A management call from `address`, where the operator has not signed in for 30 days. */
  const manage = (method: string, path: string, address: string): Promise<Response> =>
    fetch(`${running.issuer}/management${path}`, { method, headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`, 'x-forwarded-for': address } });

  it('honest: the operator at a full store, from an address new to her (its mark not written), lists and revokes an invitation to make room: served 200 as on Redis, not 503 for an action that was done', async () => {
    const issued = await manage('POST', '/initial-access-tokens', '203.0.113.1');
    expect(issued.status).toBe(201);
    const { invitations } = (await (await manage('GET', '/invitations', '203.0.113.1')).json()) as { invitations: { id: string }[] };
    const id = invitations[0]?.id as string;
    const put = (size: number): Promise<boolean> => store.adapter('AccessToken').upsert('filler', { kind: 'AccessToken', pad: 'x'.repeat(size) }, 3600).then(() => true, () => false);
    let size = 0;
    for (let step = 2 ** 20; step >= 1; step = Math.floor(step / 2)) while (await put(size + step)) size += step;
    // Room for her address's failure counter (read, not written, by a right password), not for the mark of her address.
    await put(size - 400);
    expect((await manage('GET', '/clients', '203.0.113.2')).status).toBe(200);
    expect((await manage('DELETE', `/invitations/${id}`, '203.0.113.3')).status).toBe(200);
    // Only the mark of the address she signed in from with room: those of the full store's two were refused.
    expect((await store.inventory.list(KNOWN_ADDRESS_MODEL, { limit: 10 })).records).toHaveLength(1);
    expect((await manage('DELETE', `/invitations/${id}`, '203.0.113.4')).status).toBe(404);
  });
});

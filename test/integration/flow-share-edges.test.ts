import { beforeAll, describe, expect, it } from '@jest/globals';
import { SignJWT } from 'jose';

import { createMemoryStore } from '../../adapters/memory.js';
import { capturingLogger } from '../helpers/logs.js';
import { confidentialClient } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, pkcePair, redirectParams } from '../helpers/flow.js';
import { registerSigningClient } from '../helpers/request-objects.js';
import { appPerSuite } from '../helpers/suite-app.js';

const client = confidentialClient();
const publicClient = { client_id: 'public-rp', token_endpoint_auth_method: 'none' as const, redirect_uris: ['http://rp.localhost/public-cb'] };
const THRESHOLD = 3;

/** Signs `login` in through `browser` (the demo accounts' password is their name) and consents: where she was sent. */
async function signInAndConsent(browser: FormBrowser, app: { issuer: string; baseUrl: string }, login: string, state: string): Promise<string | undefined> {
  await browser.follow(codeFlowUrl(app.issuer, client, { state, code_challenge: pkcePair().challenge }), app.baseUrl);
  await browser.submit('login-form', { login, password: login }, app.baseUrl);
  return (await browser.submit('consent-allow', {}, app.baseUrl)).leftTo;
}

/** A browser behind one client address (a trusted proxy's `X-Forwarded-For`) on every request, redirects included. */
class AddressedBrowser extends FormBrowser {
  constructor(private readonly address: string) {
    super();
  }

  override async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('x-forwarded-for', this.address);
    return super.request(url, { ...init, headers });
  }
}

describe('a crowded store shared out by client address: pushes, sign-out pages, the hour (svc.login.start-threshold)', () => {
  let offset = 0;
  const store = createMemoryStore({ maxBytes: 2 ** 20, now: () => Date.now() + offset });
  const { logger, lines } = capturingLogger();
  const running = appPerSuite({ store, logger, clients: [client, publicClient], properties: { 'svc.proxy': true, 'svc.login.start-threshold': THRESHOLD } });
  const count = async (model: string): Promise<number> => (await store.inventory.list(model, { limit: 1000 })).records.length;
  const par = (address: string, body: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${running.issuer}/par`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address, ...headers }, body: new URLSearchParams(body).toString() });
  const fields = (c: { client_id: string; redirect_uris?: readonly string[] }): Record<string, string> => ({
    client_id: c.client_id, response_type: 'code', redirect_uri: c.redirect_uris?.[0] as string, scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256',
  });
  const start = async (address: string): Promise<string> =>
    (await fetch(codeFlowUrl(running.issuer, publicClient, {}), { redirect: 'manual', headers: { 'x-forwarded-for': address } })).headers.get('location') ?? '';

  beforeAll(async () => {
    // Half the limit in records no share counts, kept past every clock move below.
    for (let i = 0; !(await store.crowded?.()); i += 1) await store.adapter('Grant').upsert(`filler-${i}`, { kind: 'Grant', blob: 'x'.repeat(4000) }, 86_400);
  });

  it('attack: a public client\'s pushes refused beyond the share leave no use mark behind; honest: each accepted push keeps its own', async () => {
    const [pushed, marks] = [await count('PushedAuthorizationRequest'), await count('PushedAuthorizationRequestUse')];
    const statuses = [];
    for (let i = 0; i < THRESHOLD + 5; i += 1) statuses.push((await par('192.0.2.10', fields(publicClient))).status);
    expect(statuses).toEqual([...Array<number>(THRESHOLD).fill(201), ...Array<number>(5).fill(429)]);
    // Each refusal is logged for the operator, naming neither the address nor its counter.
    const refusals = lines.filter((l) => l.includes('"e":"flow_share_refused"'));
    expect(refusals.slice(-5).map((l) => JSON.parse(l) as unknown)).toEqual(Array(5).fill({ e: 'flow_share_refused', model: 'PushedAuthorizationRequest', account: false }));
    expect(refusals.join('\n')).not.toContain('192.0.2.10');
    expect([await count('PushedAuthorizationRequest') - pushed, await count('PushedAuthorizationRequestUse') - marks]).toEqual([THRESHOLD, THRESHOLD]);
  });

  it('attack: a public client that signs its request objects (a key every copy of its app holds) is counted as any public client; honest: a confidential client\'s server is not', async () => {
    const signer = await registerSigningClient(running, { token_endpoint_auth_method: 'none' });
    expect(signer.metadata.token_endpoint_auth_method).toBe('none');
    const signed = async (): Promise<string> => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ ...fields(signer.metadata) })
        .setProtectedHeader({ alg: 'PS256', kid: signer.kid, typ: 'oauth-authz-req+jwt' })
        .setIssuer(signer.metadata.client_id).setAudience(running.issuer).setIssuedAt(now).setNotBefore(now).setExpirationTime(now + 60)
        .sign(signer.signingKey);
    };
    const pushed = await count('PushedAuthorizationRequest');
    const answers = [];
    for (let i = 0; i < THRESHOLD + 2; i += 1) {
      const response = await par('192.0.2.20', { client_id: signer.metadata.client_id, request: await signed() });
      answers.push([response.status, ((await response.json()) as { error?: string }).error, response.headers.get('retry-after') !== null]);
    }
    const pushedAnswer: unknown[] = [201, undefined, false];
    const refusedAnswer: unknown[] = [429, 'temporarily_unavailable', true];
    expect(answers).toEqual([...Array<unknown[]>(THRESHOLD).fill(pushedAnswer), ...Array<unknown[]>(2).fill(refusedAnswer)]);
    expect(await count('PushedAuthorizationRequest')).toBe(pushed + THRESHOLD);
    const secret = Buffer.from(`${client.client_id}:${client.client_secret as string}`).toString('base64');
    const server = [];
    for (let i = 0; i < THRESHOLD + 2; i += 1) server.push((await par('192.0.2.20', fields(client), { authorization: `Basic ${secret}` })).status);
    expect(server).toEqual(Array<number>(THRESHOLD + 2).fill(201));
  });

  it('attack: a cookie-less GET /logout beyond the share gets the 429 page with Retry-After, is counted once and stores no session; honest: a person signed in behind that address still gets her sign-out form', async () => {
    const her = new AddressedBrowser('192.0.2.30');
    const leftTo = await signInAndConsent(her, running, 'demo', 'hers');
    expect(redirectParams(leftTo as string).get('code')).toEqual(expect.any(String));

    const fail = store.attempts.fail.bind(store.attempts);
    const counted: number[] = [];
    const attempts = store.attempts as { fail: typeof fail };
    attempts.fail = async (key, rule) => {
      const wait = await fail(key, rule);
      counted.push(wait);
      return wait;
    };
    try {
      const sessions = await count('Session');
      const answers = [];
      // Her sign-in started one of the address's flows.
      for (let i = 1; i < THRESHOLD; i += 1) answers.push((await fetch(`${running.issuer}/logout`, { headers: { 'x-forwarded-for': '192.0.2.30' } })).status);
      expect([answers, await count('Session')]).toEqual([Array<number>(THRESHOLD - 1).fill(200), sessions + THRESHOLD - 1]);
      counted.length = 0;
      // A browser's page (not the plain text Koa writes for an error that escapes every handler, all headers dropped).
      const refused = await fetch(`${running.issuer}/logout`, { headers: { 'x-forwarded-for': '192.0.2.30', accept: 'text/html' } });
      const page = await refused.text();
      expect([refused.status, Number(refused.headers.get('retry-after')) > 0, refused.headers.get('content-type'), page.includes('temporarily_unavailable'), refused.headers.get('x-content-type-options')]).toEqual([
        429, true, 'text/html; charset=utf-8', true, 'nosniff',
      ]);
      expect(counted).toHaveLength(1);
      expect(await count('Session')).toBe(sessions + THRESHOLD - 1);
    } finally {
      attempts.fail = fail;
    }
    const form = await her.follow(`${running.issuer}/logout`, running.baseUrl);
    expect([form.response?.status, her.lastPage.includes('logout')]).toEqual([200, true]);
  });

  it('attack: one host with a whole IPv6 /48 (65 536 /64s) gets eight shares, not one per /64; honest: an address of another /48 still starts', async () => {
    const starts = [];
    for (let i = 0; i <= 8 * THRESHOLD; i += 1) starts.push((await start(`2001:db8:aa:${i.toString(16)}::1`)).includes('/interaction/'));
    expect(starts).toEqual([...Array<boolean>(8 * THRESHOLD).fill(true), false]);
    expect(await start('2001:db8:bb::1')).toContain('/interaction/');
  });

  it('attack: a signed-in account looping on /authorize?prompt=login (each a new interaction of her session, not a stranger\'s) gets eight shares an hour, from any address; honest: a stranger still starts', async () => {
    const holder = new AddressedBrowser('192.0.2.60');
    await signInAndConsent(holder, running, 'demo-basic', 's');
    const refusals = [];
    let description: string | null = null;
    for (let i = 0; i < 8 * THRESHOLD; i += 1) {
      const { leftTo } = await holder.follow(codeFlowUrl(running.issuer, client, { state: `again-${i}`, prompt: 'login', code_challenge: pkcePair().challenge }), running.baseUrl);
      const refused = leftTo !== undefined && redirectParams(leftTo).get('error') === 'temporarily_unavailable';
      if (refused) description = redirectParams(leftTo).get('error_description');
      refusals.push(refused);
    }
    // Her own sign-in took a few of them (her session, her consent interaction); from the first refusal on, all are.
    const first = refusals.indexOf(true);
    expect([first >= 8 * THRESHOLD - 3, refusals.slice(first).every(Boolean)]).toEqual([true, true]);
    expect(description).toContain('for this account');
    expect(await start('192.0.2.61')).toContain('/interaction/');
  });

  it('attack: an address that used up its share waits the hour, not a quarter of it; honest: after the hour it starts again, and a signed-in person behind it is never held up', async () => {
    const her = new AddressedBrowser('192.0.2.40');
    await signInAndConsent(her, running, 'demo', 'hers');
    const starts = [];
    for (let i = 0; i < THRESHOLD; i += 1) starts.push(await start('192.0.2.40'));
    expect(starts.map((l) => l.includes('/interaction/'))).toEqual(Array<boolean>(THRESHOLD).fill(false).map((_, i) => i < THRESHOLD - 1));
    expect(redirectParams(await start('192.0.2.40')).get('error')).toBe('temporarily_unavailable');
    offset += 16 * 60_000;
    expect(redirectParams(await start('192.0.2.40')).get('error')).toBe('temporarily_unavailable');
    const sso = await her.follow(codeFlowUrl(running.issuer, client, { state: 'again', code_challenge: pkcePair().challenge }), running.baseUrl);
    expect(redirectParams(sso.leftTo as string).get('code')).toEqual(expect.any(String));
    offset += 45 * 60_000;
    expect(await start('192.0.2.40')).toContain('/interaction/');
  });
});

describe('a crowded store: a signed-in account beyond its share', () => {
  // A sign-in counted as a stranger's takes four: her login interaction, her session, her consent interaction, her session renamed.
  const SIGN_IN_SHARES = 4;
  const store = createMemoryStore({ maxBytes: 2 ** 20 });
  const app = appPerSuite({ store, clients: [client], properties: { 'svc.proxy': true, 'svc.login.start-threshold': SIGN_IN_SHARES } });

  beforeAll(async () => {
    for (let i = 0; !(await store.crowded?.()); i += 1) await store.adapter('Grant').upsert(`filler-${i}`, { kind: 'Grant', blob: 'x'.repeat(4000) }, 86_400);
  });

  it("attack: another site sends her signed-in browser to /authorize?prompt=login until her account's share is spent (her session cookie is SameSite=None); honest: she still signs in from another network, the records of her sign-in counted there as a stranger's; the lured browser's own new flows stay refused", async () => {
    const her = new AddressedBrowser('192.0.2.62');
    await signInAndConsent(her, app, 'demo', 's');
    let refused = false;
    for (let i = 0; i < 10 * SIGN_IN_SHARES && !refused; i += 1) {
      const { leftTo } = await her.follow(codeFlowUrl(app.issuer, client, { state: `lured-${i}`, prompt: 'login', code_challenge: pkcePair().challenge }), app.baseUrl);
      refused = leftTo !== undefined && redirectParams(leftTo).get('error') === 'temporarily_unavailable';
    }
    expect(refused).toBe(true);
    const sessions = (await store.inventory.list('Session', { limit: 1000 })).records.length;
    const phone = new AddressedBrowser('192.0.2.63');
    const leftTo = await signInAndConsent(phone, app, 'demo', 'phone');
    expect([redirectParams(leftTo ?? '').has('code'), (await store.inventory.list('Session', { limit: 1000 })).records.length]).toEqual([true, sessions + 1]);
    const interactions = (await store.inventory.list('Interaction', { limit: 1000 })).records.length;
    const again = await her.follow(codeFlowUrl(app.issuer, client, { state: 'lured-again', prompt: 'login', code_challenge: pkcePair().challenge }), app.baseUrl);
    expect([redirectParams(again.leftTo ?? '').get('error'), (await store.inventory.list('Interaction', { limit: 1000 })).records.length]).toEqual(['temporarily_unavailable', interactions]);
  });
});

import { describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import { confidentialClient } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { codeFlowUrl, FormBrowser, pkcePair, redeemCode, redirectParams } from '../helpers/flow.js';
import { finishFlows, peopleAtLogin } from '../helpers/mid-flow.js';

const client = confidentialClient();
const publicClient = { client_id: 'public-rp', token_endpoint_auth_method: 'none' as const, redirect_uris: ['http://rp.localhost/public-cb'] };

/** Floods anonymous authorization requests until the store refuses new ones (nine tenths of the budget). */
async function floodToHeadroom(issuer: string): Promise<void> {
  for (const state of ['x'.repeat(6000), 'x']) {
    let refused = false;
    for (let i = 0; i < 1000 && !refused; i += 1) {
      const response = await fetch(codeFlowUrl(issuer, publicClient, { state }), { redirect: 'manual' });
      refused = !(response.headers.get('location') ?? '').includes('/interaction/');
    }
    expect(refused).toBe(true);
  }
}

describe('the last tenth of the embedded store is kept for flows under way (svc.memory-store.max-mb)', () => {
  // A flood from more addresses than the share by address holds back (below): here all of them are 127.0.0.1.
  const running = appPerSuite({ clients: [client, publicClient], properties: { 'svc.memory-store.max-mb': 1, 'svc.login.start-threshold': 1_000_000 } });

  it('attack: a stranger without cookies who then loops on GET /logout cannot take the last tenth: she who had started still finishes', async () => {
    const her = new FormBrowser();
    const { verifier, challenge } = pkcePair();
    await her.follow(codeFlowUrl(running.issuer, client, { state: 'hers', code_challenge: challenge }), running.baseUrl);
    expect(her.lastPage).toContain('id="login-form"');
    await floodToHeadroom(running.issuer);

    // Each cookie-less GET /logout makes oidc-provider save a new Session holding the logout form's state: a record
    // a stranger creates at will, refused at nine tenths as a new interaction is.
    let refused = 0;
    for (let i = 0; i < 400; i += 1) if ((await fetch(`${running.issuer}/logout`, { redirect: 'manual' })).status === 503) refused += 1;

    const signedIn = await her.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect({ refusedMostLogouts: refused > 390, signInStatus: signedIn.response?.status }).toEqual({ refusedMostLogouts: true, signInStatus: 200 });
    const { leftTo } = await her.submit('consent-allow', {}, running.baseUrl);
    const code = redirectParams(leftTo as string).get('code') as string;
    expect((await redeemCode(running.issuer, client, code, verifier)).body.id_token).toEqual(expect.any(String));
    // Honest twin: her own session is no stranger's, so she may still ask to sign out.
    expect((await her.follow(`${running.issuer}/logout`, running.baseUrl)).response?.status).toBe(200);
  });
});

describe('a crowded store is shared out by client address (svc.login.start-threshold)', () => {
  const store = createMemoryStore({ maxBytes: 2 ** 20 });
  const running = appPerSuite({ store, clients: [client, publicClient], properties: { 'svc.proxy': true, 'svc.login.start-threshold': 20 } });
  const start = (address: string, state = 'x'.repeat(6000)): Promise<Response> =>
    fetch(codeFlowUrl(running.issuer, publicClient, { state }), { redirect: 'manual', headers: { 'x-forwarded-for': address } });
  const interactions = async (): Promise<number> => (await store.inventory.list('Interaction', { limit: 1000 })).records.length;

  it('attack: one address looping on /authorize gets, once the store holds half its limit, 20 more, then temporarily_unavailable at the client and nothing stored; the addresses of one IPv6 /64 share a count; honest: a confidential client\'s pushed requests are not counted, 64 sign-ins behind one address below half were never refused nor counted, and a sign-in from another address starts and finishes', async () => {
    for (let i = 0; i < 64; i += 1) expect((await start('198.51.100.1', `nat-${i}`)).headers.get('location')).toContain('/interaction/');
    let refusal: string | undefined;
    let started = 0;
    while (!refusal && started < 1000) {
      const location = (await start('203.0.113.7')).headers.get('location') ?? '';
      if (location.includes('/interaction/')) started += 1;
      else refusal = location;
    }
    const params = redirectParams(refusal as string);
    expect([params.get('error'), params.get('state')]).toEqual(['temporarily_unavailable', 'x'.repeat(6000)]);
    expect(started).toBeGreaterThan(20);
    const kept = await interactions();
    expect((await start('203.0.113.7')).headers.get('location')).toContain('error=temporarily_unavailable');
    // Another spelling of one subscriber: every address of an IPv6 /64 shares its count.
    const sixes = [];
    for (let i = 1; i <= 21; i += 1) sixes.push((await start(`2001:db8:0:1::${i.toString(16)}`)).headers.get('location') ?? '');
    expect(sixes.map((l) => l.includes('/interaction/'))).toEqual([...Array<boolean>(20).fill(true), false]);
    expect((await start('198.51.100.1')).headers.get('location')).toContain('/interaction/');
    const push = await fetch(`${running.issuer}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '203.0.113.7' },
      body: new URLSearchParams({ client_id: publicClient.client_id, response_type: 'code', redirect_uri: publicClient.redirect_uris[0] as string, scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }).toString(),
    });
    expect([push.status, ((await push.json()) as { error?: string }).error, Number(push.headers.get('retry-after')) > 0]).toEqual([429, 'temporarily_unavailable', true]);
    expect([await interactions(), (await store.inventory.list('PushedAuthorizationRequest', { limit: 1000 })).records.length]).toEqual([kept + 21, 0]);
    // Honest: a confidential client's server pushes for all its users from one address, and is not counted.
    const secret = Buffer.from(`${client.client_id}:${client.client_secret as string}`).toString('base64');
    const pushes = await Promise.all(Array.from({ length: 25 }, async () => (await fetch(`${running.issuer}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '203.0.113.7', authorization: `Basic ${secret}` },
      body: new URLSearchParams({ client_id: client.client_id, response_type: 'code', redirect_uri: client.redirect_uris?.[0] as string, scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }).toString(),
    })).status));
    expect(pushes).toEqual(Array<number>(25).fill(201));

    const her = new FormBrowser();
    const { verifier, challenge } = pkcePair();
    await her.follow(codeFlowUrl(running.issuer, client, { state: 'hers', code_challenge: challenge }), running.baseUrl);
    const { leftTo } = await her.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl).then(() => her.submit('consent-allow', {}, running.baseUrl));
    const code = redirectParams(leftTo as string).get('code') as string;
    expect((await redeemCode(running.issuer, client, code, verifier)).body.id_token).toEqual(expect.any(String));
    expect((await fetch(`${running.baseUrl}/readyz`)).status).toBe(200);
  });
});

describe('a stranger the store refuses for want of headroom leaves no count behind (svc.login.start-threshold)', () => {
  const THRESHOLD = 3;
  const store = createMemoryStore({ maxBytes: 2 ** 20 });
  const running = appPerSuite({ store, clients: [client, publicClient], properties: { 'svc.proxy': true, 'svc.login.start-threshold': THRESHOLD } });
  const start = (address: string): Promise<Response> =>
    fetch(codeFlowUrl(running.issuer, publicClient, { state: 's' }), { redirect: 'manual', headers: { 'x-forwarded-for': address } });
  /** The answer to a stranger: the status and the error the client is sent back with, if any. */
  const answer = async (address: string): Promise<string> => {
    const response = await start(address);
    const location = response.headers.get('location') ?? '';
    return location.includes('/interaction/') ? 'started' : `${response.status} ${location ? redirectParams(location).get('error') : ''}`;
  };
  /** Each count by the share (the store's attempt counters), by key. */
  const counted: string[] = [];
  const fail = store.attempts.fail.bind(store.attempts);
  (store.attempts as { fail: typeof fail }).fail = async (key, rule) => {
    counted.push(key);
    return fail(key, rule);
  };

  it('attack: once the store refuses strangers (nine tenths), 600 more from as many new addresses are refused and counted nowhere, so the last tenth stays theirs: three people mid-flow sign in and redeem their codes', async () => {
    const people = await peopleAtLogin(running, client, 3);
    // Records nobody's share counts, up to the line; then strangers from new addresses, each admitted one counted.
    for (let i = 0; !(await store.adapter('Interaction').upsert(`filler-${i}`, { kind: 'Interaction', params: { state: 'x'.repeat(16 * 1024) } }, 3600).then(() => false, () => true)); i += 1);
    let admitted = 0;
    while (admitted < 1000 && (await answer(`198.51.${100 + (admitted >> 8)}.${admitted & 255}`)) === 'started') admitted += 1;
    expect(admitted).toBeLessThan(1000);
    counted.length = 0;
    const answers = new Map<string, number>();
    for (let i = 0; i < 600; i += 1) {
      const said = await answer(`203.0.${113 + (i >> 8)}.${i & 255}`);
      answers.set(said, (answers.get(said) ?? 0) + 1);
    }
    const leftBehind = counted.length;

    const finished = await finishFlows(running, client, people);
    expect({ answers: [...answers], leftBehind, finished }).toEqual({ answers: [['303 server_error', 600]], leftBehind: 0, finished: Array(3).fill([200, 'string']) });
  });

  it('honest: once room frees below the line, a stranger from a new address is admitted and counted, and one address is still held to its share', async () => {
    for (const id of ['filler-0', 'filler-1']) await store.adapter('Interaction').destroy(id);
    expect(await store.crowded?.()).toBe(true);
    counted.length = 0;
    expect(await answer('192.0.2.77')).toBe('started');
    expect(counted).toHaveLength(1);
    const answers = [];
    for (let i = 1; i <= THRESHOLD; i += 1) answers.push(await answer('192.0.2.77'));
    expect(answers).toEqual(['started', 'started', '303 temporarily_unavailable']);
  });
});

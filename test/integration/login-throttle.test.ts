import { createHash } from 'node:crypto';

import { afterAll, beforeAll, expect, it } from '@jest/globals';

import { throttleAddressKey } from '../../lib/web/client-address.js';

import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, FormBrowser, pkcePair } from '../helpers/flow.js';
import { describeEachStore } from '../helpers/stores.js';
import { capturingLogger } from '../helpers/logs.js';
import { dumpPrefix } from '../helpers/redis.js';

const client = confidentialClient();
const REDIRECT = (client.redirect_uris as string[])[0] as string;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** One login interaction, driven attempt by attempt from a chosen client address. */
async function loginForm(running: RunningApp): Promise<{ attempt(login: string, password: string, forwardedFor: string): Promise<Response> }> {
  const browser = new FormBrowser();
  await browser.follow(
    authorizationUrl(running.issuer, {
      client_id: client.client_id,
      response_type: 'code',
      scope: 'openid',
      redirect_uri: REDIRECT,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    }),
    running.baseUrl,
  );
  const action = browser.formAction('login-form', running.baseUrl);
  return {
    attempt: (login, password, forwardedFor) =>
      browser.request(action, {
        method: 'POST',
        headers: { ...FORM, origin: running.baseUrl, 'x-forwarded-for': forwardedFor },
        body: new URLSearchParams({ login, password }).toString(),
      }),
  };
}

/** Retries `attempt` after each Retry-After until it is no longer 429 (no fixed sleep). */
async function afterCoolDown(attempt: () => Promise<Response>): Promise<Response> {
  let response = await attempt();
  while (response.status === 429) {
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after')) * 250));
    response = await attempt();
  }
  return response;
}

let counter = 0;
/** A fresh documentation address per call (one budget each). */
const freshAddress = (): string => {
  counter += 1;
  return `198.51.${Math.floor(counter / 250)}.${counter % 250}`;
};

describeEachStore('login throttling per name and address (C8)', (_kind, properties) => {
  let running: RunningApp;
  const { logger, lines } = capturingLogger();

  beforeAll(async () => {
    running = await startApp({
      logger,
      clients: [client],
      properties: { ...properties(), 'svc.proxy': true, 'svc.login.lockout-seconds': 1, 'svc.login.lockout-max-seconds': 2 },
    });
  });
  afterAll(async () => running.close());

  it('30 wrong passwords for one name from 30 addresses: 5 are judged, the rest get 429 with a retry time; the right one works after the cool-down', async () => {
    // Only this test's lines: the others of the suite may have run before it.
    const from = lines.length;
    const form = await loginForm(running);
    const statuses: number[] = [];
    let locked: Response | undefined;
    for (let i = 0; i < 30; i += 1) {
      // The name is spelled differently each time: it is counted as one person.
      const spelling = ['demo', 'DEMO', ' demo ', 'Demo', 'ｄｅｍｏ'][i % 5] as string;
      const response = await form.attempt(spelling, `wrong-${i}`, freshAddress());
      statuses.push(response.status);
      if (response.status === 429) locked = response;
      else await response.text();
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true);
    expect(Number(locked?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const page = (await locked?.text()) ?? '';
    expect(page).toContain('id="login-form"');
    expect(page).toMatch(/Too many failed sign-ins\. Try again in \d+ seconds \(after \d\d:\d\d:\d\d UTC\)\./);
    // The right password is refused too while the name is locked: guessing cannot continue.
    expect((await form.attempt('demo', 'demo', freshAddress())).status).toBe(429);
    const after = await afterCoolDown(() => form.attempt('demo', 'demo', freshAddress()));
    expect(after.status).toBe(303);
    const throttled = lines.slice(from).filter((l) => l.includes('"e":"login_throttled"'));
    expect(throttled.length).toBeGreaterThanOrEqual(25);
    expect(throttled[0]).toContain('"locked":"name"');
    // Neither the login name nor a password nor an address is in any line.
    expect(lines.join('\n')).not.toMatch(/demo"|wrong-\d|198\.51\./);
  });

  it('counts one client address across names, and a spoofed X-Forwarded-For left end does not escape it', async () => {
    const form = await loginForm(running);
    const proxyPeer = '203.0.113.77';
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) {
      // The client writes any left entries it likes; the trusted proxy appends the real peer.
      const response = await form.attempt(`nobody-${i}`, 'wrong', `10.0.0.${i}, 192.0.2.${i}, ${proxyPeer}`);
      statuses.push(response.status);
      await response.text();
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    // A real account from the locked address is refused as well; another address is not.
    expect((await form.attempt('demo-basic', 'demo-basic', `10.9.9.9, ${proxyPeer}`)).status).toBe(429);
    expect((await form.attempt('demo-basic', 'demo-basic', freshAddress())).status).toBe(303);
  });

  it('of 20 concurrent wrong passwords for one name, exactly 5 are judged', async () => {
    const form = await loginForm(running);
    const responses = await Promise.all(Array.from({ length: 20 }, (_v, i) => form.attempt('race-victim', `guess-${i}`, freshAddress())));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
  });

  it('a success resets the name: four failures, a success, four more failures are all judged', async () => {
    const first = await loginForm(running);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await first.attempt('demo-basic', 'wrong', freshAddress())).status);
    statuses.push((await first.attempt('demo-basic', 'demo-basic', freshAddress())).status);
    const second = await loginForm(running);
    for (let i = 0; i < 4; i += 1) statuses.push((await second.attempt('demo-basic', 'wrong', freshAddress())).status);
    expect(statuses).toEqual([401, 401, 401, 401, 303, 401, 401, 401, 401]);
  });

  it('does not count an empty field: it guesses nothing', async () => {
    const form = await loginForm(running);
    const address = freshAddress();
    for (let i = 0; i < 8; i += 1) expect((await form.attempt('empty-fields', '', address)).status).toBe(401);
    expect((await form.attempt('demo', 'demo', address)).status).toBe(303);
  });

  it('counts one client once whatever port the trusted proxy appended, and keeps neither its address nor a plain hash of it in the store', async () => {
    const form = await loginForm(running);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await form.attempt(`port-user-${i}`, 'wrong', `evil, 203.0.113.177:5${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const props = properties();
    if (props['svc.redis.url']) {
      const dump = await dumpPrefix(props['svc.redis.url'], props['svc.redis.key-prefix'] ?? '');
      const text = [...dump].flat().join('\n');
      const plain = createHash('sha256').update(`login-address:${throttleAddressKey('203.0.113.177')}`).digest('base64url');
      for (const needle of ['203.0.113.177', plain, createHash('sha256').update('203.0.113.177').digest('hex'), createHash('sha256').update('203.0.113.177').digest('base64url')]) {
        expect(text).not.toContain(needle);
      }
      expect([...dump.keys()].some((k) => k.includes('attempts:'))).toBe(true); // the counter is there, under a key that says nothing
    }
  });
}, ['memory', 'redis standalone']);

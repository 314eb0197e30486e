import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import type { Authenticator } from '../../lib/claims/authenticator.js';
import { createStaticAuthenticator } from '../../lib/demo/accounts.js';
import { fileAuthenticator, hashPassword, readUsersFile } from '../../examples/index.js';

import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { FormBrowser, loginAttempts } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';

const client = confidentialClient();


const judgedInAll = (judged: Map<string, number>): number => [...judged.values()].reduce((a, b) => a + b, 0);

/** The demo accounts, counting the passwords judged per login name. */
function countingAuthenticator(): { authenticator: Authenticator; judged: Map<string, number> } {
  const inner = createStaticAuthenticator();
  const judged = new Map<string, number>();
  return {
    judged,
    authenticator: {
      authenticate: async (login, password) => {
        judged.set(login, (judged.get(login) ?? 0) + 1);
        return inner.authenticate(login, password);
      },
      exists: (sub) => inner.exists(sub),
    },
  };
}

/** Retries `attempt`, moving the store's clock on by each Retry-After, until it is no longer 429. */
async function afterCoolDown(attempt: () => Promise<Response>, pass: (ms: number) => void): Promise<Response> {
  let response = await attempt();
  while (response.status === 429) {
    pass(Number(response.headers.get('retry-after')) * 1000);
    response = await attempt();
  }
  return response;
}

/** `users` written to a users file of their own (examples/users-file.ts); its path. */
const usersFileOf = (users: unknown): string => {
  const path = join(mkdtempSync(join(tmpdir(), 'svc-throttle-users-')), 'users.json');
  writeFileSync(path, JSON.stringify(users));
  return path;
};

/** `value` with its character at `i` changed (a forged copy; `i` not at a separator). */
const changedAt = (value: string, i: number): string => {
  const at = value[i] === '.' || value[i] === '~' ? i + 1 : i;
  return `${value.slice(0, at)}${value[at] === 'A' ? 'B' : 'A'}${value.slice(at + 1)}`;
};

/** A device-cookie entry of the right form and unexpired, whose MACs were made by nobody holding the keys. */
const wellFormedJunk = (i: number): string => `${String(i).padStart(22, 'A')}.zzzzzz.${'B'.repeat(22)}.${'C'.repeat(22)}`;

let counter = 0;
/** A fresh documentation address per call (one budget each). */
const freshAddress = (): string => {
  counter += 1;
  return `198.51.${Math.floor(counter / 250)}.${counter % 250}`;
};

describe('login throttling by completed failures (C8)', () => {
  let running: RunningApp;
  const counting = countingAuthenticator();
  const { logger, lines } = capturingLogger();

  // The store's clock: a cool-down ends when a test moves it on, never while a slow machine is still
  // sending the guesses it must refuse (45 s: longer than the test timeout, short enough for the page to say seconds).
  let ahead = 0;
  const pass = (ms: number): void => {
    ahead += ms;
  };

  // An app (and store) per test: the tests share the demo names and fixed addresses, whose
  // counters one test's failures would leave for the next.
  beforeEach(async () => {
    ahead = 0;
    running = await startApp({
      logger,
      clients: [client],
      authenticator: counting.authenticator,
      store: createMemoryStore({ now: () => Date.now() + ahead }),
      properties: { 'svc.proxy': true, 'svc.login.lockout-seconds': 45, 'svc.login.lockout-max-seconds': 90, 'svc.login.address-threshold': 5 },
    });
  });
  afterEach(async () => running.close());

  it('64 concurrent correct sign-ins of one person from one address all succeed, and one more right after', async () => {
    const address = freshAddress();
    const forms = await Promise.all(Array.from({ length: 64 }, () => loginAttempts(running, client)));
    const statuses = await Promise.all(forms.map(async (form) => (await form.attempt('demo', 'demo', address)).status));
    expect(statuses.filter((s) => s === 303)).toHaveLength(64);
    expect((await (await loginAttempts(running, client)).attempt('demo', 'demo', address)).status).toBe(303);
  });

  it('30 wrong passwords from one browser: 5 are judged, the rest get 429 with a retry time; the right one from that browser does not sign in until the cool-down ends', async () => {
    // Only this test's lines: the others of the suite may have run before it.
    const from = lines.length;
    const form = await loginAttempts(running, client);
    const judgedBefore = judgedInAll(counting.judged);
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
    expect(statuses.filter((s) => s === 403)).toHaveLength(5);
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true);
    expect(judgedInAll(counting.judged)).toBe(judgedBefore + 5);
    expect(Number(locked?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const page = (await locked?.text()) ?? '';
    expect(page).toContain('id="login-form"');
    expect(page).toMatch(/Too many failed sign-ins\. Try again in \d+ seconds \(after \d\d:\d\d:\d\d UTC\)\./);
    // The right password is refused too while the name is locked: guessing cannot continue.
    expect((await form.attempt('demo', 'demo', freshAddress())).status).toBe(429);
    const after = await afterCoolDown(() => form.attempt('demo', 'demo', freshAddress()), pass);
    expect(after.status).toBe(303);
    const throttled = lines.slice(from).filter((l) => l.includes('"e":"login_throttled"'));
    expect(throttled.length).toBeGreaterThanOrEqual(25);
    expect(throttled[0]).toContain('"locked":"name"');
    // Neither the login name nor a password nor an address is in any line.
    expect(lines.join('\n')).not.toMatch(/demo"|wrong-\d|198\.51\./);
  });

  it('honest: failures from many /64s of her IPv6 /48 (a campus, an ISP\'s customers) never lock her own /64: a neighbour cannot keep her from signing in', async () => {
    const form = await loginAttempts(running, client);
    for (let net = 1; net <= 10; net += 1) for (let i = 0; i < 5; i += 1) await (await form.attempt(`neighbour-${net}-${i}`, 'wrong', `2001:db8:e:${net.toString(16)}::1`)).text();
    expect((await form.attempt('demo', 'demo', '2001:db8:e:ff::1')).status).toBe(303);
  });

  it('honest: behind a proxy that spells IPv4 clients as mapped IPv6 (::FFFF:a.b.c.d), a guesser\'s failures lock his address, not his neighbour\'s', async () => {
    const [his, hers] = [freshAddress(), freshAddress()];
    const [a, b, c, d] = his.split('.').map(Number) as [number, number, number, number];
    const hex = `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    const form = await loginAttempts(running, client);
    for (let i = 0; i < 5; i += 1) expect((await form.attempt(`stranger-${i}`, 'wrong', `::FFFF:${his}`)).status).toBe(403);
    // His address is locked however it is spelled ...
    expect((await form.attempt('stranger-5', 'wrong', his)).status).toBe(429);
    expect((await form.attempt('stranger-6', 'wrong', hex)).status).toBe(429);
    // ... and hers, spelled the same way, is not.
    expect((await (await loginAttempts(running, client)).attempt('demo', 'demo', `::FFFF:${hers}`)).status).toBe(303);
  });

  it('of 20 concurrent wrong passwords for one name exactly 5 get through (answered as wrong), the rest get 429; with the right one among them it gets in only if it settles before the fifth failure', async () => {
    const form = await loginAttempts(running, client);
    const responses = await Promise.all(Array.from({ length: 20 }, (_v, i) => form.attempt('race-victim', `guess-${i}`, freshAddress())));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 403)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    // The attack beside it: 19 wrong guesses and the right one, for a real account.
    const guesses = Array.from({ length: 20 }, (_v, i) => (i === 13 ? 'demo-basic' : `guess-${i}`));
    const answers = (await Promise.all(guesses.map((password) => form.attempt('demo-basic', password, freshAddress())))).map((r) => r.status);
    expect(answers.filter((s) => s === 403 || s === 303)).toHaveLength(answers[13] === 303 ? 6 : 5);
    expect(answers.filter((s) => s === 429)).toHaveLength(answers[13] === 303 ? 14 : 15);
    // Her next sign-in after the cool-down ends the lock, for the tests after this one.
    expect((await afterCoolDown(() => form.attempt('demo-basic', 'demo-basic', freshAddress()), pass)).status).toBe(303);
  });

  it("a stranger's 8 failures lock her name, but not her browser with a device cookie (prompt=login); a cookie for another name or a forged one gives nothing", async () => {
    const hers = await loginAttempts(running, client);
    expect((await hers.attempt('demo-basic', 'demo-basic', freshAddress())).status).toBe(303);
    expect(hers.browser.cookie('svc.device')).toBeDefined();
    const stranger = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) statuses.push((await stranger.attempt('demo-basic', `guess-${i}`, freshAddress())).status);
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429, 429, 429]);
    expect((await (await loginAttempts(running, client, hers.browser)).attempt('demo-basic', 'demo-basic', freshAddress())).status).toBe(303);

    // Her device cookie is for demo-basic: for another name, that browser is a stranger too.
    const other = await loginAttempts(running, client);
    for (let i = 0; i < 5; i += 1) await other.attempt('cookie-elsewhere', 'wrong', freshAddress());
    const withHerCookie = await loginAttempts(running, client, hers.browser);
    expect((await withHerCookie.attempt('cookie-elsewhere', 'wrong', freshAddress())).status).toBe(429);
    // A copied cookie with one character changed, for the locked name, is no cookie at all.
    const forged = new FormBrowser();
    const value = hers.browser.cookie('svc.device') ?? '';
    forged.setCookie('svc.device', `${value.slice(0, 3)}${value[3] === 'A' ? 'B' : 'A'}${value.slice(4)}`);
    for (let i = 0; i < 8; i += 1) await stranger.attempt('demo-basic', `again-${i}`, freshAddress());
    expect((await (await loginAttempts(running, client, forged)).attempt('demo-basic', 'demo-basic', freshAddress())).status).toBe(429);
  });

  /** Her browser signed in as demo-basic and his as demo, each with the device cookie (`mine`, `hisValue`) its sign-in set. */
  async function twoDevices(): Promise<{ hers: Awaited<ReturnType<typeof loginAttempts>>; mine: string; hisValue: string }> {
    const hers = await loginAttempts(running, client);
    expect((await hers.attempt('demo-basic', 'demo-basic', freshAddress())).status).toBe(303);
    const his = await loginAttempts(running, client);
    expect((await his.attempt('demo', 'demo', freshAddress())).status).toBe(303);
    return { hers, mine: hers.browser.cookie('svc.device') ?? '', hisValue: his.browser.cookie('svc.device') ?? '' };
  }

  /** Locks `login` with a stranger's wrong guesses (its budget of 5, then 429). */
  async function lockedByStranger(login: string): Promise<void> {
    const stranger = await loginAttempts(running, client);
    let status = 0;
    for (let i = 0; i < 8 && status !== 429; i += 1) status = (await stranger.attempt(login, `guess-${i}`, freshAddress())).status;
    expect(status).toBe(429);
  }

  it("her device cookie still exempts her when another host planted `svc.device` cookies that her browser sends first (junk, a forged copy of hers, another person's valid one); the one cookie written back is hers renewed", async () => {
    const { hers, mine, hisValue } = await twoDevices();
    const [herDevice, hisDevice] = [mine, hisValue].map((value) => value.split('.')[0] ?? '');
    for (const planted of [[wellFormedJunk(0)], ['x'], [changedAt(mine, 5)], [hisValue], [wellFormedJunk(1), changedAt(mine, 30), hisValue]]) {
      await lockedByStranger('demo-basic');
      hers.browser.planted = planted.map((value) => ['svc.device', value]);
      const response = await (await loginAttempts(running, client, hers.browser)).attempt('demo-basic', 'demo-basic', freshAddress());
      expect(response.status).toBe(303);
      expect(response.headers.getSetCookie().filter((line) => line.startsWith('svc.device='))).toHaveLength(1);
      const renewed = hers.browser.cookie('svc.device') ?? '';
      expect(renewed.split('~')).toHaveLength(1);
      expect(renewed.split('.')[0]).toBe(herDevice);
      expect(renewed).not.toContain(hisDevice);
    }
  });

  it("planted `svc.device` cookies exempt nothing: a browser sending 100 of them (well-formed junk, forged copies of hers, another person's valid one for his own name) is locked out of her name like any other", async () => {
    const { hers, mine, hisValue } = await twoDevices();
    await lockedByStranger('demo-basic');
    const planter = new FormBrowser();
    planter.planted = Array.from({ length: 100 }, (_v, i) => ['svc.device', [hisValue, wellFormedJunk(i), changedAt(mine, i % 70)][i % 3] as string]);
    expect((await (await loginAttempts(running, client, planter)).attempt('demo-basic', 'demo-basic', freshAddress())).status).toBe(429);
    // The work is bounded: only the first 8 values are read, so behind these 100 even her own is not
    // (docs/security-model.md: a planter of 8 cookies, like one that overflows the header, still shuts her out).
    hers.browser.planted = planter.planted;
    expect((await (await loginAttempts(running, client, hers.browser)).attempt('demo-basic', 'demo-basic', freshAddress())).status).toBe(429);
  });

  it('a success resets the name: four failures, a success, four more failures are all judged', async () => {
    const first = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await first.attempt('demo', 'wrong', freshAddress())).status);
    statuses.push((await first.attempt('demo', 'demo', freshAddress())).status);
    const second = await loginAttempts(running, client);
    for (let i = 0; i < 4; i += 1) statuses.push((await second.attempt('demo', 'wrong', freshAddress())).status);
    expect(statuses).toEqual([403, 403, 403, 403, 303, 403, 403, 403, 403]);
  });

  it('counts one client address across names (5 here), a spoofed X-Forwarded-For left end does not escape it, and a correct sign-in from another account does not reset it', async () => {
    const proxyPeer = '203.0.113.77';
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await (await loginAttempts(running, client)).attempt(`nobody-${i}`, 'wrong', `10.0.0.${i}, 192.0.2.${i}, ${proxyPeer}`)).status);
    // The client writes any left entries it likes; the trusted proxy appends the real peer.
    statuses.push((await (await loginAttempts(running, client)).attempt('demo', 'demo', `10.9.9.9, ${proxyPeer}`)).status);
    for (let i = 4; i < 7; i += 1) statuses.push((await (await loginAttempts(running, client)).attempt(`nobody-${i}`, 'wrong', `10.0.0.${i}, ${proxyPeer}`)).status);
    expect(statuses).toEqual([403, 403, 403, 403, 303, 403, 429, 429]);
    // A real account from the locked address is refused as well; another address is not.
    expect((await (await loginAttempts(running, client)).attempt('demo', 'demo', `10.9.9.9, ${proxyPeer}`)).status).toBe(429);
    expect((await (await loginAttempts(running, client)).attempt('demo', 'demo', freshAddress())).status).toBe(303);
  });

  it('does not count an empty field: it guesses nothing', async () => {
    const form = await loginAttempts(running, client);
    const address = freshAddress();
    for (let i = 0; i < 8; i += 1) expect((await form.attempt('empty-fields', '', address)).status).toBe(403);
    expect((await form.attempt('demo', 'demo', address)).status).toBe(303);
  });

  it('counts one client once whatever port the trusted proxy appended', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await (await loginAttempts(running, client)).attempt(`port-user-${i}`, 'wrong', `evil, 203.0.113.177:5${i}`)).status);
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429, 429]);
  });
});

describe('login throttling after 100 failures in a row (NIST SP 800-63B 5.2.2)', () => {
  let running: RunningApp;

  beforeAll(async () => {
    // No name cool-down gets in the way: only the run of failures and the address count stop the stranger.
    running = await startApp({ clients: [client], properties: { 'svc.proxy': true, 'svc.login.lockout-threshold': 1000 } });
  });
  afterAll(async () => running.close());

  it("101 failures for her name from a stranger at her own address do not stop her device-cookie browser; other browsers wait for her success", async () => {
    const shared = '192.0.2.200';
    const hers = await loginAttempts(running, client);
    expect((await hers.attempt('demo', 'demo', shared)).status).toBe(303);
    const stranger = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 101; i += 1) statuses.push((await stranger.attempt('demo', `guess-${i}`, shared)).status);
    expect(statuses.filter((s) => s === 403)).toHaveLength(100);
    expect(statuses[100]).toBe(429);
    // A browser without her cookie, from anywhere, may not try her name any more.
    const elsewhere = await loginAttempts(running, client);
    expect((await elsewhere.attempt('demo', 'demo', freshAddress())).status).toBe(429);
    // Her own browser, at the very address the stranger exhausted, signs in.
    expect((await (await loginAttempts(running, client, hers.browser)).attempt('demo', 'demo', shared)).status).toBe(303);
    // Her success ends the run: a new browser elsewhere is judged again.
    expect((await elsewhere.attempt('demo', 'wrong', freshAddress())).status).toBe(403);
  });

  it('a device cookie left on a shared computer gives a stranger no more than 100 failures in a row either; her other browser still signs in', async () => {
    const library = await loginAttempts(running, client);
    expect((await library.attempt('demo-basic', 'demo-basic', freshAddress())).status).toBe(303);
    const home = await loginAttempts(running, client);
    expect((await home.attempt('demo-basic', 'demo-basic', freshAddress())).status).toBe(303);
    // The next person at the library computer has her cookie.
    const next = new FormBrowser();
    next.setCookie('svc.device', library.browser.cookie('svc.device') ?? '');
    const stranger = await loginAttempts(running, client, next);
    const statuses: number[] = [];
    for (let i = 0; i < 101; i += 1) statuses.push((await stranger.attempt('demo-basic', `guess-${i}`, freshAddress())).status);
    expect(statuses.filter((s) => s === 403)).toHaveLength(100);
    expect(statuses[100]).toBe(429);
    expect((await (await loginAttempts(running, client, home.browser)).attempt('demo-basic', 'demo-basic', freshAddress())).status).toBe(303);
  });
});

/**
 * The demo accounts behind a gate that holds every correct sign-in until `size` of them are being
 * judged at once (a slow authenticator: scrypt under load, a directory far away), or until `open()`.
 */
function overlappingAuthenticator(size: number): { authenticator: Authenticator; open(): void; inside(): number } {
  const inner = createStaticAuthenticator();
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  let inside = 0;
  return {
    open: () => release(),
    inside: () => inside,
    authenticator: {
      authenticate: async (login, password) => {
        const account = await inner.authenticate(login, password);
        if (account) {
          inside += 1;
          if (inside >= size) release();
          await all;
        }
        return account;
      },
      exists: (sub) => inner.exists(sub),
    },
  };
}

describe('login throttling: correct sign-ins judged at the same time (C8 rule 1)', () => {
  let running: RunningApp;
  const overlapping = overlappingAuthenticator(8);
  const crowd = overlappingAuthenticator(2);
  let behindNat: RunningApp;

  beforeAll(async () => {
    running = await startApp({ clients: [client], authenticator: overlapping.authenticator, properties: { 'svc.proxy': true } });
    behindNat = await startApp({
      clients: [client],
      authenticator: crowd.authenticator,
      properties: { 'svc.proxy': true, 'svc.login.address-threshold': 5 },
    });
  });
  afterAll(async () => behindNat.close());
  afterAll(async () => running.close());

  it('8 correct sign-ins of one person whose judgements overlap all succeed: none waits for the others and none is refused as busy', async () => {
    const address = freshAddress();
    const forms = await Promise.all(Array.from({ length: 8 }, () => loginAttempts(running, client)));
    // Whatever comes back first opens the gate, so a refusal ends the test instead of hanging it.
    const statuses = await Promise.all(
      forms.map(async (form) => {
        const response = await form.attempt('demo', 'demo', address);
        overlapping.open();
        return response.status;
      }),
    );
    expect(statuses).toEqual(Array.from({ length: 8 }, () => 303));
  }, 30_000);

  it('behind one NAT, four typos of the crowd (below the address threshold of 5) do not make two people signing in at the same time wait for each other', async () => {
    const nat = freshAddress();
    for (let i = 0; i < 4; i += 1) expect((await (await loginAttempts(behindNat, client)).attempt(`colleague-${i}`, 'typo', nat)).status).toBe(403);
    const forms = await Promise.all([0, 1].map(() => loginAttempts(behindNat, client)));
    const statuses = await Promise.all(
      [forms[0]?.attempt('demo', 'demo', nat), forms[1]?.attempt('demo-basic', 'demo-basic', nat)].map(async (attempt) => {
        const response = await attempt;
        crowd.open();
        return response?.status;
      }),
    );
    expect(statuses).toEqual([303, 303]);
  }, 30_000);
});

describe('login throttling in a directory that tells `ERIKA` from `erika` (canonicalLogin)', () => {
  // A directory where logins differ by case (Unix names, many LDAP schemas): two people per pair.
  const pair = (name: string) => [
    { accountId: `mallory-${name}`, login: name.toUpperCase(), password: 'mallory-knows-this' },
    { accountId: `victim-${name}`, login: name, password: 'her-secret' },
  ];

  const running = appPerSuite({
    clients: [client],
    // The demo authenticator compares logins as they are, and says so (`canonicalLogin`).
    authenticator: createStaticAuthenticator([...pair('erika'), ...pair('maria'), ...pair('anna')]),
    properties: { 'svc.proxy': true },
  });

  it("device cookies won by signing in as 'ERIKA' give no budget for 'erika': the name a stranger locked stays locked to those browsers", async () => {
    // Mallory signs in to his own account as often as he likes, each time in a fresh browser.
    const minted = await Promise.all([0, 1, 2].map(() => loginAttempts(running, client)));
    for (const form of minted) expect((await form.attempt('ERIKA', 'mallory-knows-this', freshAddress())).status).toBe(303);
    const stranger = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await stranger.attempt('erika', `guess-${i}`, freshAddress())).status);
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429]);
    for (const [round, form] of minted.entries()) {
      expect((await (await loginAttempts(running, client, form.browser)).attempt('erika', `minted-${round}`, freshAddress())).status).toBe(429);
    }
  });

  it("signing in to his own account 'ANNA' does not forget the failures counted against 'anna' (and the 100 in a row)", async () => {
    const stranger = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await stranger.attempt('anna', `guess-${i}`, freshAddress())).status);
    statuses.push((await (await loginAttempts(running, client)).attempt('ANNA', 'mallory-knows-this', freshAddress())).status);
    for (let i = 4; i < 6; i += 1) statuses.push((await stranger.attempt('anna', `guess-${i}`, freshAddress())).status);
    expect(statuses).toEqual([403, 403, 403, 403, 303, 403, 429]);
  });

  it("her device cookie for 'maria' lets her in while a stranger has locked the name, and his for 'MARIA' lets him in", async () => {
    const hers = await loginAttempts(running, client);
    const his = await loginAttempts(running, client);
    expect((await hers.attempt('maria', 'her-secret', freshAddress())).status).toBe(303);
    expect((await his.attempt('MARIA', 'mallory-knows-this', freshAddress())).status).toBe(303);
    const stranger = await loginAttempts(running, client);
    for (let i = 0; i < 6; i += 1) await stranger.attempt('maria', `again-${i}`, freshAddress());
    expect((await stranger.attempt('maria', 'her-secret', freshAddress())).status).toBe(429);
    expect((await (await loginAttempts(running, client, hers.browser)).attempt('maria', 'her-secret', freshAddress())).status).toBe(303);
    expect((await (await loginAttempts(running, client, his.browser)).attempt('MARIA', 'mallory-knows-this', freshAddress())).status).toBe(303);
  });
});

describe('login throttling for a directory that matches logins by collation, case and invisible characters aside (the default canonical form)', () => {
  // What a lookup by ICU collation does (Intl.Collator, MySQL's default utf8mb4_0900_ai_ci, LDAP's caseIgnoreMatch):
  // `eri\u200bka` is `erika`. No canonicalLogin: the default form applies.
  const accounts = [
    { accountId: 'erika-0001', login: 'erika', password: 'her-secret' },
    { accountId: 'nazanin-0001', login: 'Nazanin\u200cZahra', password: 'her-secret' },
    { accountId: 'nguyen-0001', login: 'Nguy\u1ec5n', password: 'her-secret' },
    { accountId: 'tran-0001', login: 'Tr\u1ea7n', password: 'her-secret' },
  ];
  const same = new Intl.Collator('en', { sensitivity: 'accent' });
  const running = appPerSuite({
    clients: [client],
    authenticator: {
      authenticate: async (login, password) => accounts.find((a) => same.compare(a.login, login) === 0 && a.password === password)?.accountId,
      exists: async (sub) => accounts.some((a) => a.accountId === sub),
    },
    properties: { 'svc.proxy': true },
  });

  it('5 wrong guesses at `erika` lock the spellings the directory takes for her with invisible characters inside: no fresh budget for each', async () => {
    const stranger = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await stranger.attempt('erika', `guess-${i}`, freshAddress())).status);
    for (const login of ['eri\u200bka', 'e\u00adrika', 'erika\u2060', 'ERI\u200dKA', '\u200b\u200berika\ufe0f']) statuses.push((await stranger.attempt(login, 'her-secret', freshAddress())).status);
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429, 429, 429, 429, 429]);
  });

  it('5 wrong guesses at `Nguy\u1ec5n` lock the spellings whose invisible characters sit between a letter and its accents (each left decomposed once they are dropped): no fresh budget for each', async () => {
    const stranger = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await stranger.attempt('Nguy\u1ec5n', `guess-${i}`, freshAddress())).status);
    for (const login of ['Nguye\u200b\u0302\u0303n', 'Nguy\u00ea\u200b\u0303n', 'Nguye\u200b\u0302\u200b\u0303n']) statuses.push((await stranger.attempt(login, 'her-secret', freshAddress())).status);
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429, 429, 429]);
  });

  it('honest: she signs in with the joiner her name is written with, or without it, and in capitals', async () => {
    for (const login of ['Nazanin\u200cZahra', 'NazaninZahra', 'NAZANIN\u200cZAHRA']) expect((await (await loginAttempts(running, client)).attempt(login, 'her-secret', freshAddress())).status).toBe(303);
  });

  it('honest: she signs in typing the accents of her name composed or one by one', async () => {
    for (const login of ['Tr\u1ea7n', 'Tra\u0302\u0300n', 'tr\u00e2\u0300n']) expect((await (await loginAttempts(running, client)).attempt(login, 'her-secret', freshAddress())).status).toBe(303);
  });
});

describe('login throttling with the users-file authenticator: one budget however a letter of the login is composed', () => {
  const running = appPerSuite(async () => ({
    clients: [client],
    authenticator: await fileAuthenticator(readUsersFile(usersFileOf([
      { login: 'Ren\u00e9e', sub: 'renee-0001', password: await hashPassword('her-secret', { N: 2 ** 14, r: 8, p: 1 }) },
      { login: 'Zo\u00eb', sub: 'zoe-0001', password: await hashPassword('her-secret', { N: 2 ** 14, r: 8, p: 1 }) },
    ]))),
    properties: { 'svc.proxy': true },
  }));

  it('5 wrong guesses as `Ren\u00e9e` (NFC) lock `Rene\u0301e` (NFD) too, and a stranger switching forms gets no fresh budget', async () => {
    const stranger = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await stranger.attempt(i % 2 ? 'Ren\u00e9e' : 'Rene\u0301e', `guess-${i}`, freshAddress())).status);
    for (const login of ['Ren\u00e9e', 'Rene\u0301e']) statuses.push((await stranger.attempt(login, 'her-secret', freshAddress())).status);
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429, 429]);
  });

  it('honest: she signs in typing her login composed either way', async () => {
    for (const login of ['Zoe\u0308', 'Zo\u00eb']) expect((await (await loginAttempts(running, client)).attempt(login, 'her-secret', freshAddress())).status).toBe(303);
  });
});

/** The demo accounts; a guess for a held login waits in the authenticator until released. */
function gatedAuthenticator(): { authenticator: Authenticator; hold(login: string): { entered: Promise<void>; release(): void } } {
  const inner = createStaticAuthenticator();
  const held = new Map<string, { enter: () => void; gate: Promise<void> }>();
  return {
    authenticator: {
      async authenticate(login, password) {
        const h = held.get(login);
        if (h) {
          held.delete(login);
          h.enter();
          await h.gate;
        }
        return inner.authenticate(login, password);
      },
      exists: (sub) => inner.exists(sub),
    },
    hold(login) {
      let enter!: () => void;
      let release!: () => void;
      const entered = new Promise<void>((r) => (enter = r));
      const gate = new Promise<void>((r) => (release = r));
      held.set(login, { enter, gate });
      return { entered, release };
    },
  };
}

describe('login throttling: a guess refused by a lock that settled while it was judged (C8)', () => {
  let running: RunningApp;
  const gated = gatedAuthenticator();

  beforeAll(async () => {
    running = await startApp({
      clients: [client],
      authenticator: gated.authenticator,
      // name limit 5 (default), address limit 5, long cool-downs: nothing expires during the test
      properties: { 'svc.proxy': true, 'svc.login.address-threshold': 5, 'svc.login.lockout-seconds': 600 },
    });
  });
  afterAll(async () => running.close());

  /**
   * 3 wrong guesses for `login` from `address`, then `guess` for it held in the authenticator while
   * two typos of other names lock the address, then released (answered 429). Returns that answer and
   * how many wrong guesses for `login` from a fresh address are still judged (403) before 429.
   */
  async function scenario(login: string, guess: string, address: string, elsewhere: string): Promise<{ refused: number; judgedAfter: number }> {
    for (let i = 0; i < 3; i += 1) expect((await (await loginAttempts(running, client)).attempt(login, 'wrong', address)).status).toBe(403);
    const form = await loginAttempts(running, client);
    const held = gated.hold(login);
    const inFlight = form.attempt(login, guess, address);
    await held.entered;
    // The 4th and 5th failures of the address: it locks (the 5th is still answered as judged).
    expect((await (await loginAttempts(running, client)).attempt(`${login}-colleague-1`, 'typo', address)).status).toBe(403);
    expect((await (await loginAttempts(running, client)).attempt(`${login}-colleague-2`, 'typo', address)).status).toBe(403);
    held.release();
    const refused = (await inFlight).status;
    let judgedAfter = 0;
    for (let i = 0; i < 8; i += 1) {
      const status = (await (await loginAttempts(running, client)).attempt(login, 'wrong', elsewhere)).status;
      if (status === 429) break;
      expect(status).toBe(403);
      judgedAfter += 1;
    }
    return { refused, judgedAfter };
  }

  it('leaves the same trace for a right and a wrong refused guess, and a refused right guess does not forget the name\'s failures', async () => {
    const right = await scenario('demo', 'demo', '198.51.100.21', '203.0.113.21');
    const wrong = await scenario('demo-basic', 'not-her-password', '198.51.100.22', '203.0.113.22');
    // Both in-flight guesses are refused alike…
    expect(right.refused).toBe(429);
    expect(wrong.refused).toBe(429);
    // …and what the name's budget says afterwards does not tell them apart.
    expect(right.judgedAfter).toBe(wrong.judgedAfter);
    // A sign-in that was refused is not a success: the 3 failures before it are not forgotten.
    expect(right.judgedAfter).toBeLessThan(5);
  });
});

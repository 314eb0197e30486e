import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import { decorateAdapter, type SvcStore } from '../../adapters/store.js';
import type { Authenticator } from '../../lib/claims/authenticator.js';
import { createStaticAuthenticator } from '../../lib/demo/accounts.js';
import { AuthenticatorError, AuthenticatorUnavailableError } from '../../lib/errors.js';
import { confidentialClient, pairwiseSubOf, startApp, type RunningApp } from '../helpers/app.js';
import { codeFlowUrl, FormBrowser, loginAttempts, pkcePair, redeemCode, signIn } from '../helpers/flow.js';
import { heldCall } from '../helpers/held-call.js';
import { capturingLogger } from '../helpers/logs.js';
import { appPerSuite } from '../helpers/suite-app.js';

/**
 * What an embedder's Authenticator answers, as a real team might write one: the account id it returns becomes the
 * `sub` and is kept in every session, grant and token, and its answers drive the sign-in throttle (C8).
 */
const client = confidentialClient({ redirect_uris: ['https://rp.example/cb'], allow_unencrypted_userinfo: true });
const publicClient = confidentialClient({ client_id: 'public-rp', redirect_uris: ['https://public.example/cb'], subject_type: 'public', allow_unencrypted_userinfo: true });

let counter = 0;
/** A fresh documentation address per call (one address budget each). */
const freshAddress = (): string => {
  counter += 1;
  return `198.51.${Math.floor(counter / 250)}.${counter % 250}`;
};

/** The password every account of the table below has. */
const RIGHT = 'correct horse battery staple';

/** The id of an ID token (payload not verified: only its `sub` is read). */
const subOf = (idToken: string): unknown => (JSON.parse(Buffer.from(idToken.split('.')[1] as string, 'base64url').toString()) as { sub?: unknown }).sub;

/** A person whose directory row leaks into the answer: a team returning the row instead of its id. */
const ROW = { id: 'u-1001', email: 'erika.row@example.com', passwordHash: '$2b$12$rowhashrowhashrowhashro' };

/** Answers an authenticator may give for a right password that are no account id. */
const NOT_IDS: [label: string, answer: unknown, code: string][] = [
  ['a number (an SQL key as the driver reads it)', 1001, 'ACCOUNT_ID_NOT_STRING'],
  ['the directory row instead of its id', ROW, 'ACCOUNT_ID_NOT_STRING'],
  ['a list', ['u-1001'], 'ACCOUNT_ID_NOT_STRING'],
  ['true', true, 'ACCOUNT_ID_NOT_STRING'],
  ['an empty string', '', 'ACCOUNT_ID_MALFORMED'],
  ['256 characters', 'x'.repeat(256), 'ACCOUNT_ID_MALFORMED'],
  ['a NUL inside', 'u-10\u000001', 'ACCOUNT_ID_MALFORMED'],
  ['a line break inside', 'u-1001\nsvc_admin=true', 'ACCOUNT_ID_MALFORMED'],
  ['a trailing space (a CHAR column)', 'u-1001 ', 'ACCOUNT_ID_MALFORMED'],
  ['a name with a space (a DN)', 'cn=Erika Mustermann', 'ACCOUNT_ID_MALFORMED'],
  ['an accent composed (NFC)', 'ren\u00e9e', 'ACCOUNT_ID_MALFORMED'],
  ['an accent decomposed (NFD)', 'rene\u0301e', 'ACCOUNT_ID_MALFORMED'],
  ['a lone surrogate (an id cut inside an emoji)', 'u-1001\ud83d', 'ACCOUNT_ID_MALFORMED'],
];

/** Account ids of the legitimate kinds: database keys, UUIDs, provider-prefixed ids, URNs, 255 characters. */
const IDS = ['u-1001', '0f8fad5b-d9cb-469f-a165-70867728950e', 'auth0|5f7c8ec7c33c6c004bbafe82', 'urn:example:person/1001', 'a:b|c/d@e=f', 'y'.repeat(255)];

describe('the account id an authenticator returns (the sub)', () => {
  const answers = new Map<string, unknown>([...NOT_IDS.map(([label, answer]): [string, unknown] => [label, answer]), ...IDS.map((id): [string, unknown] => [id, id])]);
  const { logger, lines } = capturingLogger();
  const store = createMemoryStore();
  const authenticator: Authenticator = {
    // What a JavaScript module may answer: not only strings and undefined.
    authenticate: async (login, password) => (password === RIGHT ? (answers.get(login) as string | undefined) : undefined),
    exists: async (accountId) => [...answers.values()].includes(accountId),
  };
  const running = appPerSuite({ authenticator, clients: [client, publicClient], store, logger, properties: { 'svc.proxy': true } });

  const stored = async (model: string): Promise<Record<string, unknown>[]> => ((await store.inventory?.list(model, { limit: 500 }))?.records ?? []).map((r) => r.payload);

  it.each(NOT_IDS)('refuses %s with a server_error page naming the fault in the log, never its value, and stores nothing', async (label, answer, code) => {
    const from = lines.length;
    const form = await loginAttempts(running, client);
    const response = await form.attempt(label, RIGHT, freshAddress());
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('The login or password is not correct');
    // Not signed in: no sign-in cookie, no device cookie (a success would forget the name's failures and give one), only
    // the one that carries the failure to the page its 303 sent the browser to.
    expect(response.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(['svc.login-failed']);
    // Only the honest ids of this suite's other tests are in the store.
    const signedIn = [...(await stored('Interaction')).map((p) => (p.result as { login?: { accountId?: unknown } } | undefined)?.login), ...(await stored('Session'))];
    expect(signedIn.filter((p) => p?.accountId !== undefined && !IDS.includes(p.accountId as string))).toEqual([]);
    const failed = lines.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.code === 'SVC_AUTHENTICATOR_FAILED');
    expect(failed.map((l) => [l.cause_name, l.cause_code])).toEqual([['AuthenticatorAnswerInvalid', code]]);
    const logged = lines.slice(from).join('\n');
    for (const value of [ROW.email, ROW.passwordHash, 'Mustermann', label, RIGHT]) expect(logged).not.toContain(value);
    expect(typeof answer === 'string' && answer.length > 3 ? logged.includes(JSON.stringify(answer).slice(1, -1)) : false).toBe(false);
  });

  it('attack: a refused id counts as a failed attempt: five of them lock the name, as wrong passwords would', async () => {
    answers.set('sql-key', 1002);
    const form = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await form.attempt('sql-key', RIGHT, freshAddress())).status);
    expect(statuses).toEqual([500, 500, 500, 500, 500, 429]);
  });

  it.each(IDS.map((id) => [id.length > 40 ? `${id.slice(0, 10)}… (${id.length} characters)` : id, id]))('honest: the id %s signs in, is the sub a public client receives, and its pairwise sub is its own', async (_label, id) => {
    const pkce = pkcePair();
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, publicClient, { code_challenge: pkce.challenge }), { login: id, password: RIGHT });
    const tokens = await redeemCode(running.issuer, publicClient, callbackUrl.searchParams.get('code') as string, pkce.verifier);
    expect(subOf(tokens.body.id_token as string)).toBe(id);
    const pairwise = pkcePair();
    const other = await signIn(codeFlowUrl(running.issuer, client, { code_challenge: pairwise.challenge }), { login: id, password: RIGHT });
    const own = await redeemCode(running.issuer, client, other.callbackUrl.searchParams.get('code') as string, pairwise.verifier);
    expect(subOf(own.body.id_token as string)).toBe(pairwiseSubOf('https://rp.example/cb', id));
  });

  it.each([['undefined', undefined], ['null (a JavaScript module: `row?.id ?? null`)', null], ['false (`ok && row.id`)', false]])(
    'honest: an answer of %s is the wrong-login page (403), as for an unknown login or a wrong password',
    async (_label, answer) => {
      const login = `no-account-${String(answer)}`;
      answers.set(login, answer);
      const form = await loginAttempts(running, client);
      const response = await form.attempt(login, RIGHT, freshAddress());
      expect(response.status).toBe(403);
      expect(await response.text()).toContain('The login or password is not correct');
    },
  );
});

describe('an account id an earlier version stored that the rule now refuses (a DN with a space)', () => {
  const LEGACY = 'cn=Erika Mustermann';
  const inner = createMemoryStore();
  /** Records as an earlier version wrote them: every `legacy-0001` the sign-in below stores is written as LEGACY. */
  const store: SvcStore = Object.assign(Object.create(inner) as SvcStore, {
    adapter: (model: string) => {
      const adapter = inner.adapter(model);
      return decorateAdapter(adapter, { upsert: (id, payload, expiresIn) => adapter.upsert(id, JSON.parse(JSON.stringify(payload).replaceAll('"legacy-0001"', JSON.stringify(LEGACY))) as typeof payload, expiresIn) });
    },
  });
  let upgraded = false;
  const authenticator: Authenticator = {
    authenticate: async (_login, password) => (password === RIGHT ? (upgraded ? LEGACY : 'legacy-0001') : undefined),
    exists: async (accountId) => accountId === LEGACY || accountId === 'legacy-0001',
  };
  const running = appPerSuite({ authenticator, clients: [client, publicClient], store, properties: { 'svc.proxy': true } });

  it('her session goes on with the sub she had, public and pairwise; a new sign-in with that id is refused and counted', async () => {
    const pkce = pkcePair();
    const before = await signIn(codeFlowUrl(running.issuer, publicClient, { code_challenge: pkce.challenge }), { login: 'erika', password: RIGHT });
    const first = await redeemCode(running.issuer, publicClient, before.callbackUrl.searchParams.get('code') as string, pkce.verifier);
    expect(subOf(first.body.id_token as string)).toBe(LEGACY);
    upgraded = true;
    const pairwise = pkcePair();
    const again = await signIn(codeFlowUrl(running.issuer, client, { code_challenge: pairwise.challenge }), { browser: before.browser });
    const tokens = await redeemCode(running.issuer, client, again.callbackUrl.searchParams.get('code') as string, pairwise.verifier);
    expect(subOf(tokens.body.id_token as string)).toBe(pairwiseSubOf('https://rp.example/cb', LEGACY));
    const form = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await form.attempt('erika', RIGHT, freshAddress())).status);
    expect(statuses).toEqual([500, 500, 500, 500, 500, 429]);
  });
});

/** An LDAP bind as ldapjs does it: a wrong password rejects (InvalidCredentialsError), it does not answer `undefined`. */
class InvalidCredentialsError extends Error {
  readonly code = 49;
  constructor(dn: string) {
    super(`Invalid Credentials for ${dn}`);
    this.name = 'InvalidCredentialsError';
  }
}

describe('an authenticator that throws for a wrong password (an LDAP bind) is throttled as one answering undefined', () => {
  const { logger, lines } = capturingLogger();
  let ahead = 0;
  let directoryDown = false;
  const authenticator: Authenticator = {
    async authenticate(login, password) {
      if (directoryDown) throw Object.assign(new Error(`connect ECONNREFUSED for uid=${login}`), { code: 'ECONNREFUSED' });
      if (password !== RIGHT) throw new InvalidCredentialsError(`uid=${login},ou=people,dc=example`);
      return `id-${login}`;
    },
    exists: async (accountId) => accountId.startsWith('id-'),
  };
  const running = appPerSuite({ authenticator, clients: [client], logger, store: createMemoryStore({ now: () => Date.now() + ahead }), properties: { 'svc.proxy': true, 'svc.login.lockout-seconds': 45 } });

  it('attack: after 5 throwing guesses the name is locked (429), the right password too, until the cool-down ends; no login or password in the log', async () => {
    const from = lines.length;
    const form = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i += 1) statuses.push((await form.attempt('erika', `guess-${i}`, freshAddress())).status);
    statuses.push((await form.attempt('erika', RIGHT, freshAddress())).status);
    expect(statuses).toEqual([500, 500, 500, 500, 500, 429, 429, 429, 429]);
    ahead += 45_000;
    expect((await form.attempt('erika', RIGHT, freshAddress())).status).toBe(303);
    expect(lines.slice(from).join('\n')).not.toMatch(/erika|guess-\d|correct horse/);
  });

  it('honest: her directory down twice while she tries, then up: she signs in, and that success forgets those two', async () => {
    const form = await loginAttempts(running, client);
    directoryDown = true;
    try {
      for (let i = 0; i < 2; i += 1) expect((await form.attempt('maria', RIGHT, freshAddress())).status).toBe(500);
    } finally {
      directoryDown = false;
    }
    expect((await form.attempt('maria', RIGHT, freshAddress())).status).toBe(303);
    const typos = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await typos.attempt('maria', `typo-${i}`, freshAddress())).status);
    expect(statuses).toEqual([500, 500, 500, 500]);
  });
});

describe('a directory outage the authenticator reports by throwing AuthenticatorUnavailableError', () => {
  const { logger, lines } = capturingLogger();
  let directoryDown = false;
  let existsDown = false;
  /** An LDAP authenticator as docs/embedding.md has it: a refused connection is an outage, a refused bind a wrong password. */
  const authenticator: Authenticator = {
    async authenticate(login, password) {
      if (directoryDown) throw new AuthenticatorUnavailableError({ cause: Object.assign(new Error(`connect ECONNREFUSED for uid=${login}`), { code: 'ECONNREFUSED' }) });
      if (password !== RIGHT) throw new InvalidCredentialsError(`uid=${login},ou=people,dc=example`);
      return `id-${login}`;
    },
    async exists(accountId) {
      if (existsDown) throw new AuthenticatorUnavailableError({ cause: Object.assign(new Error(`no row for ${accountId}`), { name: 'PoolTimeoutError' }) });
      return accountId.startsWith('id-');
    },
  };
  const running = appPerSuite({ authenticator, clients: [client], logger, properties: { 'svc.proxy': true, 'svc.login.address-threshold': 10, 'svc.login.lockout-seconds': 600 } });
  /** One office behind one NAT address. */
  const office = '203.0.113.7';

  it('honest: twenty sign-ins behind one address during the outage get 503 and count nothing: afterwards she and a colleague sign in on new devices, and she on her own', async () => {
    const own = await loginAttempts(running, client);
    expect((await own.attempt('paula', RIGHT, office)).status).toBe(303);
    const from = lines.length;
    const during: number[] = [];
    directoryDown = true;
    try {
      const mine = await loginAttempts(running, client, own.browser);
      for (let i = 0; i < 6; i += 1) during.push((await mine.attempt('paula', RIGHT, office)).status);
      const fresh = await loginAttempts(running, client);
      for (let i = 0; i < 7; i += 1) during.push((await fresh.attempt('paula', RIGHT, office)).status);
      for (let i = 0; i < 7; i += 1) during.push((await (await loginAttempts(running, client)).attempt(`colleague-${i}`, RIGHT, office)).status);
    } finally {
      directoryDown = false;
    }
    expect(during).toEqual(Array(20).fill(503));
    const answer = await (await loginAttempts(running, client)).attempt('paula', RIGHT, office);
    expect(answer.status).toBe(303);
    expect((await (await loginAttempts(running, client)).attempt('colleague-0', RIGHT, office)).status).toBe(303);
    expect((await (await loginAttempts(running, client, own.browser)).attempt('paula', RIGHT, office)).status).toBe(303);
    const failed = lines.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.code === 'SVC_AUTHENTICATOR_UNAVAILABLE');
    expect(failed).toHaveLength(20);
    expect(failed.map((l) => [l.status, l.plugin, l.cause_name, l.cause_code])).toEqual(Array(20).fill([503, 'authenticator', 'Error', 'ECONNREFUSED']));
    expect(lines.slice(from).join('\n')).not.toMatch(/paula|colleague|correct horse|ECONNREFUSED for/);
  });

  it('the page says the sign-in is unavailable for now, not that the password is wrong, and sets no cookie', async () => {
    directoryDown = true;
    try {
      const response = await (await loginAttempts(running, client)).attempt('paula', RIGHT, freshAddress());
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ error: 'server_error', error_description: 'the sign-in service is temporarily unavailable, try again shortly' });
      expect(response.headers.getSetCookie()).toEqual([]);
    } finally {
      directoryDown = false;
    }
  });

  it('honest: `exists` unavailable after her right password: 503, not counted; she signs in once it answers', async () => {
    const form = await loginAttempts(running, client);
    const during: number[] = [];
    existsDown = true;
    try {
      for (let i = 0; i < 7; i += 1) during.push((await form.attempt('ines', RIGHT, freshAddress())).status);
    } finally {
      existsDown = false;
    }
    expect(during).toEqual(Array(7).fill(503));
    expect((await form.attempt('ines', RIGHT, freshAddress())).status).toBe(303);
  });

  it('a signed-in browser whose `exists` is unavailable is sent back with that fixed text, as in a store outage, and goes on once it answers', async () => {
    const { browser } = await signIn(codeFlowUrl(running.issuer, client), { login: 'rosa', password: RIGHT });
    existsDown = true;
    try {
      const step = await browser.follow(codeFlowUrl(running.issuer, client), running.baseUrl);
      const back = new URL(step.leftTo as string).searchParams;
      expect([back.get('error'), back.get('error_description')]).toEqual(['server_error', 'the sign-in service is temporarily unavailable, try again shortly']);
    } finally {
      existsDown = false;
    }
    const again = await browser.follow(codeFlowUrl(running.issuer, client), running.baseUrl);
    expect(new URL(again.leftTo as string).searchParams.get('code')).toEqual(expect.any(String));
  });

  it('attack: wrong passwords the directory refuses still count, and an outage between them erases none: the fifth locks the name', async () => {
    const form = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await form.attempt('oskar', `guess-${i}`, freshAddress())).status);
    directoryDown = true;
    try {
      for (let i = 0; i < 3; i += 1) statuses.push((await form.attempt('oskar', `guess-${i}`, freshAddress())).status);
    } finally {
      directoryDown = false;
    }
    for (let i = 3; i < 6; i += 1) statuses.push((await form.attempt('oskar', `guess-${i}`, freshAddress())).status);
    statuses.push((await form.attempt('oskar', RIGHT, freshAddress())).status);
    expect(statuses).toEqual([500, 500, 500, 503, 503, 503, 500, 500, 429, 429]);
  });
});

describe('what else an authenticator throws counts as a failed attempt', () => {
  const demo = createStaticAuthenticator();
  const authenticator: Authenticator = {
    ...demo,
    // An embedder throwing the class svc-connect logs its faults with: a fault, not an outage.
    authenticate: async (login, password) => {
      if (login === 'svc-error') throw new AuthenticatorError(new Error('boom'));
      // A Proxy whose prototype throws itself when read (each `instanceof` of it): it took the process down from Koa's `onerror`.
      if (login === 'lazy') {
        const lazy: Error = new Proxy(Object.assign(new Error(`login ${login} is locked in the directory`), { status: 400, expose: true }), { getPrototypeOf: () => { throw lazy; } });
        throw lazy;
      }
      return demo.authenticate(login, password);
    },
  };
  const running = appPerSuite({ authenticator, clients: [client], properties: { 'svc.proxy': true } });

  it('attack: a thrown Proxy whose prototype throws when read is a server_error page, never its message, and the server goes on', async () => {
    const response = await (await loginAttempts(running, client)).attempt('lazy', 'a-password', freshAddress());
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('is locked in the directory');
  });

  it('honest: the demo account signs in beside it', async () => {
    expect((await (await loginAttempts(running, client)).attempt('demo', 'demo', freshAddress())).status).toBe(303);
  });

  it('attack: an AuthenticatorError thrown by the authenticator is a fault: five lock the name', async () => {
    const form = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await form.attempt('svc-error', `guess-${i}`, freshAddress())).status);
    expect(statuses).toEqual([500, 500, 500, 500, 500, 429]);
  });
});

describe('an `exists` that throws or hangs after a right password', () => {
  const demo = createStaticAuthenticator();
  let existsFails: 'throws' | 'hangs' | undefined;
  const authenticator: Authenticator = {
    ...demo,
    exists: async (accountId) => {
      if (existsFails === 'throws') throw Object.assign(new Error(`SELECT disabled FROM accounts WHERE id = '${accountId}'`), { code: 'ER_LOCK_WAIT_TIMEOUT' });
      if (existsFails === 'hangs') return new Promise<boolean>(() => undefined);
      return demo.exists(accountId);
    },
  };
  const running = appPerSuite({ authenticator, clients: [client], properties: { 'svc.proxy': true, 'svc.authenticator.timeout-ms': 300 } });

  it.each([['throws'], ['hangs']] as const)('honest: her right password is not counted as a wrong one when `exists` %s: she signs in once it answers', async (fault) => {
    const form = await loginAttempts(running, client);
    const during: number[] = [];
    existsFails = fault;
    try {
      for (let i = 0; i < 6; i += 1) during.push((await form.attempt('demo', 'demo', freshAddress())).status);
    } finally {
      existsFails = undefined;
    }
    expect(during).toEqual(Array(6).fill(500));
    expect((await form.attempt('demo', 'demo', freshAddress())).status).toBe(303);
  });

  it('attack: wrong passwords for the name still lock it after five', async () => {
    const form = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await form.attempt('demo-basic', `guess-${i}`, freshAddress())).status);
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429]);
  });
});

describe('an authenticator that never answers (svc.authenticator.timeout-ms)', () => {
  const { logger, lines } = capturingLogger();
  let judged = 0;
  let existsHangs = false;
  const demo = createStaticAuthenticator();
  const authenticator: Authenticator = {
    ...demo,
    // A callback wrapped in a promise that resolves on success and forgets to reject on a wrong password.
    authenticate: (login, password) => {
      judged += 1;
      return new Promise((resolve) => void demo.authenticate(login, password).then((id) => id && resolve(id)));
    },
    exists: (accountId) => (existsHangs ? new Promise<boolean>(() => undefined) : demo.exists(accountId)),
  };
  const running = appPerSuite({ authenticator, clients: [client], logger, properties: { 'svc.proxy': true, 'svc.authenticator.timeout-ms': 500, 'svc.login.lockout-seconds': 600 } });

  it('attack: an unanswered guess ends in a server_error page and counts as a failure: after 5 the name is locked and the authenticator is not asked again', async () => {
    const from = lines.length;
    const form = await loginAttempts(running, client);
    const statuses: number[] = [];
    const before = judged;
    for (let i = 0; i < 7; i += 1) statuses.push((await form.attempt('demo', `guess-${i}`, freshAddress())).status);
    expect(statuses).toEqual([500, 500, 500, 500, 500, 429, 429]);
    expect(judged - before).toBe(5);
    const causes = lines.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.code === 'SVC_AUTHENTICATOR_FAILED').map((l) => l.cause_name);
    expect(causes).toEqual(Array(5).fill('AuthenticatorTimeout'));
  });

  it('honest: the other demo account signs in, and a browser whose `exists` never answers gets a server_error page, not a request left open', async () => {
    const { callbackUrl, browser } = await signIn(codeFlowUrl(running.issuer, client), { login: 'demo-basic', password: 'demo-basic' });
    expect(callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
    existsHangs = true;
    try {
      const step = await browser.follow(codeFlowUrl(running.issuer, client), running.baseUrl);
      expect(step.response?.status).toBe(500);
    } finally {
      existsHangs = false;
    }
  });
});

describe('an authenticator whose right answer comes after svc.authenticator.timeout-ms', () => {
  const call = heldCall();
  const demo = createStaticAuthenticator();
  const store = createMemoryStore();
  let late: Promise<string | undefined> | undefined;
  const authenticator: Authenticator = {
    ...demo,
    authenticate: (login, password) => (late = (async () => (await call.pass(), demo.authenticate(login, password)))()),
  };
  const running = appPerSuite({ authenticator, clients: [client], store, properties: { 'svc.proxy': true, 'svc.authenticator.timeout-ms': 300 } });

  it('her late success leaves nothing behind: no cookie but the failure its page shows, no signed-in interaction, no session', async () => {
    const form = await loginAttempts(running, client);
    const held = call.hold();
    const answer = form.attempt('demo', 'demo', freshAddress());
    await held.arrived;
    const response = await answer;
    expect(response.status).toBe(500);
    held.release();
    expect(await late).toBe('demo-0001');
    expect(response.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(['svc.login-failed']);
    const interactions = (await store.inventory.list('Interaction', { limit: 500 })).records.map((r) => r.payload.result);
    expect(interactions.filter((result) => result !== undefined)).toEqual([]);
    expect((await store.inventory.list('Session', { limit: 500 })).records.filter((r) => r.payload.accountId !== undefined)).toEqual([]);
    expect((await form.attempt('demo', 'demo', freshAddress())).status).toBe(303);
  });
});

describe('an authenticator that answers slowly within svc.authenticator.timeout-ms (default 10 s)', () => {
  let running: RunningApp;
  const call = heldCall();
  const demo = createStaticAuthenticator();
  beforeAll(async () => {
    running = await startApp({ clients: [client], authenticator: { ...demo, authenticate: async (login, password) => (await call.pass(), demo.authenticate(login, password)) } });
  });
  afterAll(async () => running.close());

  it('honest: a sign-in the directory answers late still signs her in', async () => {
    const form = await loginAttempts(running, client);
    const held = call.hold();
    const answer = form.attempt('demo', 'demo', freshAddress());
    await held.arrived;
    held.release();
    expect((await answer).status).toBe(303);
  });
});

describe('an authenticator that signs in a disabled account (`exists` says no)', () => {
  const demo = createStaticAuthenticator();
  const disabled = new Set(['demo-0002']);
  const store = createMemoryStore();
  const authenticator: Authenticator = { ...demo, exists: async (accountId) => !disabled.has(accountId) && demo.exists(accountId) };
  const running = appPerSuite({ authenticator, clients: [client], store, properties: { 'svc.proxy': true } });

  it('answers her right password as a wrong one (403, the same message), sets no cookie but the failure its page shows, stores no session, and counts the failure', async () => {
    const form = await loginAttempts(running, client);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const response = await form.attempt('demo-basic', 'demo-basic', freshAddress());
      statuses.push(response.status);
      if (i === 0) {
        expect(await response.text()).toContain('The login or password is not correct');
        expect(response.headers.getSetCookie().map((c) => c.split('=')[0])).toEqual(['svc.login-failed']);
      }
    }
    expect(statuses).toEqual([403, 403, 403, 403, 403, 429]);
    const sessions = (await store.inventory?.list('Session', { limit: 500 }))?.records ?? [];
    expect(sessions.filter((r) => r.payload.accountId === 'demo-0002')).toEqual([]);
  });

  it('honest: an enabled account signs in', async () => {
    const { callbackUrl } = await signIn(codeFlowUrl(running.issuer, client), { browser: new FormBrowser() });
    expect(callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
  });
});

describe("an authenticator whose canonicalLogin throws or answers no string", () => {
  const { logger, lines } = capturingLogger();
  const demo = createStaticAuthenticator();
  /** A login the directory refuses by an HTTP error a framework would show, its message naming what was typed. */
  const refusing = (login: string): never => {
    throw Object.assign(new Error(`login ${login} has characters we do not allow`), { status: 400, expose: true, code: 'LOGIN_REFUSED' });
  };
  const authenticator: Authenticator = {
    ...demo,
    canonicalLogin(login) {
      if (login.includes('<')) return refusing(login);
      // A block body that forgot its `return` for some logins, as a JavaScript module may have it.
      return (login.startsWith('x') ? undefined : login) as string;
    },
  };
  const running = appPerSuite({ authenticator, clients: [client], logger, properties: { 'svc.proxy': true } });

  it.each([
    ['throws', 'erika<script>', 'Error', 'LOGIN_REFUSED'],
    ['answers undefined', 'xaver', 'AuthenticatorAnswerInvalid', 'CANONICAL_LOGIN_NOT_STRING'],
  ])('%s: a server_error page, the log naming the authenticator, never the login typed', async (_label, login, name, code) => {
    const from = lines.length;
    const response = await (await loginAttempts(running, client)).attempt(login, 'a-password', freshAddress());
    expect(response.status).toBe(500);
    const page = await response.text();
    expect(page).not.toContain('characters we do not allow');
    const failed = lines.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.code === 'SVC_AUTHENTICATOR_FAILED');
    expect(failed.map((l) => [l.cause_name, l.cause_code])).toEqual([[name, code]]);
    expect(lines.slice(from).join('\n')).not.toContain(login);
  });

  it('honest: a login it answers signs in', async () => {
    expect((await (await loginAttempts(running, client)).attempt('demo', 'demo', freshAddress())).status).toBe(303);
  });
});

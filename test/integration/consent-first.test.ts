import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';

import { errors } from 'oidc-provider';

import { createMemoryStore } from '../../adapters/memory.js';
import { createStaticAuthenticator } from '../../lib/demo/accounts.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import type { ClaimModule } from '../../lib/index.js';
import { countingModules } from '../helpers/claims-requests.js';
import { clockAhead } from '../helpers/clock.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { FormBrowser, redirectParams, signIn } from '../helpers/flow.js';
import { registerClient, type RegisteredClient, registeredClientParams, registeredClientUrl, updateRegistration } from '../helpers/clients.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';

const RIGHT = 'erika.mustermann@example.com';
const WRONG = 'someone.else@example.com';

/**
 * Consent first (C8): before a person has approved a client, nothing that depends on her
 * attributes reaches it: not a value, not whether she has a claim, not whether a guess matches.
 * The attacker is a client of its own with its own key, sending her browser (which holds a session
 * from another client) to /authorize.
 */
describe('nothing about a person reaches a client before she consents (C8)', () => {
  let running: RunningApp;
  let friend: RegisteredClient;
  let attacker: RegisteredClient;
  let calls = { count: 0 };
  let store: CountingStore;

  beforeAll(async () => {
    const counted = countingModules(createDemoClaimModules());
    calls = counted.calls;
    store = countingStore(createMemoryStore());
    running = await startApp({ claimModules: counted.modules, store });
    [friend, attacker] = await Promise.all([registerClient(running, 'rsa'), registerClient(running, 'rsa')]);
  });
  afterAll(async () => running.close());

  const urlFor = (client: RegisteredClient, params: Record<string, string>): string => registeredClientUrl(running.issuer, client, params);
  const essentialEmail = (value: string): string => JSON.stringify({ id_token: { email: { essential: true, value } } });

  /** A browser signed in as `login` through the friendly client (consented there). */
  const personWithSession = async (login = 'demo'): Promise<FormBrowser> => {
    const { callbackUrl, browser } = await signIn(urlFor(friend, { scope: 'openid email' }), { login, password: login });
    expect(callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
    return browser;
  };

  let browser: FormBrowser;
  beforeEach(async () => {
    browser = await personWithSession();
  });

  it.each([
    ['a wrong e-mail guess', essentialEmail(WRONG)],
    ['a right e-mail guess', essentialEmail(RIGHT)],
    ['an essential birthdate', JSON.stringify({ id_token: { birthdate: { essential: true, value: '1970-01-01' } } })],
    ['an essential verified ID card', JSON.stringify({ userinfo: { 'svc.ver.idcard.l3.nfc': { essential: true } } })],
  ])('shows the consent page for %s, asking no claim module', async (_label, claims) => {
    const before = calls.count;
    const step = await browser.follow(urlFor(attacker, { claims }), running.baseUrl);
    expect(step.leftTo).toBeUndefined();
    expect(browser.lastPage).toContain('id="consent-allow"');
    expect(calls.count).toBe(before);
  });

  it('answers prompt=none with consent_required whatever she holds, asking no claim module', async () => {
    const before = calls.count;
    const outcomes = [];
    for (const guess of [WRONG, RIGHT]) {
      const step = await browser.follow(urlFor(attacker, { claims: essentialEmail(guess), prompt: 'none' }), running.baseUrl);
      const params = redirectParams(step.leftTo as string);
      outcomes.push([params.get('error'), params.get('error_description'), params.get('code')]);
    }
    expect(outcomes[0]).toEqual(outcomes[1]);
    expect(outcomes[0]?.[0]).toBe('consent_required');
    expect(calls.count).toBe(before);
  });

  it('answers prompt=none with consent_required whatever max_age says, so an unapproved client cannot tell when she signed in', async () => {
    // Her session is 10 minutes old (the clock moved, not waited for): max_age 60 would need a new sign-in.
    const later = clockAhead(600_000);
    try {
      const answers = [];
      for (const maxAge of ['1', '60', '599', '601', '86400']) {
        const step = await browser.follow(urlFor(attacker, { prompt: 'none', max_age: maxAge }), running.baseUrl);
        answers.push(redirectParams(step.leftTo as string).get('error'));
      }
      expect(answers).toEqual(Array(5).fill('consent_required'));
    } finally {
      later.restore();
    }
  });

  it('honest: for the client she approved, max_age with prompt=none still asks for a new sign-in (login_required) once her session is older, and not before', async () => {
    const later = clockAhead(600_000);
    try {
      const older = await browser.follow(urlFor(friend, { prompt: 'none', max_age: '60', scope: 'openid email' }), running.baseUrl);
      expect(redirectParams(older.leftTo as string).get('error')).toBe('login_required');
      const younger = await browser.follow(urlFor(friend, { prompt: 'none', max_age: '86400', scope: 'openid email' }), running.baseUrl);
      expect(redirectParams(younger.leftTo as string).get('code')).toEqual(expect.any(String));
    } finally {
      later.restore();
    }
    const fresh = new FormBrowser();
    const anonymous = await fresh.follow(urlFor(attacker, { prompt: 'none', max_age: '60' }), running.baseUrl);
    expect(redirectParams(anonymous.leftTo as string).get('error')).toBe('login_required');
  });

  it('answers access_denied for a wrong guess only after she allows, and a code for a right one', async () => {
    const wrong = await signIn(urlFor(attacker, { claims: essentialEmail(WRONG) }), { browser });
    expect(wrong.callbackUrl.searchParams.get('error')).toBe('access_denied');
    expect(wrong.callbackUrl.searchParams.get('error_description')).toBe('an essential claim is not available for this account');
    const right = await signIn(urlFor(attacker, { claims: essentialEmail(RIGHT) }), { browser });
    expect(right.callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
  });

  it('with a covering grant (names, never values), prompt=none may answer access_denied: she consented to that client', async () => {
    await signIn(urlFor(attacker, { claims: essentialEmail(RIGHT) }), { browser });
    const step = await browser.follow(urlFor(attacker, { claims: essentialEmail(WRONG), prompt: 'none' }), running.baseUrl);
    expect(redirectParams(step.leftTo as string).get('error')).toBe('access_denied');
  });

  it('shows the consent page again when a client with a grant for other claims asks for one more essential claim', async () => {
    await signIn(urlFor(attacker, { scope: 'openid profile' }), { browser });
    const before = calls.count;
    await browser.follow(urlFor(attacker, { scope: 'openid profile', claims: essentialEmail(WRONG) }), running.baseUrl);
    expect(browser.lastPage).toContain('id="consent-allow"');
    expect(calls.count).toBe(before);
  });

  it('keeps no missing-claim name in the interactions it stores', async () => {
    const before = store.written('Interaction').length;
    const { callbackUrl } = await signIn(urlFor(attacker, { claims: essentialEmail(WRONG) }), { browser });
    expect(callbackUrl.searchParams.get('error')).toBe('access_denied');
    const saved = store.written('Interaction').slice(before).map((p) => JSON.parse(p) as { prompt: { name: string; details: unknown } });
    const essential = saved.filter((i) => i.prompt.name === 'essential_claims');
    expect(essential.length).toBeGreaterThan(0);
    for (const interaction of essential) expect(interaction.prompt.details).toEqual({});
    for (const payload of store.written('Interaction').slice(before)) expect(payload).not.toMatch(/missingEssentialClaims|for this account: /);
  });

  it('treats demo-basic, who lacks the verified ID card, exactly like demo until she allows', async () => {
    const claims = JSON.stringify({ userinfo: { 'svc.ver.idcard.l3.nfc': { essential: true } } });
    const basic = await personWithSession('demo-basic');
    const pages = [];
    for (const b of [browser, basic]) {
      await b.follow(urlFor(attacker, { claims }), running.baseUrl);
      pages.push(b.lastPage.includes('id="consent-allow"'));
    }
    expect(pages).toEqual([true, true]);
    expect((await signIn(urlFor(attacker, { claims }), { browser: basic })).callbackUrl.searchParams.get('error')).toBe('access_denied');
    expect((await signIn(urlFor(attacker, { claims }), { browser })).callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
  });
});

/**
 * A module may provide names by pattern (C5), also names outside the vocabulary `claims_supported` lists; no consent
 * page asks for such a name, so no grant covers it, and it never travels and is never looked up for a request: an
 * essential one answers nothing about her, whether she holds it or not, nor whether a guessed value matches.
 */
describe('a pattern-provided claim outside claims_supported is no oracle (C5, C8)', () => {
  const PASSPORT = 'svc.ver.passport.l3';
  const asked: string[] = [];
  const passportModule: ClaimModule = {
    name: 'passport',
    provides: ['svc.ver.**'],
    resolve: (accountId, claims) => {
      asked.push(...claims);
      return accountId === 'demo-0001' && claims.includes(PASSPORT) ? { [PASSPORT]: 'P1234567' } : {};
    },
  };
  let running: RunningApp;
  let friend: RegisteredClient;
  let attacker: RegisteredClient;
  beforeAll(async () => {
    running = await startApp({ claimModules: [...createDemoClaimModules(), passportModule] });
    [friend, attacker] = await Promise.all([registerClient(running, 'rsa'), registerClient(running, 'rsa')]);
  });
  afterAll(async () => running.close());

  const urlFor = (client: RegisteredClient, params: Record<string, string>): string => registeredClientUrl(running.issuer, client, params);
  /** What the attacker, consented to for `openid` only, sees for `login` asking `claims` with prompt=none. */
  const outcome = async (login: string, claims: unknown): Promise<(string | null)[]> => {
    const { browser } = await signIn(urlFor(friend, { scope: 'openid' }), { login, password: login });
    expect((await signIn(urlFor(attacker, { scope: 'openid' }), { browser })).callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
    const step = await browser.follow(urlFor(attacker, { claims: JSON.stringify(claims), prompt: 'none' }), running.baseUrl);
    const params = redirectParams(step.leftTo as string);
    return [params.get('error'), params.get('code') === null ? null : 'code'];
  };

  it.each([
    ['an essential claim', { id_token: { [PASSPORT]: { essential: true } } }],
    ['an essential claim with a guessed value', { userinfo: { [PASSPORT]: { essential: true, value: 'P1234567' } } }],
  ])('answers %s alike for the person who holds it and one who does not, never looking it up', async (_label, claims) => {
    asked.length = 0;
    const holder = await outcome('demo', claims);
    expect(await outcome('demo-basic', claims)).toEqual(holder);
    expect(holder).toEqual([null, 'code']);
    expect(asked).not.toContain(PASSPORT);
  });
});

/**
 * C3, C4: a client whose registration no longer lets a channel carry user data cannot learn through an essential
 * claim in it whether she holds that claim, also when its registration changed after the request was checked:
 * between `/par` and `/authorize`, or while she signs in.
 */
describe('an essential claim in a channel the client dropped the encryption of while the request was under way (C3, C4)', () => {
  let running: RunningApp;
  let calls = { count: 0 };
  const ESSENTIAL_ID_CARD = JSON.stringify({ id_token: { 'svc.ver.idcard.l3.nfc': { essential: true } } });
  const C4 = /^claim svc\.ver\.idcard\.l3\.nfc is essential, but the client cannot receive user data in the ID token/;
  const withoutIdTokenEncryption = (client: RegisteredClient): Promise<RegisteredClient> =>
    updateRegistration(client, { id_token_encrypted_response_alg: undefined, id_token_encrypted_response_enc: undefined });

  beforeAll(async () => {
    const counted = countingModules(createDemoClaimModules());
    calls = counted.calls;
    running = await startApp({ claimModules: counted.modules });
  });
  afterAll(async () => running.close());

  const push = async (client: RegisteredClient, claims = ESSENTIAL_ID_CARD): Promise<string> => {
    const { client_id: id, client_secret: secret } = client.metadata;
    const res = await fetch(`${running.issuer}/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${id}:${String(secret)}`).toString('base64')}` },
      body: new URLSearchParams(registeredClientParams(client, { claims })).toString(),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { request_uri: string }).request_uri;
  };
  const authorizeWith = (client: RegisteredClient, requestUri: string): string =>
    `${running.issuer}/authorize?${new URLSearchParams({ client_id: client.metadata.client_id, request_uri: requestUri }).toString()}`;

  it('pushed while encrypted and used after: /authorize answers invalid_request as the query would, asking no module', async () => {
    const client = await registerClient(running, 'rsa');
    const requestUri = await push(client);
    await withoutIdTokenEncryption(client);
    const before = calls.count;
    const step = await new FormBrowser().follow(authorizeWith(client, requestUri), running.baseUrl);
    const params = redirectParams(step.leftTo as string);
    expect([params.get('error'), params.get('error_description')]).toEqual(['invalid_request', expect.stringMatching(C4)]);
    expect(calls.count).toBe(before);
  });

  it('verified claims pushed while UserInfo was encrypted, used after it went plaintext (by the opt-out): invalid_request', async () => {
    const client = await registerClient(running, 'rsa');
    const requestUri = await push(client, JSON.stringify({ userinfo: { verified_claims: { verification: { trust_framework: null }, claims: { given_name: null } } } }));
    await updateRegistration(client, { userinfo_encrypted_response_alg: undefined, userinfo_encrypted_response_enc: undefined, allow_unencrypted_userinfo: true });
    const step = await new FormBrowser().follow(authorizeWith(client, requestUri), running.baseUrl);
    const params = redirectParams(step.leftTo as string);
    expect([params.get('error'), params.get('error_description')]).toEqual(['invalid_request', expect.stringMatching(/^claims\.userinfo\.verified_claims: verified claims travel encrypted only/)]);
  });

  it('dropped while she signs in: access_denied after she allows whatever she holds, asking no module', async () => {
    const answers: (string | null)[] = [];
    for (const login of ['demo', 'demo-basic']) {
      const client = await registerClient(running, 'rsa');
      const browser = new FormBrowser();
      await browser.follow(registeredClientUrl(running.issuer, client, { claims: ESSENTIAL_ID_CARD }), running.baseUrl);
      expect(browser.lastPage).toContain('id="login-form"');
      await withoutIdTokenEncryption(client);
      const before = calls.count;
      let step = await browser.submit('login-form', { login, password: login }, running.baseUrl);
      if (!step.leftTo) step = await browser.submit('consent-allow', {}, running.baseUrl);
      answers.push(new URL(step.leftTo as string).searchParams.get('error'));
      expect(calls.count).toBe(before);
    }
    expect(answers).toEqual(['access_denied', 'access_denied']);
  });

  it('honest: with the registration unchanged, a pushed request signs her in, and the answer after she allows is hers', async () => {
    const answers: Record<string, string | null> = {};
    for (const login of ['demo', 'demo-basic']) {
      const client = await registerClient(running, 'rsa');
      const { callbackUrl } = await signIn(authorizeWith(client, await push(client)), { login, password: login });
      answers[login] = callbackUrl.searchParams.get('error') ?? (callbackUrl.searchParams.get('code') ? 'code' : null);
    }
    expect(answers).toEqual({ demo: 'code', 'demo-basic': 'access_denied' });
  });
});

/**
 * oidc-provider asks the authenticator whether her account still exists on every request of her browser, an
 * unapproved client's included. An oidc-provider error it threw was redirected to that client with its message as
 * `error_description`; an exposed HTTP error's message was shown on her page.
 */
describe('what the authenticator throws never reaches a client (C4, C8)', () => {
  const SAID = 'sentinel-locked-81c3@example.test';
  let running: RunningApp;
  let friend: RegisteredClient;
  let stranger: RegisteredClient;
  let failure: (() => Error) | undefined;

  beforeAll(async () => {
    const base = createStaticAuthenticator();
    const authenticator = {
      ...base,
      exists: async (accountId: string): Promise<boolean> => {
        if (failure) throw failure();
        return base.exists(accountId);
      },
    };
    running = await startApp({ authenticator, claimModules: createDemoClaimModules() });
    [friend, stranger] = await Promise.all([registerClient(running, 'rsa'), registerClient(running, 'rsa')]);
  });
  afterAll(async () => running.close());

  it.each([
    ['an oidc-provider error', () => new errors.InvalidRequest(`account demo-0001 of ${SAID} is locked`)],
    ['an HTTP error with expose', () => Object.assign(new Error(`account demo-0001 of ${SAID} is locked`), { status: 403, statusCode: 403, expose: true })],
  ])('%s from exists() sends the unapproved client nothing: a server_error page in her browser, naming neither the account nor what it said', async (_label, thrown) => {
    const { browser } = await signIn(registeredClientUrl(running.issuer, friend, {}));
    failure = thrown;
    let step: Awaited<ReturnType<FormBrowser['follow']>>;
    try {
      step = await browser.follow(registeredClientUrl(running.issuer, stranger, { prompt: 'none' }), running.baseUrl);
    } finally {
      failure = undefined;
    }
    const answer = step.leftTo ?? `${step.response?.status} ${browser.lastPage}`;
    expect(answer).not.toContain(encodeURIComponent(SAID));
    expect(answer).not.toContain(SAID);
    expect(answer).not.toContain('demo-0001');
    // A failure oidc-provider cannot judge stays in her browser: the client is not even told it failed.
    expect([step.leftTo, step.response?.status]).toEqual([undefined, 500]);
    expect(browser.lastPage).toContain('<code>server_error</code>');
  });

  it('honest: while the authenticator answers, the unapproved client gets consent_required and her friend a code', async () => {
    const { browser } = await signIn(registeredClientUrl(running.issuer, friend, {}));
    const strangers = await browser.follow(registeredClientUrl(running.issuer, stranger, { prompt: 'none' }), running.baseUrl);
    expect(redirectParams(strangers.leftTo as string).get('error')).toBe('consent_required');
    const friends = await browser.follow(registeredClientUrl(running.issuer, friend, { prompt: 'none' }), running.baseUrl);
    expect(redirectParams(friends.leftTo as string).get('code')).toEqual(expect.any(String));
  });
});

/** The login form hands what she typed to the authenticator; whatever it throws is shown on the page to whoever typed it. */
describe('what the authenticator throws at sign-in never reaches the page (C8)', () => {
  const SAID = 'sentinel-authn-5e2a@example.test';
  let running: RunningApp;
  let client: RegisteredClient;
  let failure: (() => Error) | undefined;

  beforeAll(async () => {
    const base = createStaticAuthenticator();
    const authenticator = {
      ...base,
      authenticate: async (login: string, password: string): Promise<string | undefined> => {
        if (failure) throw failure();
        return base.authenticate(login, password);
      },
    };
    running = await startApp({ authenticator, claimModules: createDemoClaimModules() });
    client = await registerClient(running, 'rsa');
  });
  afterAll(async () => running.close());

  it.each([
    ['an oidc-provider error', () => new errors.InvalidRequest(`account demo-0001 of ${SAID} is locked`)],
    ['an HTTP error with expose', () => Object.assign(new Error(`account demo-0001 of ${SAID} is locked`), { status: 403, statusCode: 403, expose: true })],
  ])('%s from authenticate() is a plain server_error page naming neither the account nor what it said', async (_label, thrown) => {
    const browser = new FormBrowser();
    await browser.follow(registeredClientUrl(running.issuer, client, {}), running.baseUrl);
    failure = thrown;
    let step: Awaited<ReturnType<FormBrowser['follow']>>;
    try {
      step = await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    } finally {
      failure = undefined;
    }
    const body = (await step.response?.text()) ?? '';
    expect(body).not.toContain(SAID);
    expect(body).not.toContain('demo-0001');
    expect([step.leftTo, step.response?.status]).toEqual([undefined, 500]);
  });

  it('honest: while the authenticator answers, the same form signs her in', async () => {
    const { callbackUrl } = await signIn(registeredClientUrl(running.issuer, client, {}));
    expect(callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
  });
});

/**
 * Edges of the `claims` request parameter (C5, C8): what a consent to "one of" covers, a `sub` value, the characters
 * of error descriptions, `acr` values, and what the consent page names.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules, DEMO_PEOPLE } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { everySvcName } from '../helpers/claims-requests.js';
import { FormBrowser, redirectParams, runCodeFlow, signIn, userData } from '../helpers/flow.js';
import { registerClient, type RegisteredClient, registeredClientUrl, updateRegistration } from '../helpers/clients.js';

/** RFC 6749 4.1.2.1 / 5.2: error_description is %x20-21 / %x23-5B / %x5D-7E only. */
const OAUTH_DESCRIPTION = /^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/;

describe('claims requests: grants, subject requests and error texts (demo modules)', () => {
  let running: RunningApp;
  let rsa: RegisteredClient;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
    rsa = await registerClient(running, 'rsa');
  });
  afterAll(async () => running.close());

  const urlFor = (client: RegisteredClient, params: Record<string, string>): string => registeredClientUrl(running.issuer, client, params);
  /** The redirect of a request refused before any page. */
  const refusal = async (claims: unknown): Promise<URLSearchParams> =>
    redirectParams((await fetch(urlFor(rsa, { claims: JSON.stringify(claims) }), { redirect: 'manual' })).headers.get('location') as string);

  it('a consent to "one of" two alternatives does not silently cover delivering both of them later (prompt=none asks again)', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    // She is shown "one of: your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read; your verified e-mail address (level 2): the address and when it was confirmed" and allows.
    const oneOf = await runCodeFlow(running.issuer, client.metadata, {
      configure: client.configure,
      browser,
      params: { claims: JSON.stringify({ userinfo: { 'svc.ver.[idcard.l3.nfc,email.l2]': null } }) },
    });
    expect(Object.keys(userData(oneOf.userinfo))).toEqual(['svc.ver.idcard.l3.nfc']);

    // The same client now asks, silently, for both alternatives by name: she approved one of them, not both.
    const both = await browser.follow(
      urlFor(client, { prompt: 'none', claims: JSON.stringify({ userinfo: { 'svc.ver.idcard.l3.nfc': null, 'svc.ver.email.l2': null } }) }),
      running.baseUrl,
    );
    expect(redirectParams(both.leftTo as string).get('error')).toBe('consent_required');
  });

  it('honest: the same "one of" asked again, or one of its names she approved by name, needs no new consent', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const group = { userinfo: { 'svc.ver.[idcard.l3.nfc,email.l2]': null } };
    await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params: { claims: JSON.stringify(group) }, skipUserinfo: true });
    const again = await browser.follow(urlFor(client, { prompt: 'none', claims: JSON.stringify(group) }), running.baseUrl);
    expect(redirectParams(again.leftTo as string).get('code')).toEqual(expect.any(String));
    const named = { userinfo: { 'svc.ver.email.l2': null } };
    await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params: { claims: JSON.stringify(named) }, skipUserinfo: true });
    const byName = await browser.follow(urlFor(client, { prompt: 'none', claims: JSON.stringify(named) }), running.baseUrl);
    expect(redirectParams(byName.leftTo as string).get('code')).toEqual(expect.any(String));
  });

  it('never answers positively for another person than the sub value requested in the ID token (OIDC Core 5.5.1)', async () => {
    const client = await registerClient(running, 'rsa');
    const other = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, login: 'demo-basic', password: 'demo-basic', skipUserinfo: true });
    // A fresh browser signs in as demo; the client asked for demo-basic's subject by value.
    const claims = JSON.stringify({ id_token: { sub: { value: other.claims.sub } } });
    const result = await signIn(urlFor(client, { claims }), { login: 'demo', password: 'demo' }).catch(() => undefined);
    // "the OP MUST only send a positive response if the End-User identified by that sub value has an active session"
    expect(result?.callbackUrl.searchParams.get('code') ?? null).toBeNull();
  });

  it.each([
    ['a claim name with a quotation mark', { userinfo: { 'e"mail': null } }],
    ['a claim name with a backslash', { userinfo: { 'e\\mail': null } }],
    ['a claim name outside ASCII (a Cyrillic і)', { userinfo: { 'emaіl': null } }],
    ['the documented malformed svc name svc.ver.ID.l2', { userinfo: { 'svc.ver.ID.l2': null } }],
    ['an svc name with a space', { userinfo: { 'svc.ver.idcard.l3.nfc ': null } }],
  ])('gives an error_description within the characters RFC 6749 allows for %s', async (_case, claims) => {
    const params = await refusal(claims);
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('state')).toBe('st');
    expect(params.get('error_description')).toMatch(OAUTH_DESCRIPTION);
  });

  it('ignores acr values in the claims parameter like acr_values (C3) instead of advising a value that is ignored too', async () => {
    // OpenID Connect Core 5.5's own example asks for "acr": {"values": [...]} in the ID token.
    const claims = { id_token: { auth_time: { essential: true }, acr: { values: ['urn:mace:incommon:iap:silver'] } } };
    const served = await fetch(urlFor(rsa, { claims: JSON.stringify(claims) }), { redirect: 'manual' });
    expect(served.headers.get('location')).toMatch(/\/interaction\//);
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { configure: rsa.configure, params: { claims: JSON.stringify(claims) }, skipUserinfo: true });
    expect(flow.claims.auth_time).toEqual(expect.any(Number));
    // Essential without values asks for no particular class, so there is nothing to fail.
    const essential = await fetch(urlFor(rsa, { claims: JSON.stringify({ id_token: { acr: { essential: true } } }) }), { redirect: 'manual' });
    expect(essential.headers.get('location')).toMatch(/\/interaction\//);
  });

  it.each([
    ['values', { essential: true, values: ['urn:mace:incommon:iap:silver'] }],
    ['a value', { essential: true, value: 'urn:mace:incommon:iap:silver' }],
  ])('refuses an essential acr with %s as a failed authentication, before any page (OIDC Core 5.5.1.1: no acr is ever issued)', async (_case, acr) => {
    const params = await refusal({ id_token: { acr } });
    expect([params.get('error'), params.get('state')]).toEqual(['access_denied', 'st']);
    expect(params.get('error_description')).toMatch(OAUTH_DESCRIPTION);
  });
});

describe('claims requests: the consent page with modules that provide svc.* by pattern', () => {
  let running: RunningApp;
  let rsa: RegisteredClient;

  beforeAll(async () => {
    running = await startApp({ claimModules: [...createDemoClaimModules(), everySvcName] });
    rsa = await registerClient(running, 'rsa');
  });
  afterAll(async () => running.close());

  /** The list of what is asked on the consent page for `claims`, after signing in as demo. */
  const askedFor = async (claims: unknown): Promise<string> => {
    const browser = new FormBrowser();
    await browser.follow(registeredClientUrl(running.issuer, rsa, { claims: JSON.stringify(claims) }), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain('id="consent-allow"');
    return /asks for:<\/p>\s*(<ul>.*?<\/ul>|<p>.*?<\/p>)/s.exec(browser.lastPage)?.[1] ?? '';
  };

  it('describes an svc.* segment named like an Object property in words, never as JavaScript source', async () => {
    const list = await askedFor({ userinfo: { 'svc.ver.constructor.l2': null, 'svc.ver.__proto__.l2': null, 'svc.ver.email.l2': null } });
    expect(list).not.toContain('native code');
    expect(list).not.toContain('[object Object]');
  });

  it('asks on no consent page for names outside claims_supported, which are never delivered (docs/claims.md)', async () => {
    const discovery = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as { claims_supported: string[] };
    expect(discovery.claims_supported).not.toContain('svc.ver.foo.l2');
    const list = await askedFor({ userinfo: { 'svc.ver.foo.l2': { essential: true }, 'svc.ver.email.l2': null } });
    expect(list).toContain('your verified e-mail address (level 2): the address and when it was confirmed');
    // Shown as "your verified foo (level 2) (required)": asked of her, though it can never travel and its essential changes nothing.
    expect(list).not.toContain('foo');
  });
});

const GROUP = 'svc.ver.[idcard.l3.nfc,email.l2]';

describe('a consent to "one of" is one of, whatever the spelling of a later request (demo modules)', () => {
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
  });
  afterAll(async () => running.close());

  /** A fresh client, and a browser where demo approved `claims` for it (she holds both alternatives of GROUP). */
  async function approvedOneOf(claims: unknown): Promise<{ client: RegisteredClient; browser: FormBrowser; delivered: string[] }> {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const flow = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params: { claims: JSON.stringify(claims) } });
    return { client, browser, delivered: Object.keys(userData(flow.userinfo)) };
  }

  /** Where a silent (`prompt=none`) request of `client` for `claims` ends in `browser`: its `error`, or `code`. */
  async function silently(client: RegisteredClient, browser: FormBrowser, claims: unknown): Promise<string> {
    const step = await browser.follow(registeredClientUrl(running.issuer, client, { prompt: 'none', claims: JSON.stringify(claims) }), running.baseUrl);
    const params = redirectParams(step.leftTo as string);
    return params.get('error') ?? (params.get('code') ? 'code' : 'nothing');
  }

  it('asks again (consent_required) when one alternative of an approved group is asked as a group of itself twice', async () => {
    const { client, browser, delivered } = await approvedOneOf({ userinfo: { [GROUP]: null } });
    expect(delivered).toEqual(['svc.ver.idcard.l3.nfc']);
    // Written twice it is the same single claim, named alone.
    expect(await silently(client, browser, { userinfo: { 'svc.ver.email.l2': null } })).toBe('consent_required');
    expect(await silently(client, browser, { userinfo: { 'svc.ver.[email.l2,email.l2]': null } })).toBe('consent_required');
  });

  it('asks again (consent_required) when one alternative of an approved group is asked with a repeated segment', async () => {
    const { client, browser } = await approvedOneOf({ userinfo: { [GROUP]: null } });
    expect(await silently(client, browser, { userinfo: { 'svc.ver.email.[l2,l2]': null } })).toBe('consent_required');
  });

  it('does not deliver the second alternative of an approved group without asking, when the group is asked in another order', async () => {
    const { client, browser, delivered } = await approvedOneOf({ userinfo: { [GROUP]: null } });
    expect(delivered).toEqual(['svc.ver.idcard.l3.nfc']);
    // She approved that the client receives one of them; the reversed group, asked silently, hands it the other one.
    const reversed = { userinfo: { 'svc.ver.[email.l2,idcard.l3.nfc]': null } };
    const again = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params: { prompt: 'none', claims: JSON.stringify(reversed) } }).catch(
      () => undefined,
    );
    const received = new Set([...delivered, ...Object.keys(userData(again?.userinfo ?? {}))]);
    expect([...received].sort()).toEqual(['svc.ver.idcard.l3.nfc']);
  });

  it('does not deliver the second alternative of an approved group without asking, when it is asked as a group of itself twice', async () => {
    const { client, browser, delivered } = await approvedOneOf({ userinfo: { [GROUP]: null } });
    const twice = { userinfo: { 'svc.ver.[email.l2,email.l2]': null } };
    const again = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params: { prompt: 'none', claims: JSON.stringify(twice) } }).catch(
      () => undefined,
    );
    const received = new Set([...delivered, ...Object.keys(userData(again?.userinfo ?? {}))]);
    expect([...received].sort()).toEqual(['svc.ver.idcard.l3.nfc']);
  });

  it('asks again (consent_required) when a part of an approved group is asked as a smaller group', async () => {
    const { client, browser, delivered } = await approvedOneOf({ userinfo: { 'svc.ver.[idcard.l3.nfc,email.l2,mobile.l2.api]': null } });
    expect(delivered).toEqual(['svc.ver.idcard.l3.nfc']);
    // The group without the alternative delivered: the client learns the next one she holds, then the next.
    expect(await silently(client, browser, { userinfo: { 'svc.ver.[email.l2,mobile.l2.api]': null } })).toBe('consent_required');
  });

  it('honest: a claim she approved by name through its scope needs no new consent when named after she also approved it within a group', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    // 1. The scope: the page names "your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read" on its own (travelling in the sign-in token).
    await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, scope: 'openid svc.insurance.verified', skipUserinfo: true });
    // 2. A group with it (the e-mail alternative is new, so she is asked and allows).
    await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params: { claims: JSON.stringify({ id_token: { [GROUP]: null } }) }, skipUserinfo: true });
    // 3. The claim she approved by name, named, where it travelled: docs/claims.md says no new consent.
    expect(await silently(client, browser, { id_token: { 'svc.ver.idcard.l3.nfc': null } })).toBe('code');
  });
});

const IDCARD = 'svc.ver.idcard.l3.nfc';
const EMAIL = 'svc.ver.email.l2';
const HEALTH = 'demo.ver.healthinsurance.l0.api.demo';

describe('an approved group delivers the first alternative she holds only, whatever is asked beside it', () => {
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
  });
  afterAll(async () => running.close());

  /** A completed flow of `client` in `browser` (she allows any page), or undefined when it ends without a code. */
  const flow = async (client: RegisteredClient, browser: FormBrowser, params: Record<string, string>, scope?: string) =>
    runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params, scope }).catch(() => undefined);

  /** The user data a silent (`prompt=none`) request of `claims` delivers in both channels (none when it ends without a code). */
  const silently = async (client: RegisteredClient, browser: FormBrowser, claims: unknown): Promise<string[]> => {
    const done = await flow(client, browser, { prompt: 'none', claims: JSON.stringify(claims) });
    return [...new Set([...Object.keys(userData(done?.claims ?? {})), ...Object.keys(userData(done?.userinfo ?? {}))])];
  };

  it('does not deliver the second alternative of an approved group when the request also names the alternative she approved by name', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    // 1. "one of: ID card; e-mail": the client receives her ID card.
    const first = await flow(client, browser, { claims: JSON.stringify({ userinfo: { [GROUP]: null } }) });
    expect(Object.keys(userData(first?.userinfo ?? {}))).toEqual([IDCARD]);
    // 2. The ID card by name (the client holds it already; she allows).
    const second = await flow(client, browser, { claims: JSON.stringify({ userinfo: { [IDCARD]: null } }) });
    expect(Object.keys(userData(second?.userinfo ?? {}))).toEqual([IDCARD]);
    // 3. Silently: the approved group beside the name. A name requested on its own is delivered for itself, so the
    //    group skips the ID card and hands over her verified e-mail address, which she never approved but as "one of".
    const third = await silently(client, browser, { userinfo: { [GROUP]: null, [IDCARD]: null } });
    expect(third).not.toContain(EMAIL);
  });

  it('does not deliver the second alternative of an approved group when its first alternative was approved through the scope', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    // 1. Scope svc.insurance.verified names the ID card on its own (in the sign-in token).
    expect(await flow(client, browser, {}, 'openid svc.insurance.verified')).toBeDefined();
    // 2. The group in the sign-in token; she allows (the e-mail alternative is new).
    const grouped = await flow(client, browser, { claims: JSON.stringify({ id_token: { [GROUP]: null } }) });
    expect(Object.keys(userData(grouped?.claims ?? {}))).toEqual([IDCARD]);
    // 3. Silently: the approved group and the ID card by name, in the same channel.
    const third = await silently(client, browser, { id_token: { [GROUP]: null, [IDCARD]: null } });
    expect(third).not.toContain(EMAIL);
  });

  it('does not let a value on an approved group pick an alternative other than the first she holds without asking', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const first = await flow(client, browser, { claims: JSON.stringify({ userinfo: { [GROUP]: null } }) });
    expect(Object.keys(userData(first?.userinfo ?? {}))).toEqual([IDCARD]);
    // A client that knows (or guesses) the e-mail record asks for the same group with it as `value`: the first
    // alternative whose value matches is delivered, so the client confirms she holds a verified e-mail address.
    const emailRecord = DEMO_PEOPLE['demo-0001']?.verifiedEmail;
    const valued = await silently(client, browser, { userinfo: { [GROUP]: { value: emailRecord } } });
    expect(valued).not.toContain(EMAIL);
  });

  it('the consent page does not present as "one of" a group that, beside one of its alternatives named alone, delivers the other', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const claims = JSON.stringify({ userinfo: { [GROUP]: null, [IDCARD]: null } });
    const done = await flow(client, browser, { claims });
    const page = browser.lastPage;
    const delivered = Object.keys(userData(done?.userinfo ?? {}));
    const saysOneOf = page.includes('one of: your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read; your verified e-mail address (level 2): the address and when it was confirmed');
    const both = delivered.includes(IDCARD) && delivered.includes(EMAIL);
    expect(saysOneOf && both ? `page says "one of: ID card; e-mail", client received ${delivered.join(', ')}` : 'consistent').toBe('consistent');
  });
});

describe('the consent page says where each alternative of a group travels when the two members treat the group differently', () => {
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
  });
  afterAll(async () => running.close());

  /** The items (their words) of consent page `page`. */
  const itemsOf = (page: string): string[] => [...page.matchAll(/<li>([^<]*(?:<em>\(required\)<\/em>)?[^<]*— (?:in the|not sent)[^<]*)<\/li>/g)].map((m) => m[1] as string);
  /** The consent page's items (their words) and the user data each channel delivered after she allowed. */
  const consented = async (client: RegisteredClient, claims: unknown): Promise<{ items: string[]; idToken: string[]; userinfo: string[] }> => {
    const browser = new FormBrowser();
    const done = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params: { claims: JSON.stringify(claims) } });
    return { items: itemsOf(browser.lastPage), idToken: Object.keys(userData(done.claims)), userinfo: Object.keys(userData(done.userinfo)) };
  };

  it('attack: a group in the plaintext sign-in token, and in UserInfo beside one of its alternatives named alone: the page does not say that alternative travels in UserInfo only', async () => {
    // The sign-in token travels in plain form (the opt-out), UserInfo encrypted.
    const client = await registerClient(running, 'rsa', { id_token_encrypted_response_alg: undefined, allow_unencrypted_userinfo: true });
    const { items, idToken } = await consented(client, { id_token: { [GROUP]: null }, userinfo: { [IDCARD]: null, [GROUP]: null } });
    // The sign-in token carries the first alternative she holds, her ID card, in plain form.
    expect(idToken).toEqual([IDCARD]);
    expect(items).toEqual([
      'one of: your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read; your verified e-mail address (level 2): the address and when it was confirmed — in the sign-in token',
      'your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read — in the profile request',
      'your verified e-mail address (level 2): the address and when it was confirmed — in the profile request',
    ]);
  });

  it('attack: a group in UserInfo, and in the sign-in token beside one of its alternatives named alone: the page does not call the sign-in token\'s two claims "one of"', async () => {
    const client = await registerClient(running, 'rsa');
    const { items, idToken, userinfo } = await consented(client, { id_token: { [IDCARD]: null, [GROUP]: null }, userinfo: { [GROUP]: null } });
    expect([idToken, userinfo]).toEqual([[IDCARD, EMAIL], [IDCARD]]);
    expect(items).toEqual([
      'your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read — in the sign-in token',
      'your verified e-mail address (level 2): the address and when it was confirmed — in the sign-in token',
      'one of: your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read; your verified e-mail address (level 2): the address and when it was confirmed — in the profile request',
    ]);
  });

  it('lists each thing once: a group that delivers one alternative, beside the same claim through the scope or another group to the same effect, or each member asking it by another name', async () => {
    const client = await registerClient(running, 'rsa');
    const scope = 'openid svc.insurance.verified';
    const browser = new FormBrowser();
    const sameChannel = { id_token: { 'svc.ver.[driverslicense,idcard].l3.nfc': null, [GROUP]: null, 'svc.ver.[idcard.l3.nfc,driverslicense.l3.nfc,email.l2]': null } };
    const done = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, scope, params: { claims: JSON.stringify(sameChannel) } });
    expect(Object.keys(userData(done.claims)).sort()).toEqual([HEALTH, IDCARD]);
    expect(itemsOf(browser.lastPage)).toEqual([
      'your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read — in the sign-in token',
      'your health insurance member number — in the sign-in token',
      'one of: your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read; your verified e-mail address (level 2): the address and when it was confirmed — in the sign-in token',
    ]);
    const { items, idToken, userinfo } = await consented(client, { id_token: { [GROUP]: null, [EMAIL]: null }, userinfo: { [IDCARD]: null, [GROUP]: null } });
    expect([idToken.sort(), userinfo.sort()]).toEqual([[EMAIL, IDCARD], [EMAIL, IDCARD]]);
    expect(items).toEqual([
      'your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read — in the sign-in token and the profile request',
      'your verified e-mail address (level 2): the address and when it was confirmed — in the sign-in token and the profile request',
    ]);
  });

  it('honest: the same group in both members is one item, travelling in both, and each delivers the first alternative she holds', async () => {
    const client = await registerClient(running, 'rsa');
    const { items, idToken, userinfo } = await consented(client, { id_token: { [GROUP]: null }, userinfo: { [GROUP]: { essential: true } } });
    expect([idToken, userinfo]).toEqual([[IDCARD], [IDCARD]]);
    expect(items).toEqual(['one of: your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read; your verified e-mail address (level 2): the address and when it was confirmed <em>(required)</em> — in the sign-in token and the profile request']);
  });
});

describe('"one of" is one of in each channel: a claim approved by name in one channel is not named alone in the other without asking', () => {
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
  });
  afterAll(async () => running.close());

  /** Where a silent (`prompt=none`) request of `client` ends in `browser`: its `error`, or `code`. */
  const silently = async (client: RegisteredClient, browser: FormBrowser, params: Record<string, string>): Promise<string> => {
    const landed = redirectParams((await browser.follow(registeredClientUrl(running.issuer, client, { ...params, prompt: 'none' }), running.baseUrl)).leftTo as string);
    return landed.get('error') ?? (landed.get('code') ? 'code' : 'nothing');
  };
  /** Demo signs in (once per browser) and allows each request of `approved` in turn; the user data each delivered, channel by channel. */
  const approve = async (client: RegisteredClient, browser: FormBrowser, approved: Record<string, string>[]): Promise<string[][][]> => {
    const delivered: string[][][] = [];
    for (const params of approved) {
      const { scope, ...rest } = params;
      const done = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, scope, params: rest });
      delivered.push([Object.keys(userData(done.claims)), Object.keys(userData(done.userinfo))]);
    }
    return delivered;
  };
  const claims = (request: unknown): Record<string, string> => ({ claims: JSON.stringify(request) });
  const EMAIL_FIRST = 'svc.ver.[email.l2,idcard.l3.nfc]';

  it('attack: e-mail approved by name in encrypted UserInfo and only within "one of" in the plain sign-in token is not sent alone in the plain sign-in token', async () => {
    const client = await registerClient(running, 'rsa', { id_token_encrypted_response_alg: undefined, allow_unencrypted_userinfo: true });
    const browser = new FormBrowser();
    // 1. "your verified e-mail address — in the profile request" (encrypted); 2. "one of: ID card; e-mail — in the
    //    sign-in token" (plain), which for her is her ID card.
    expect(await approve(client, browser, [claims({ userinfo: { [EMAIL]: null } }), claims({ id_token: { [GROUP]: null } })])).toEqual([[[], [EMAIL]], [[IDCARD], []]]);
    expect(await silently(client, browser, claims({ id_token: { [EMAIL]: null } }))).toBe('consent_required');
  });

  it('attack: the ID card approved through its scope in the sign-in token and only as the second of "one of" in UserInfo is not sent alone in UserInfo', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const delivered = await approve(client, browser, [{ scope: 'openid svc.insurance.verified' }, claims({ userinfo: { [EMAIL_FIRST]: null } })]);
    expect(delivered[1]).toEqual([[], [EMAIL]]);
    expect(await silently(client, browser, claims({ userinfo: { [IDCARD]: null } }))).toBe('consent_required');
  });

  it('attack: a group approved in the sign-in token is not asked in UserInfo, where she approved its alternatives only in another order', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const delivered = await approve(client, browser, [claims({ id_token: { [GROUP]: null } }), claims({ userinfo: { [EMAIL_FIRST]: null } })]);
    expect(delivered).toEqual([[[IDCARD], []], [[], [EMAIL]]]);
    // In UserInfo the ID card-first group hands over her ID card, which she approved there only after her e-mail address.
    expect(await silently(client, browser, claims({ userinfo: { [GROUP]: null } }))).toBe('consent_required');
  });

  it('attack: the ID card named in UserInfo and in the sign-in token only as the second of "one of", asked there by its scope alone, is not sent alone in the sign-in token', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    // "your health insurance member number — in the sign-in token", "one of: e-mail; ID card — in the sign-in token",
    // "your verified ID card — in the profile request": the scope's ID card travels in UserInfo, where the request names it.
    const scoped = { scope: 'openid svc.insurance.verified', ...claims({ id_token: { [EMAIL_FIRST]: null }, userinfo: { [IDCARD]: null } }) };
    expect(await approve(client, browser, [scoped])).toEqual([[[HEALTH, EMAIL], [IDCARD]]]);
    // The scope alone puts the ID card back in the sign-in token, on its own.
    expect(await silently(client, browser, { scope: 'openid svc.insurance.verified' })).toBe('consent_required');
    expect(await silently(client, browser, scoped)).toBe('code');
  });

  it('attack: a group approved in encrypted UserInfo is not asked again without a page once UserInfo is plain, where she approved its alternatives only in another order', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    expect(await approve(client, browser, [claims({ userinfo: { [GROUP]: null } })])).toEqual([[[], [IDCARD]]]);
    const plain = await updateRegistration(client, { userinfo_encrypted_response_alg: undefined, userinfo_encrypted_response_enc: undefined, allow_unencrypted_userinfo: true });
    // In plain UserInfo she sees "one of: e-mail; ID card", which for her is her e-mail address.
    expect(await approve(plain, browser, [claims({ userinfo: { [EMAIL_FIRST]: null } })])).toEqual([[[], [EMAIL]]]);
    // The ID card-first group, approved only while UserInfo was encrypted, would hand over her ID card in plain form.
    expect(await silently(plain, browser, claims({ userinfo: { [GROUP]: null } }))).toBe('consent_required');
    expect(await silently(plain, browser, claims({ userinfo: { [EMAIL_FIRST]: null } }))).toBe('code');
  });

  it('honest: what she approved in each channel is asked again there without a page: by name, as the same group, through the scope', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    await approve(client, browser, [
      claims({ id_token: { [EMAIL]: null }, userinfo: { [EMAIL]: null } }),
      claims({ id_token: { [GROUP]: null } }),
      { scope: 'openid svc.insurance.verified' },
    ]);
    expect(await silently(client, browser, claims({ id_token: { [EMAIL]: null } }))).toBe('code');
    expect(await silently(client, browser, claims({ userinfo: { [EMAIL]: null } }))).toBe('code');
    expect(await silently(client, browser, claims({ id_token: { [GROUP]: null } }))).toBe('code');
    expect(await silently(client, browser, claims({ id_token: { [IDCARD]: null } }))).toBe('code');
    expect(await silently(client, browser, { scope: 'openid svc.insurance.verified', ...claims({ id_token: { [IDCARD]: null, [GROUP]: null } }) })).toBe('code');
  });
});

/**
 * Edges of the `claims` request parameter (C5, C8): what a consent to "one of" covers, a `sub` value, the characters
 * of error descriptions, `acr` values, and what the consent page names.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { everySvcName } from '../helpers/claims-requests.js';
import { FormBrowser, redirectParams, runCodeFlow, signIn, userData } from '../helpers/flow.js';
import { registerClient, type RegisteredClient, registeredClientUrl } from '../helpers/clients.js';

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
    // She is shown "one of: your verified ID card (level 3, NFC); your verified e-mail address (level 2)" and allows.
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
    expect(list).toContain('your verified e-mail address (level 2)');
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
    // 1. The scope: the page names "your verified ID card (level 3, NFC)" on its own (travelling in the sign-in token).
    await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, scope: 'openid svc.insurance.verified', skipUserinfo: true });
    // 2. A group with it (the e-mail alternative is new, so she is asked and allows).
    await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, browser, params: { claims: JSON.stringify({ id_token: { [GROUP]: null } }) }, skipUserinfo: true });
    // 3. The claim she approved by name, named, where it travelled: docs/claims.md says no new consent.
    expect(await silently(client, browser, { id_token: { 'svc.ver.idcard.l3.nfc': null } })).toBe('code');
  });
});

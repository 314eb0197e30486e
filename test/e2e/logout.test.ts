/**
 * RP-initiated logout (`/oidc/v1/logout`, OpenID Connect RP-Initiated Logout 1.0) against a real app over real
 * HTTP: the honest relying party's logouts, a person whose sign-out request cannot be honoured as sent, and
 * hostile inputs.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CompactEncrypt, compactDecrypt, importJWK, SignJWT, type JWK } from 'jose';
import { Redis } from 'ioredis';
import type { ClientMetadata } from 'oidc-provider';
import { allowInsecureRequests, buildEndSessionUrl, ClientSecretBasic, discovery } from 'openid-client';

import { generateProviderKeys } from '../../lib/index.js';
import { rotateKeysFile } from '../../lib/provider/key-rotation.js';
import { signingKeyFor } from '../../lib/provider/key-states.js';
import { accountsHeldAt, heldCall } from '../helpers/held-call.js';
import { confidentialClient, sessionsOf, startApp, type RunningApp } from '../helpers/app.js';
import { registerClient, updateRegistration, type RegisteredClient } from '../helpers/clients.js';
import { capturingLogger } from '../helpers/logs.js';
import { codeFlowUrl, FormBrowser, redirectParams, runCodeFlow } from '../helpers/flow.js';
import { testProviderKeys } from '../helpers/provider-keys.js';
import { deletePrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';
import { providerEncryptionKey } from '../helpers/request-objects.js';

const BYE = 'http://rp.localhost/bye';
const OTHER_BYE = 'http://other.localhost/bye';

const rp = confidentialClient({ client_id: 'logout-rp', post_logout_redirect_uris: [BYE] });
const other = confidentialClient({
  client_id: 'other-rp',
  client_secret: 'other-rp-secret-that-is-long-enough-0123456789',
  redirect_uris: ['http://other.localhost/cb'],
  post_logout_redirect_uris: [OTHER_BYE],
});

/** A browser signed in at `app` through `client`, with the tokens the client received. */
async function signedIn(app: RunningApp, client: ClientMetadata, browser = new FormBrowser()): Promise<{ browser: FormBrowser; idToken: string; accessToken: string }> {
  const { tokens } = await runCodeFlow(app.issuer, client, { skipUserinfo: true, browser });
  return { browser, idToken: String(tokens.id_token), accessToken: tokens.access_token };
}

function logoutUrl(app: RunningApp, params: Record<string, string>): string {
  const url = new URL(`${app.issuer}/logout`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.href;
}

/** Whether the page is the sign-out confirmation (oidc-provider's form with our buttons). */
const isConfirmation = (page: string): boolean => page.includes('id="op.logoutForm"') && page.includes('Sign out?');

/** Where a `prompt=none` authorization of `client` in `browser` ends: the `error` it carries, or `code`. */
async function silentOutcome(app: RunningApp, client: ClientMetadata, browser: FormBrowser): Promise<string> {
  const step = await browser.follow(codeFlowUrl(app.issuer, client, { prompt: 'none', state: 'silent' }), app.baseUrl);
  if (!step.leftTo) throw new Error(`no redirect to the client (status ${step.response?.status})`);
  const params = redirectParams(step.leftTo);
  return params.get('error') ?? (params.get('code') ? 'code' : 'nothing');
}

/** Answers the sign-out `page` she kept open in another tab as a browser does (Accept: text/html), following redirects on the provider. */
async function answerKeptPage(app: RunningApp, browser: FormBrowser, page: string, fields: Record<string, string>): Promise<{ response?: Response; leftTo?: string }> {
  browser.lastPage = page;
  const body = new URLSearchParams({ ...browser.hiddenFields('op.logoutForm'), ...fields }).toString();
  return browser.follow(browser.formAction('op.logoutForm', app.baseUrl), app.baseUrl, { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl }, body });
}

async function userinfoStatus(app: RunningApp, accessToken: string): Promise<number> {
  return (await fetch(`${app.issuer}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } })).status;
}

/** A JWT signed with the provider's own RS256 key (as if the provider had issued it). */
async function providerSigned(app: RunningApp, claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const key = signingKeyFor('RS256', (await testProviderKeys()).keys) as JWK;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: app.issuer, sub: 'someone', aud: rp.client_id, iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, ...header })
    .sign(await importJWK(key, 'RS256'));
}

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('RP-initiated logout', () => {
  const prefix = testPrefix('logout');
  const { logger, lines } = capturingLogger();
  let app: RunningApp;
  let redis: Redis;

  beforeAll(async () => {
    app = await startApp({
      logger,
      clients: [rp, other],
      properties: { 'svc.redis.url': SHARED_REDIS_URL, 'svc.redis.key-prefix': prefix, 'svc.management.user': 'operator', 'svc.management.password': 'logout-password-123' },
    });
    redis = new Redis(SHARED_REDIS_URL);
  });

  afterAll(async () => {
    redis.disconnect();
    await app.close();
    await deletePrefix(SHARED_REDIS_URL, prefix);
  });

  /** Every key under the prefix with its stored size in bytes and remaining TTL in seconds. */
  async function storeRecords(): Promise<Map<string, { bytes: number; ttl: number; value: string }>> {
    const out = new Map<string, { bytes: number; ttl: number; value: string }>();
    for (const key of await redis.keys(`${prefix}*`)) {
      const type = await redis.type(key);
      const value = type === 'hash' ? JSON.stringify(await redis.hgetall(key)) : type === 'set' ? JSON.stringify(await redis.smembers(key)) : type === 'zset' ? JSON.stringify(await redis.zrange(key, '0', '-1')) : type === 'string' ? String(await redis.get(key)) : type;
      out.set(key, { bytes: Buffer.byteLength(value), ttl: await redis.ttl(key), value });
    }
    return out;
  }

  describe('the honest relying party', () => {
    it('logs out with a signed id_token_hint, a registered post_logout_redirect_uri and state: confirmation, then back to the RP with state; session, grant and tokens are gone', async () => {
      const { browser, idToken, accessToken } = await signedIn(app, rp);
      const otherTokens = await signedIn(app, other, browser);
      expect(await userinfoStatus(app, accessToken)).toBe(200);
      const start = await browser.follow(logoutUrl(app, { id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 'rp-state-1' }), app.baseUrl);
      expect(start.response?.status).toBe(200);
      expect(isConfirmation(browser.lastPage)).toBe(true);
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(done.leftTo).toBe(`${BYE}?state=rp-state-1`);
      expect(await userinfoStatus(app, accessToken)).toBe(401);
      expect(await userinfoStatus(app, otherTokens.accessToken)).toBe(401);
      expect(await silentOutcome(app, rp, browser)).toBe('login_required');
    });

    it('logs out with client_id only (no hint) and a registered post_logout_redirect_uri', async () => {
      const { browser } = await signedIn(app, rp);
      await browser.follow(logoutUrl(app, { client_id: String(rp.client_id), post_logout_redirect_uri: BYE, state: 's2' }), app.baseUrl);
      expect(isConfirmation(browser.lastPage)).toBe(true);
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(done.leftTo).toBe(`${BYE}?state=s2`);
      expect(await silentOutcome(app, rp, browser)).toBe('login_required');
    });

    it('logs out by POST (form serialization), as RP-Initiated Logout 1.0 section 2 allows', async () => {
      const { browser, idToken } = await signedIn(app, rp);
      const start = await browser.post(`${app.issuer}/logout`, { id_token_hint: idToken, post_logout_redirect_uri: BYE }, 'http://rp.localhost');
      expect(start.status).toBe(200);
      browser.lastPage = await start.text();
      expect(isConfirmation(browser.lastPage)).toBe(true);
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(done.leftTo).toBe(BYE);
    });

    it('logs out by a POST from the relying party\'s site on an http base URL, which carries no SameSite=Lax session: sent on as a GET that does, she is asked and signed out', async () => {
      const { browser, idToken, accessToken } = await signedIn(app, rp);
      const fields = { id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 'posted' };
      // The browser leaves her Lax session cookie off a form posted from another site.
      const posted = await new FormBrowser().post(`${app.issuer}/logout`, fields, 'http://rp.localhost');
      const asGet = logoutUrl(app, { post_logout_redirect_uri: BYE, state: 'posted', client_id: String(rp.client_id) });
      expect({ status: posted.status, location: posted.headers.get('location'), cookies: posted.headers.getSetCookie() }).toEqual({ status: 303, location: asGet, cookies: [] });
      await browser.follow(String(posted.headers.get('location')), app.baseUrl);
      expect(isConfirmation(browser.lastPage)).toBe(true);
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(done.leftTo).toBe(`${BYE}?state=posted`);
      expect(await userinfoStatus(app, accessToken)).toBe(401);
    });

    it('a logout POST without her Lax session, carrying an id_token_hint re-encrypted to the provider, a logout_hint and 45 KB of ui_locales, is sent on as a GET naming the hint\'s client, with neither the hint (nor the ID token inside), the logout_hint nor the ui_locales in the URL', async () => {
      const { browser, idToken } = await signedIn(app, rp);
      const { key, kid } = await providerEncryptionKey(app.issuer, 'RSA-OAEP-256');
      const encrypted = await new CompactEncrypt(new TextEncoder().encode(idToken)).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid, cty: 'JWT' }).encrypt(key);
      for (const hint of [encrypted, idToken]) {
        const posted = await new FormBrowser().post(`${app.issuer}/logout`, { id_token_hint: hint, logout_hint: 'her@example.com', ui_locales: 'd'.repeat(45_000), post_logout_redirect_uri: BYE, state: 'enc' }, 'http://rp.localhost');
        expect({ status: posted.status, location: posted.headers.get('location'), cookies: posted.headers.getSetCookie() }).toEqual({ status: 303, location: logoutUrl(app, { post_logout_redirect_uri: BYE, state: 'enc', client_id: String(rp.client_id) }), cookies: [] });
      }
      const posted = await new FormBrowser().post(`${app.issuer}/logout`, { id_token_hint: encrypted, post_logout_redirect_uri: BYE, state: 'enc' }, 'http://rp.localhost');
      await browser.follow(String(posted.headers.get('location')), app.baseUrl);
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(done.leftTo).toBe(`${BYE}?state=enc`);
    });

    it('honest: her relying party posts her logout from its own site when she holds no session any more: sent on as a GET, it ends nothing of anyone and brings her back to the relying party with its state', async () => {
      const { idToken, accessToken } = await signedIn(app, rp);
      const browser = new FormBrowser();
      const posted = await browser.post(`${app.issuer}/logout`, { id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 'none-left' }, 'http://rp.localhost');
      expect(posted.status).toBe(303);
      await browser.follow(String(posted.headers.get('location')), app.baseUrl);
      // oidc-provider's page for a browser without a session posts its confirmation by itself.
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(browser.lastPage)?.[1] ?? '';
      const done = await browser.follow(`${app.issuer}/logout/confirm`, app.baseUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl }, body: new URLSearchParams({ xsrf, logout: 'yes' }).toString() });
      expect({ xsrf: xsrf.length > 0, leftTo: done.leftTo, userinfo: await userinfoStatus(app, accessToken) }).toEqual({ xsrf: true, leftTo: `${BYE}?state=none-left`, userinfo: 200 });
    });

    it('logs out a client with ID token encryption by the signed ID token inside its JWE (as RP-Initiated Logout 1.0 section 2 says the RP MUST send it)', async () => {
      const client = await registerClient(app, 'rsa', { post_logout_redirect_uris: ['https://rp.example/bye'] });
      const browser = new FormBrowser();
      const { tokens } = await runCodeFlow(app.issuer, client.metadata, { skipUserinfo: true, browser, configure: client.configure });
      const received = String(tokens.id_token);
      expect(received.split('.')).toHaveLength(5);
      const jws = new TextDecoder().decode((await compactDecrypt(received, client.privateKey as CryptoKey)).plaintext);
      expect(jws.split('.')).toHaveLength(3);
      await browser.follow(logoutUrl(app, { id_token_hint: jws, post_logout_redirect_uri: 'https://rp.example/bye', state: 'a&b=c#d' }), app.baseUrl);
      expect(isConfirmation(browser.lastPage)).toBe(true);
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(done.leftTo).toBe('https://rp.example/bye?state=a%26b%3Dc%23d');
    });

    it('honest: a relying party passing openid-client\'s tokens.id_token (the JWE as received) to buildEndSessionUrl with a registered post_logout_redirect_uri and state: she is asked "Sign out?", and after Yes she is back at the relying party with its state, signed out', async () => {
      const client = await registerClient(app, 'rsa', { post_logout_redirect_uris: ['https://rp.example/bye'] });
      const browser = new FormBrowser();
      const { tokens } = await runCodeFlow(app.issuer, client.metadata, { skipUserinfo: true, browser, configure: client.configure });
      const config = await discovery(new URL(app.issuer), String(client.metadata.client_id), undefined, ClientSecretBasic(String(client.metadata.client_secret)), { execute: [allowInsecureRequests] });
      const url = buildEndSessionUrl(config, { id_token_hint: String(tokens.id_token), post_logout_redirect_uri: 'https://rp.example/bye', state: 'jwe' });
      const start = await browser.follow(url.href, app.baseUrl, { headers: { accept: 'text/html' } });
      expect({ status: start.response?.status, confirmation: isConfirmation(browser.lastPage) }).toEqual({ status: 200, confirmation: true });
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect({ leftTo: done.leftTo, silent: await silentOutcome(app, client.metadata, browser) }).toEqual({ leftTo: 'https://rp.example/bye?state=jwe', silent: 'login_required' });
    });

    it('attack: a page linking her to /logout with her relying party\'s JWE hint cannot make her "No" withdraw her consent there (the hint was never validated)', async () => {
      const client = await registerClient(app, 'rsa', { post_logout_redirect_uris: ['https://rp.example/bye'] });
      const browser = new FormBrowser();
      const { tokens } = await runCodeFlow(app.issuer, client.metadata, { skipUserinfo: true, browser, configure: client.configure });
      await browser.follow(logoutUrl(app, { id_token_hint: String(tokens.id_token), post_logout_redirect_uri: 'https://rp.example/bye' }), app.baseUrl, { headers: { accept: 'text/html' } });
      expect(isConfirmation(browser.lastPage)).toBe(true);
      const done = await browser.submit('op.logoutForm', {}, app.baseUrl);
      expect({ leftTo: done.leftTo, userinfo: await userinfoStatus(app, tokens.access_token), silent: await silentOutcome(app, client.metadata, browser) }).toEqual({ leftTo: 'https://rp.example/bye', userinfo: 200, silent: 'code' });
    });

    it('accepts an expired id_token_hint from a live session (RP-Initiated Logout 1.0 section 4: SHOULD accept after exp)', async () => {
      const past = Math.floor(Date.now() / 1000) - 7 * 86_400;
      const hint = await providerSigned(app, { iat: past, exp: past + 86_400 });
      const { browser } = await signedIn(app, rp);
      await browser.follow(logoutUrl(app, { id_token_hint: hint, post_logout_redirect_uri: BYE }), app.baseUrl);
      expect(isConfirmation(browser.lastPage)).toBe(true);
    });

    it('accepts an id_token_hint the RP re-encrypted to the provider\'s published encryption key (Core 3.1.2.1, RP-Initiated Logout 1.0 section 2: MAY)', async () => {
      const { browser, idToken } = await signedIn(app, rp);
      const { key, kid } = await providerEncryptionKey(app.issuer, 'RSA-OAEP-256');
      const encrypted = await new CompactEncrypt(new TextEncoder().encode(idToken)).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid, cty: 'JWT' }).encrypt(key);
      const start = await browser.follow(logoutUrl(app, { id_token_hint: encrypted, post_logout_redirect_uri: BYE, state: 'enc' }), app.baseUrl);
      expect({ status: start.response?.status, confirmation: isConfirmation(browser.lastPage) }).toEqual({ status: 200, confirmation: true });
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(done.leftTo).toBe(`${BYE}?state=enc`);
    });
  });

  describe('an id_token_hint encrypted to its client (the JWE as received), which the provider cannot read: its header names the client as a bare client_id does, and proves no more', () => {
    const ENC_BYE = 'https://rp.example/bye';

    /** A JWE protected header anyone can write, over parts no key decrypts. */
    const forgedJwe = (header: Record<string, unknown>): string =>
      [b64({ alg: 'RSA-OAEP-256', enc: 'A256GCM', cty: 'JWT', kid: 'rp-enc', iss: app.issuer, ...header }), b64('key'), b64('iv'), b64('ciphertext'), b64('tag')].join('.');

    /** A browser signed in through a fresh client with ID token encryption, and the JWE its relying party received. */
    async function encryptingSignIn(): Promise<{ client: ClientMetadata; browser: FormBrowser; jwe: string; accessToken: string }> {
      const registered = await registerClient(app, 'rsa', { post_logout_redirect_uris: [ENC_BYE] });
      const browser = new FormBrowser();
      const { tokens } = await runCodeFlow(app.issuer, registered.metadata, { skipUserinfo: true, browser, configure: registered.configure });
      return { client: registered.metadata, browser, jwe: String(tokens.id_token), accessToken: tokens.access_token };
    }

    /** What a caller without a browser session (no cookie, JSON errors) is answered at /logout. */
    async function anonymousAnswer(params: Record<string, string>): Promise<{ status: number; error?: unknown; location: string | null; selfPosting: boolean }> {
      const res = await fetch(logoutUrl(app, params), { redirect: 'manual' });
      const text = await res.text();
      const error = res.status >= 400 ? (JSON.parse(text) as { error?: unknown }).error : undefined;
      return { status: res.status, error, location: res.headers.get('location'), selfPosting: text.includes('/logout/confirm') };
    }

    it('honest: the JWE alone, without client_id (as Spring Security, Keycloak, mod_auth_openidc and ASP.NET Core with SaveTokens send it), by a link or by a form posted from its site without her Lax session (sent on as a GET naming the client, the JWE in no URL): after Yes she is back with the state, signed out', async () => {
      const linked = await encryptingSignIn();
      expect(linked.jwe.split('.')).toHaveLength(5);
      await linked.browser.follow(logoutUrl(app, { id_token_hint: linked.jwe, post_logout_redirect_uri: ENC_BYE, state: 'linked' }), app.baseUrl, { headers: { accept: 'text/html' } });
      expect(isConfirmation(linked.browser.lastPage)).toBe(true);
      const back = await linked.browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect({ leftTo: back.leftTo, userinfo: await userinfoStatus(app, linked.accessToken), silent: await silentOutcome(app, linked.client, linked.browser) }).toEqual({ leftTo: `${ENC_BYE}?state=linked`, userinfo: 401, silent: 'login_required' });

      const posted = await encryptingSignIn();
      const answer = await new FormBrowser().post(`${app.issuer}/logout`, { id_token_hint: posted.jwe, post_logout_redirect_uri: ENC_BYE, state: 'posted' }, 'https://rp.example');
      expect({ status: answer.status, location: answer.headers.get('location') }).toEqual({ status: 303, location: logoutUrl(app, { post_logout_redirect_uri: ENC_BYE, state: 'posted', client_id: String(posted.client.client_id) }) });
      await posted.browser.follow(String(answer.headers.get('location')), app.baseUrl);
      const done = await posted.browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(done.leftTo).toBe(`${ENC_BYE}?state=posted`);
    });

    it('honest: "No" after the JWE ends nothing, not even at its client, exactly as after a bare client_id: she is sent back with the state and stays signed in there', async () => {
      const outcomes = [];
      for (const named of ['id_token_hint', 'client_id'] as const) {
        const { client, browser, jwe, accessToken } = await encryptingSignIn();
        await browser.follow(logoutUrl(app, { [named]: named === 'id_token_hint' ? jwe : String(client.client_id), post_logout_redirect_uri: ENC_BYE, state: 'no' }), app.baseUrl, { headers: { accept: 'text/html' } });
        const confirmation = isConfirmation(browser.lastPage);
        const done = await browser.submit('op.logoutForm', {}, app.baseUrl);
        outcomes.push({ confirmation, leftTo: done.leftTo, userinfo: await userinfoStatus(app, accessToken), silent: await silentOutcome(app, client, browser) });
      }
      expect(outcomes).toEqual([0, 1].map(() => ({ confirmation: true, leftTo: `${ENC_BYE}?state=no`, userinfo: 200, silent: 'code' })));
    });

    it('attack: a forged JWE header naming another client and its registered post_logout_redirect_uri gets exactly what a bare client_id gets: she is asked, her "No" ends nothing at either client, and a URI that client did not register is refused', async () => {
      const outcomes = [];
      for (const named of [{ id_token_hint: forgedJwe({ aud: other.client_id }) }, { client_id: String(other.client_id) }] as Array<Record<string, string>>) {
        const { browser, accessToken } = await signedIn(app, rp);
        const atOther = await signedIn(app, other, browser);
        await browser.follow(logoutUrl(app, { ...named, post_logout_redirect_uri: OTHER_BYE, state: 'forged' }), app.baseUrl, { headers: { accept: 'text/html' } });
        const confirmation = isConfirmation(browser.lastPage);
        const done = await browser.submit('op.logoutForm', {}, app.baseUrl);
        outcomes.push({
          confirmation,
          leftTo: done.leftTo,
          userinfo: [await userinfoStatus(app, accessToken), await userinfoStatus(app, atOther.accessToken)],
          silent: [await silentOutcome(app, rp, browser), await silentOutcome(app, other, browser)],
          anonymous: await anonymousAnswer({ ...named, post_logout_redirect_uri: OTHER_BYE, state: 'forged' }),
          unregistered: await anonymousAnswer({ ...named, post_logout_redirect_uri: BYE }),
        });
      }
      expect(outcomes[0]).toEqual({
        confirmation: true,
        leftTo: `${OTHER_BYE}?state=forged`,
        userinfo: [200, 200],
        silent: ['code', 'code'],
        anonymous: { status: 200, error: undefined, location: null, selfPosting: true },
        unregistered: { status: 400, error: 'invalid_request', location: null, selfPosting: false },
      });
      expect(outcomes[1]).toEqual(outcomes[0]);
    });

    it('attack: a JWE header of a foreign iss, without iss, with aud an array, a number or an unknown client, or naming another client than the client_id sent beside it is refused with OAuth JSON and stores nothing; a signed-in browser gets the bare sign-out page, which sends her nowhere', async () => {
      const { jwe } = await encryptingSignIn();
      const before = new Set((await storeRecords()).keys());
      const cases: Array<[string, Record<string, string>, string]> = [
        ['foreign iss', { id_token_hint: forgedJwe({ iss: 'https://evil.example', aud: rp.client_id }), post_logout_redirect_uri: BYE }, 'invalid_request'],
        ['no iss', { id_token_hint: forgedJwe({ iss: undefined, aud: rp.client_id }), post_logout_redirect_uri: BYE }, 'invalid_request'],
        ['aud array', { id_token_hint: forgedJwe({ aud: [rp.client_id] }), post_logout_redirect_uri: BYE }, 'invalid_request'],
        ['aud number', { id_token_hint: forgedJwe({ aud: 1 }) }, 'invalid_request'],
        ['unknown client', { id_token_hint: forgedJwe({ aud: 'no-such-client' }) }, 'invalid_client'],
        ['her JWE, another client_id', { id_token_hint: jwe, client_id: String(rp.client_id), post_logout_redirect_uri: BYE }, 'invalid_request'],
        ['forged, another client_id', { id_token_hint: forgedJwe({ aud: other.client_id }), client_id: String(rp.client_id), post_logout_redirect_uri: BYE }, 'invalid_request'],
      ];
      for (const [name, params, error] of cases) {
        expect({ name, ...(await anonymousAnswer(params)) }).toEqual({ name, status: 400, error, location: null, selfPosting: false });
      }
      expect([...(await storeRecords()).keys()].filter((k) => !before.has(k))).toEqual([]);
      expect(await anonymousAnswer({ client_id: 'no-such-client' })).toEqual({ status: 400, error: 'invalid_client', location: null, selfPosting: false });

      const { browser } = await signedIn(app, rp);
      await browser.follow(logoutUrl(app, { id_token_hint: forgedJwe({ iss: 'https://evil.example', aud: rp.client_id }), post_logout_redirect_uri: BYE, state: 'foreign' }), app.baseUrl, { headers: { accept: 'text/html' } });
      expect(isConfirmation(browser.lastPage)).toBe(true);
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect({ leftTo: done.leftTo, signedOut: browser.lastPage.includes('You are signed out') }).toEqual({ leftTo: undefined, signedOut: true });
    });

    it('attack: a caller without her session (a server, a script) sending her JWE gets what a bare client_id gets, a page that posts its own confirmation, and ends nothing of hers', async () => {
      const { client, browser, jwe, accessToken } = await encryptingSignIn();
      const answers = [];
      for (const named of [{ id_token_hint: jwe }, { client_id: String(client.client_id) }] as Array<Record<string, string>>) {
        answers.push(await anonymousAnswer({ ...named, post_logout_redirect_uri: ENC_BYE, state: 'server' }));
      }
      expect(answers).toEqual([0, 1].map(() => ({ status: 200, error: undefined, location: null, selfPosting: true })));
      expect({ userinfo: await userinfoStatus(app, accessToken), silent: await silentOutcome(app, client, browser) }).toEqual({ userinfo: 200, silent: 'code' });
    });
  });

  describe('session state after logout', () => {
    it('an old session cookie, replayed after the logout, authorizes nothing silently', async () => {
      const { browser, idToken } = await signedIn(app, rp);
      const name = '_session';
      const old = browser.cookie(name);
      const oldSig = browser.cookie(`${name}.sig`);
      expect(old).toBeDefined();
      await browser.follow(logoutUrl(app, { id_token_hint: idToken }), app.baseUrl);
      await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      const replay = new FormBrowser();
      replay.setCookie(name, old as string);
      if (oldSig) replay.setCookie(`${name}.sig`, oldSig);
      expect(await silentOutcome(app, rp, replay)).toBe('login_required');
    });

    it('leaves no Session, Grant or AccessToken record of the sign-in behind', async () => {
      const before = new Set((await storeRecords()).keys());
      const { browser, idToken } = await signedIn(app, rp);
      const during = [...(await storeRecords()).keys()].filter((k) => !before.has(k)).map((k) => k.slice(prefix.length).split(':')[0]);
      expect(during).toEqual(expect.arrayContaining(['Session', 'Grant', 'AccessToken']));
      await browser.follow(logoutUrl(app, { id_token_hint: idToken }), app.baseUrl);
      await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      const left = [...(await storeRecords()).keys()].filter((k) => !before.has(k)).map((k) => k.slice(prefix.length).split(':')[0]);
      expect(left.filter((model) => /^(Session|Grant|AccessToken|AuthorizationCode)$/.test(String(model)))).toEqual([]);
    });

    it('"No, stay signed in" on a logout page that a cross-site link opened with only a client_id keeps the person\'s grant and tokens at that client, and says she is still signed in', async () => {
      const { browser, accessToken } = await signedIn(app, rp);
      // Any page can link here: client_id is public and authenticates nothing.
      await browser.follow(logoutUrl(app, { client_id: String(rp.client_id) }), app.baseUrl);
      expect(isConfirmation(browser.lastPage)).toBe(true);
      // She did not ask to sign out and presses the button that says she stays signed in.
      await browser.submit('op.logoutForm', {}, app.baseUrl);
      expect(browser.lastPage).toContain('You are still signed in');
      expect({ userinfo: await userinfoStatus(app, accessToken), silent: await silentOutcome(app, rp, browser) }).toEqual({ userinfo: 200, silent: 'code' });
    });

    it('"No, stay signed in" on a logout page opened with another person\'s valid ID token for the same client keeps her grant and tokens there', async () => {
      // His own ID token of this client (any browser-based RP hands it to its user; expired hints are accepted).
      const { tokens } = await runCodeFlow(app.issuer, rp, { skipUserinfo: true, login: 'demo-basic', password: 'demo-basic' });
      const { browser, accessToken } = await signedIn(app, rp);
      await browser.follow(logoutUrl(app, { id_token_hint: String(tokens.id_token) }), app.baseUrl);
      expect(isConfirmation(browser.lastPage)).toBe(true);
      await browser.submit('op.logoutForm', {}, app.baseUrl);
      expect({ userinfo: await userinfoStatus(app, accessToken), silent: await silentOutcome(app, rp, browser) }).toEqual({ userinfo: 200, silent: 'code' });
    });

    it('honest: "No" on the logout page of a relying party that sent a valid hint signs her out of that one client only and sends her back to it; she stays signed in', async () => {
      const { browser, idToken, accessToken } = await signedIn(app, rp);
      const otherTokens = await signedIn(app, other, browser);
      await browser.follow(logoutUrl(app, { id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 'no' }), app.baseUrl);
      const done = await browser.submit('op.logoutForm', {}, app.baseUrl);
      expect(done.leftTo).toBe(`${BYE}?state=no`);
      expect(await userinfoStatus(app, accessToken)).toBe(401);
      expect(await userinfoStatus(app, otherTokens.accessToken)).toBe(200);
      expect(await silentOutcome(app, other, browser)).toBe('code');
    });

    it('honest: "Yes" in one browser ends her session there and the grants and tokens of every client she signed in to in it, and nothing of her session in another browser', async () => {
      const here = await signedIn(app, rp);
      const hereOther = await signedIn(app, other, here.browser);
      const elsewhere = await signedIn(app, rp);
      await here.browser.follow(logoutUrl(app, { id_token_hint: here.idToken }), app.baseUrl);
      await here.browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect({
        here: await Promise.all([here.accessToken, hereOther.accessToken].map((t) => userinfoStatus(app, t))),
        hereSilent: await silentOutcome(app, other, here.browser),
        elsewhere: await userinfoStatus(app, elsewhere.accessToken),
        elsewhereSilent: await silentOutcome(app, rp, elsewhere.browser),
      }).toEqual({ here: [401, 401], hereSilent: 'login_required', elsewhere: 200, elsewhereSilent: 'code' });
    });
  });

  describe('a sign-out page she kept open while another replaced its form (two relying parties\' links, two tabs)', () => {
    /** Her browser signed in to both clients, with the sign-out page of `rp` and then that of `other` opened: the older page. */
    const twoPages = async (): Promise<{ browser: FormBrowser; older: string; tokens: string[] }> => {
      const { browser, accessToken } = await signedIn(app, rp);
      const second = await signedIn(app, other, browser);
      await browser.follow(logoutUrl(app, { client_id: String(rp.client_id), post_logout_redirect_uri: BYE, state: 'older' }), app.baseUrl);
      const older = browser.lastPage;
      await browser.follow(logoutUrl(app, { client_id: String(other.client_id), post_logout_redirect_uri: OTHER_BYE, state: 'newer' }), app.baseUrl);
      expect([isConfirmation(older), isConfirmation(browser.lastPage)]).toEqual([true, true]);
      return { browser, older, tokens: [accessToken, second.accessToken] };
    };

    it('honest: "Yes" on the older page asks her again instead of an error that leaves her signed in unawares, and "Yes" there signs her out', async () => {
      const { browser, older, tokens } = await twoPages();
      const asked = await answerKeptPage(app, browser, older, { logout: 'yes' });
      expect({ status: asked.response?.status, confirmation: isConfirmation(browser.lastPage), userinfo: await Promise.all(tokens.map((t) => userinfoStatus(app, t))) }).toEqual({ status: 200, confirmation: true, userinfo: [200, 200] });
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect({ url: done.response?.url, signedOut: browser.lastPage.includes('You are signed out'), userinfo: await Promise.all(tokens.map((t) => userinfoStatus(app, t))) }).toEqual({ url: `${app.issuer}/logout/success`, signedOut: true, userinfo: [401, 401] });
      expect(await silentOutcome(app, rp, browser)).toBe('login_required');
    });

    it('honest: "No" on the older page says she is still signed in, and ends nothing', async () => {
      const { browser, older, tokens } = await twoPages();
      const answered = await answerKeptPage(app, browser, older, {});
      expect({ url: answered.response?.url, stillIn: browser.lastPage.includes('You are still signed in'), userinfo: await Promise.all(tokens.map((t) => userinfoStatus(app, t))) }).toEqual({ url: `${app.issuer}/logout/success`, stillIn: true, userinfo: [200, 200] });
      expect(await silentOutcome(app, other, browser)).toBe('code');
    });

    it('honest: "Yes" on the older page after she signed out on the newer one says she is signed out', async () => {
      const { browser, older, tokens } = await twoPages();
      const newer = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(newer.leftTo).toBe(`${OTHER_BYE}?state=newer`);
      const answered = await answerKeptPage(app, browser, older, { logout: 'yes' });
      expect({ url: answered.response?.url, signedOut: browser.lastPage.includes('You are signed out'), userinfo: await Promise.all(tokens.map((t) => userinfoStatus(app, t))) }).toEqual({ url: `${app.issuer}/logout/success`, signedOut: true, userinfo: [401, 401] });
    });

    it('attack: another site posting her browser to the confirm endpoint (no xsrf, or another browser\'s) only opens the sign-out question: nothing ends', async () => {
      const { browser, accessToken } = await signedIn(app, rp);
      const attacker = new FormBrowser();
      await attacker.follow(logoutUrl(app, {}), app.baseUrl);
      const foreign = /name="xsrf" value="([^"]+)"/.exec(attacker.lastPage)?.[1] as string;
      for (const fields of [{ logout: 'yes' }, { logout: 'yes', xsrf: foreign }] as Record<string, string>[]) {
        const posted = await browser.post(`${app.issuer}/logout/confirm`, fields, 'https://evil.example', { accept: 'text/html' });
        expect({ status: posted.status, location: posted.headers.get('location') }).toEqual({ status: 303, location: `${app.issuer}/logout` });
      }
      expect({ userinfo: await userinfoStatus(app, accessToken), silent: await silentOutcome(app, rp, browser) }).toEqual({ userinfo: 200, silent: 'code' });
    });
  });

  describe('clients gone since the sign-in', () => {
    const USER = 'operator';
    const PASSWORD = 'logout-password-123';
    const auth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

    it('a person signed in through a client the operator has since disabled can still sign out from its logout link (no redirect to it)', async () => {
      const client = await registerClient(app, 'plain', { post_logout_redirect_uris: ['https://rp.example/bye'] });
      const { browser, idToken } = await signedIn(app, client.metadata);
      const disabled = await fetch(`${app.baseUrl}/oidc/v1/management/clients/${String(client.metadata.client_id)}/disable`, { method: 'POST', headers: { authorization: auth } });
      expect(disabled.status).toBe(200);
      const start = await browser.follow(logoutUrl(app, { id_token_hint: idToken, post_logout_redirect_uri: 'https://rp.example/bye' }), app.baseUrl, { headers: { accept: 'text/html' } });
      const page = browser.lastPage;
      expect({ status: start.response?.status, confirmation: isConfirmation(page), saysSignIn: page.includes('Sign-in could not continue') }).toEqual({ status: 200, confirmation: true, saysSignIn: false });
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(done.leftTo).toBeUndefined();
      expect(done.response?.url).toBe(`${app.issuer}/logout/success`);
    });

    it('a person signed in through a client deleted since can still sign out from its logout link (no redirect to it)', async () => {
      const client = await registerClient(app, 'plain', { post_logout_redirect_uris: ['https://rp.example/bye'] });
      const { browser, idToken } = await signedIn(app, client.metadata);
      const deleted = await fetch(String(client.metadata.registration_client_uri), { method: 'DELETE', headers: { authorization: `Bearer ${String(client.metadata.registration_access_token)}` } });
      expect(deleted.status).toBe(204);
      const start = await browser.follow(logoutUrl(app, { id_token_hint: idToken, post_logout_redirect_uri: 'https://rp.example/bye' }), app.baseUrl, { headers: { accept: 'text/html' } });
      expect({ status: start.response?.status, confirmation: isConfirmation(browser.lastPage) }).toEqual({ status: 200, confirmation: true });
      const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      expect(done.leftTo).toBeUndefined();
    });

    it('her answer on a sign-out page shown before its client took the post_logout_redirect_uri out of its registration (RFC 7592), was disabled or was deleted sends her to no relying party, and says what holds', async () => {
      const operator = { method: 'POST', headers: { authorization: auth } };
      const changes = {
        retracted: (c: RegisteredClient) => updateRegistration(c, { post_logout_redirect_uris: ['https://rp.example/other-bye'] }),
        disabled: (c: RegisteredClient) => fetch(`${app.issuer}/management/clients/${String(c.metadata.client_id)}/disable`, operator),
        deleted: (c: RegisteredClient) => fetch(String(c.metadata.registration_client_uri), { method: 'DELETE', headers: { authorization: `Bearer ${String(c.metadata.registration_access_token)}` } }),
      };
      const outcomes: Record<string, string | undefined> = {};
      for (const [change, apply] of Object.entries(changes)) {
        for (const [answer, fields] of [['yes', { logout: 'yes' }], ['no', {}]] as const) {
          for (const named of ['id_token_hint', 'client_id'] as const) {
            const client = await registerClient(app, 'plain', { post_logout_redirect_uris: ['https://rp.example/bye', 'https://rp.example/other-bye'] });
            const { browser, idToken, accessToken } = await signedIn(app, client.metadata);
            const hint: Record<string, string> = { [named]: named === 'id_token_hint' ? idToken : String(client.metadata.client_id) };
            await browser.follow(logoutUrl(app, { ...hint, post_logout_redirect_uri: 'https://rp.example/bye', state: 'before' }), app.baseUrl);
            expect(isConfirmation(browser.lastPage)).toBe(true);
            await apply(client);
            const done = await browser.submit('op.logoutForm', fields, app.baseUrl);
            outcomes[`${change} ${answer} ${named}`] = done.leftTo ?? /<h1>([^<]*)<\/h1>/.exec(browser.lastPage)?.[1];
            // Her "No" ended nothing of a client disabled since the page: enabled again, its token of her sign-in works.
            if (change === 'disabled' && answer === 'no') {
              await fetch(`${app.issuer}/management/clients/${String(client.metadata.client_id)}/enable`, operator);
              outcomes[`${change} ${answer} ${named}`] += ` ${await userinfoStatus(app, accessToken)}`;
            }
          }
        }
      }
      const pages = { yes: 'Signed out', no: 'Still signed in' };
      expect(outcomes).toEqual(Object.fromEntries(Object.keys(outcomes).map((key) => [key, `${pages[key.split(' ')[1] as keyof typeof pages]}${key.startsWith('disabled no') ? ' 200' : ''}`])));
    });
  });

  describe('hostile input', () => {
    const errorOf = async (response: Response): Promise<{ status: number; error?: unknown; location: string | null }> => {
      const text = await response.text();
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { text };
      }
      return { status: response.status, error: body.error, location: response.headers.get('location') };
    };

    it('refuses, with OAuth JSON and no redirect, hints that are garbage, unsigned, HS256 with the client secret, for another client, or not from this issuer', async () => {
      const { idToken: otherHint } = await signedIn(app, other);
      const now = Math.floor(Date.now() / 1000);
      const none = `${b64({ alg: 'none' })}.${b64({ iss: app.issuer, sub: 'x', aud: rp.client_id, iat: now, exp: now + 60 })}.`;
      const hs = await new SignJWT({ iss: app.issuer, sub: 'x', aud: rp.client_id })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(String(rp.client_secret)));
      const cases: Array<[string, Record<string, string>, number, string]> = [
        ['garbage', { id_token_hint: 'not-a-jwt' }, 400, 'invalid_request'],
        ['three dots', { id_token_hint: '..' }, 400, 'invalid_request'],
        ['alg none', { id_token_hint: none, post_logout_redirect_uri: BYE }, 400, 'invalid_request'],
        ['HS256 with client secret', { id_token_hint: hs, post_logout_redirect_uri: BYE }, 400, 'invalid_request'],
        ['other client + client_id', { id_token_hint: otherHint, client_id: String(rp.client_id), post_logout_redirect_uri: BYE }, 400, 'invalid_request'],
        ['other client + this redirect', { id_token_hint: otherHint, post_logout_redirect_uri: BYE }, 400, 'invalid_request'],
        ['other issuer', { id_token_hint: await providerSigned(app, { iss: 'https://evil.example' }), post_logout_redirect_uri: BYE }, 400, 'invalid_request'],
        ['no sub', { id_token_hint: await providerSigned(app, { sub: undefined }), post_logout_redirect_uri: BYE }, 400, 'invalid_request'],
        ['aud array', { id_token_hint: await providerSigned(app, { aud: [rp.client_id] }), post_logout_redirect_uri: BYE }, 400, 'invalid_client'],
        ['aud object', { id_token_hint: `${b64({ alg: 'RS256' })}.${b64({ aud: { toString: 1 } })}.sig` }, 400, 'invalid_client'],
        ['aud number', { id_token_hint: `${b64({ alg: 'RS256' })}.${b64({ aud: 1 })}.sig` }, 400, 'invalid_client'],
        ['payload array', { id_token_hint: `${b64({ alg: 'RS256' })}.${b64([1])}.sig` }, 400, 'invalid_request'],
      ];
      for (const [name, params, status, error] of cases) {
        const res = await errorOf(await fetch(logoutUrl(app, params), { redirect: 'manual' }));
        expect({ name, ...res }).toEqual({ name, status, error, location: null });
      }
      // JSON nested 20 000 deep in the hint's payload, by POST (a query that long is refused by Node with 431)
      const deep = `${b64({ alg: 'RS256' })}.${b64(`{"aud":${'['.repeat(20_000)}${']'.repeat(20_000)}}`)}.sig`;
      const posted = await fetch(`${app.issuer}/logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ id_token_hint: deep }).toString() });
      expect({ name: 'deep json', ...(await errorOf(posted)) }).toEqual({ name: 'deep json', status: 400, error: 'invalid_client', location: null });
    });

    it('never redirects to a post_logout_redirect_uri spelled otherwise than registered', async () => {
      const { idToken } = await signedIn(app, rp);
      for (const uri of [`${BYE}/`, 'HTTP://RP.LOCALHOST/bye', 'http://rp.localhost/%62ye', 'http://evil@rp.localhost/bye', `${BYE}#x`, `${BYE}?x=1`, 'http://rp.localhost/bye/..', 'http://rp.localhost:80/bye', OTHER_BYE, 'javascript:alert(1)']) {
        const res = await errorOf(await fetch(logoutUrl(app, { id_token_hint: idToken, post_logout_redirect_uri: uri }), { redirect: 'manual' }));
        expect({ uri, ...res }).toEqual({ uri, status: 400, error: 'invalid_request', location: null });
      }
    });

    it('escapes every reflected value on the HTML error page', async () => {
      const res = await fetch(logoutUrl(app, { client_id: '<script>alert(1)</script>', post_logout_redirect_uri: '"><img src=x onerror=alert(1)>', state: '<b>x</b>' }), { headers: { accept: 'text/html' } });
      const page = await res.text();
      expect(res.status).toBe(400);
      expect(page).not.toMatch(/<script>alert|<img src=x|<b>x<\/b>/);
    });

    it('a cross-site POST to the confirm endpoint without the xsrf token does not end the session', async () => {
      const { browser } = await signedIn(app, rp);
      const res = await browser.post(`${app.issuer}/logout/confirm`, { logout: 'yes' }, 'https://evil.example');
      expect(res.status).toBe(400);
      expect(await silentOutcome(app, rp, browser)).toBe('code');
      // with an xsrf token from another browser's logout page
      const attacker = new FormBrowser();
      await attacker.follow(logoutUrl(app, {}), app.baseUrl);
      const xsrf = /name="xsrf" value="([^"]+)"/.exec(attacker.lastPage)?.[1] as string;
      const forged = await browser.post(`${app.issuer}/logout/confirm`, { logout: 'yes', xsrf }, 'https://evil.example');
      expect(forged.status).toBe(400);
      expect(await silentOutcome(app, rp, browser)).toBe('code');
    });

    it('a logout form posted from another site, without her Lax session cookie, ends nothing and replaces no cookie: it is answered by a redirect to the same request as a GET (also under another spelling of the path)', async () => {
      const { browser, accessToken } = await signedIn(app, rp);
      for (const [path, fields] of [['/logout', {}], ['/LOGOUT', { post_logout_redirect_uri: BYE, state: 'forged', client_id: String(rp.client_id) }]] as const) {
        const posted = await new FormBrowser().post(`${app.issuer}${path}`, fields, 'https://evil.example');
        expect({ path, status: posted.status, location: posted.headers.get('location'), cookies: posted.headers.getSetCookie() }).toEqual({ path, status: 303, location: logoutUrl(app, fields), cookies: [] });
      }
      expect({ userinfo: await userinfoStatus(app, accessToken), silent: await silentOutcome(app, rp, browser) }).toEqual({ userinfo: 200, silent: 'code' });
    });

    it('serves /logout under another spelling exactly as the canonical path, or 404', async () => {
      const { browser, idToken } = await signedIn(app, rp);
      const query = new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: 'https://evil.example/' });
      const canonical = await browser.request(`${app.issuer}/logout?${query}`, { redirect: 'manual' });
      expect([canonical.status, canonical.headers.get('location')]).toEqual([400, null]);
      for (const path of ['/LOGOUT', '/logout/', '/Logout', '//logout', '/%6cogout', '/logout/confirm/', '/LOGOUT/confirm']) {
        const res = await browser.request(`${app.issuer}${path}?${query}`, { redirect: 'manual' });
        const status = path.includes('confirm') ? res.status : res.status === 404 ? canonical.status : res.status;
        expect({ path, status: Math.min(status, 499) >= 400 ? 'refused' : status, location: res.headers.get('location') }).toEqual({ path, status: 'refused', location: null });
      }
      expect(await silentOutcome(app, rp, browser)).toBe('code');
    });

    it('HEAD /logout is refused like GET; OPTIONS is 404, not a 500', async () => {
      const head = await fetch(logoutUrl(app, { id_token_hint: 'garbage' }), { method: 'HEAD' });
      expect(head.status).toBe(400);
      const options = await fetch(`${app.issuer}/logout`, { method: 'OPTIONS' });
      expect(options.status).toBe(404);
    });

    it('refuses a huge hint without a 500', async () => {
      const big = 'a'.repeat(2 * 1024 * 1024);
      const post = await fetch(`${app.issuer}/logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `id_token_hint=${big}` });
      expect(post.status).toBe(413);
      const get = await fetch(`${app.issuer}/logout?id_token_hint=${'a'.repeat(64 * 1024)}`).catch(() => undefined);
      expect(get === undefined || get.status < 500).toBe(true);
    });

    it('an anonymous request to /logout stores no more than an authorization request may (16 KiB) and nothing that outlives an interaction (1 h)', async () => {
      const before = new Set((await storeRecords()).keys());
      // No cookie, no client, no hint: anyone on the internet can send this, as often as they like.
      const res = await fetch(`${app.issuer}/logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ state: 'x'.repeat(50 * 1024) }).toString() });
      expect(res.status).toBeLessThan(500);
      const small = await fetch(`${app.issuer}/logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ state: 'x'.repeat(1024) }).toString() });
      expect(small.status).toBe(200);
      const created = [...(await storeRecords())].filter(([k]) => !before.has(k)).map(([key, r]) => ({ model: key.slice(prefix.length).split(':')[0], bytes: r.bytes, ttl: r.ttl }));
      expect(created.map((r) => r.model)).toContain('Session');
      expect(created.filter((r) => r.bytes > 16 * 1024 || r.ttl > 3600)).toEqual([]);
    });

    it('refuses a state longer than 14 KiB at /logout with invalid_request, storing nothing; 14 KiB is served', async () => {
      const before = new Set((await storeRecords()).keys());
      const post = (state: string): Promise<Response> =>
        fetch(`${app.issuer}/logout`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ state }).toString() });
      const refused = await post('x'.repeat(14 * 1024 + 1));
      expect([refused.status, ((await refused.json()) as { error?: string }).error]).toEqual([400, 'invalid_request']);
      // A parameter /logout ignores changes nothing: response_type does not make it an authorization request.
      const disguised = await fetch(`${app.issuer}/logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ response_type: 'code', state: 'x'.repeat(50 * 1024) }).toString(),
      });
      expect(disguised.status).toBe(400);
      const queried = await fetch(logoutUrl(app, { state: 'x'.repeat(14 * 1024 + 1) }));
      expect(queried.status).toBe(400);
      expect([...(await storeRecords()).keys()].filter((k) => !before.has(k))).toEqual([]);
      expect((await post('x'.repeat(14 * 1024))).status).toBe(200);
    });

    it('honest: a signed-in session keeps its 14 days when her logout page is shown; only a session nobody signed in to is kept an hour', async () => {
      const { browser } = await signedIn(app, rp);
      await browser.follow(logoutUrl(app, { client_id: String(rp.client_id) }), app.baseUrl);
      expect(isConfirmation(browser.lastPage)).toBe(true);
      const sessions = [...(await storeRecords())].filter(([key, r]) => key.slice(prefix.length).startsWith('Session:') && r.value.includes('"accountId"'));
      expect(sessions.length).toBeGreaterThan(0);
      for (const [, record] of sessions) expect(record.ttl).toBeGreaterThan(13 * 86_400);
    });

    it('logs no id_token_hint, state, sub or post_logout_redirect_uri, and stores no hint', async () => {
      const { browser, idToken } = await signedIn(app, rp);
      const state = 'state-sentinel-3f9a';
      lines.length = 0;
      await browser.follow(logoutUrl(app, { id_token_hint: idToken, post_logout_redirect_uri: BYE, state }), app.baseUrl);
      const stored = [...(await storeRecords()).values()].map((r) => r.value).join('\n');
      await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
      await fetch(logoutUrl(app, { id_token_hint: `${idToken}x`, state }));
      const { sub } = JSON.parse(Buffer.from(idToken.split('.')[1] as string, 'base64url').toString()) as { sub: string };
      const logged = lines.join('\n');
      for (const secret of [idToken.split('.')[2] as string, state, sub]) expect(logged).not.toContain(secret);
      expect(logged).toContain('"end_session_error"');
      expect(stored).not.toContain(idToken.split('.')[2]);
    });
  });
});

describe('logout with an ID token signed by a key that was rotated out while the session lives', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-logout-'));
  const keysFile = join(dir, 'keys.json');
  let app: RunningApp;

  beforeAll(async () => {
    writeFileSync(keysFile, JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    app = await startApp({ clients: [rp], properties: { 'svc.keys.file': keysFile } });
  });
  afterAll(async () => app.close());

  it('still offers the signed-in person to sign out, without redirecting to the RP, when the RP\'s hint was signed by a key retired since (the session, 14 days, outlives the retired key, 24 h)', async () => {
    const { browser, idToken } = await signedIn(app, rp);
    const t = Math.floor(Date.now() / 1000);
    expect((await rotateKeysFile(keysFile, { now: t })).step).toBe('added');
    expect((await rotateKeysFile(keysFile, { now: t + 3601 })).step).toBe('promoted');
    expect((await rotateKeysFile(keysFile, { now: t + 3601 + 86_401 })).step).toBe('retired');
    expect((await app.app.svc.reloadKeys()).reloaded).toBe(true);
    // The session is still there: a silent authorization still succeeds.
    expect(await silentOutcome(app, rp, browser)).toBe('code');
    const start = await browser.follow(logoutUrl(app, { id_token_hint: idToken, post_logout_redirect_uri: BYE, state: 'rot' }), app.baseUrl, { headers: { accept: 'text/html' } });
    expect({ status: start.response?.status, confirmation: isConfirmation(browser.lastPage) }).toEqual({ status: 200, confirmation: true });
    const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
    expect(done.leftTo).toBeUndefined();
    expect(browser.lastPage).toContain('You are signed out');
    expect(await silentOutcome(app, rp, browser)).toBe('login_required');
  });
});

describe('her logout while another request of her session is in flight (a silent renew in another tab)', () => {
  /** The next account lookup (oidc-provider's, after it read the session), held when the test asks. */
  const lookup = heldCall();
  let app: RunningApp;

  beforeAll(async () => {
    app = await startApp({
      clients: [rp],
      authenticator: accountsHeldAt(lookup),
    });
  });
  afterAll(async () => app.close());

  /** Sends `request` and signs her out in `browser` (Yes) while the request waits after reading her session. */
  const loggedOutDuring = async <T>(browser: FormBrowser, request: () => Promise<T>): Promise<T> => {
    const { arrived, release } = lookup.hold();
    const answer = request();
    await arrived;
    await browser.follow(logoutUrl(app, { client_id: String(rp.client_id) }), app.baseUrl);
    expect(isConfirmation(browser.lastPage)).toBe(true);
    const done = await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
    expect(done.response?.url).toBe(`${app.issuer}/logout/success`);
    release();
    return answer;
  };

  it('attack: a silent authorization in flight as she signs out writes her session back when it ends: it signs nobody in, neither in her browser nor by her old cookie, and leaves the store', async () => {
    const { browser } = await signedIn(app, rp);
    const oldCookie = browser.cookie('_session') as string;
    const oldSig = browser.cookie('_session.sig');
    await loggedOutDuring(browser, () => new FormBrowser().follow(codeFlowUrl(app.issuer, rp, { prompt: 'none', state: 'renew' }), app.baseUrl, { headers: { cookie: `_session=${oldCookie}${oldSig ? `; _session.sig=${oldSig}` : ''}` } }));
    const replay = new FormBrowser();
    replay.setCookie('_session', oldCookie);
    if (oldSig) replay.setCookie('_session.sig', oldSig);
    expect({ hers: await silentOutcome(app, rp, browser), replayed: await silentOutcome(app, rp, replay), sessions: await sessionsOf(app, 'demo-0001') }).toEqual({ hers: 'login_required', replayed: 'login_required', sessions: 0 });
    await browser.follow(codeFlowUrl(app.issuer, rp, { state: 'next' }), app.baseUrl);
    expect(browser.lastPage).toContain('id="login-form"');
  });

  it('attack: her consent in another tab, in flight as she signs out, does not leave her signed in', async () => {
    const browser = new FormBrowser();
    await browser.follow(codeFlowUrl(app.issuer, rp, { state: 'tab-a' }), app.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, app.baseUrl);
    expect(browser.lastPage).toContain('id="consent-allow"');
    // The same browser: the Allow, sent first, reads her session before the sign-out in the other tab.
    await loggedOutDuring(browser, () => browser.submit('consent-allow', {}, app.baseUrl));
    expect({ hers: await silentOutcome(app, rp, browser), sessions: await sessionsOf(app, 'demo-0001') }).toEqual({ hers: 'login_required', sessions: 0 });
  });

  it('honest: she signs in again at once after her logout and stays signed in', async () => {
    const { browser } = await signedIn(app, rp);
    await browser.follow(logoutUrl(app, { client_id: String(rp.client_id) }), app.baseUrl);
    await browser.submit('op.logoutForm', { logout: 'yes' }, app.baseUrl);
    expect(await silentOutcome(app, rp, browser)).toBe('login_required');
    const before = await sessionsOf(app, 'demo-0001');
    await signedIn(app, rp, browser);
    expect({ silent: await silentOutcome(app, rp, browser), sessions: await sessionsOf(app, 'demo-0001') }).toEqual({ silent: 'code', sessions: before + 1 });
  });
});

import { describe, expect, it } from '@jest/globals';
import * as oidc from 'openid-client';

import { confidentialClient } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { clockAhead, clockAt } from '../helpers/clock.js';
import { codeFlowUrl, FormBrowser, pkcePair, redeemCode, redirectParams, signIn } from '../helpers/flow.js';

const client = confidentialClient();

describe('interactions: prompt, max_age, headers, cross-site posts (C3, issue 7)', () => {
  const running = appPerSuite({ clients: [client] });

  const url = (params: Record<string, string> = {}): string => codeFlowUrl(running.issuer, client, { state: 'st', ...params });

  it('prompt=none without a session → login_required; signed in without consent → consent_required; with both → a code', async () => {
    const browser = new FormBrowser();
    const none = await browser.follow(url({ prompt: 'none' }), running.baseUrl);
    expect(redirectParams(none.leftTo as string).get('error')).toBe('login_required');

    // Sign in, then walk away from the consent page.
    await browser.follow(url(), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain('id="consent-allow"');
    const noConsent = await browser.follow(url({ prompt: 'none' }), running.baseUrl);
    expect(redirectParams(noConsent.leftTo as string).get('error')).toBe('consent_required');

    await signIn(url(), { browser });
    const silent = await browser.follow(url({ prompt: 'none' }), running.baseUrl);
    expect(redirectParams(silent.leftTo as string).get('code')).toEqual(expect.any(String));
  });

  it('re-authenticates when max_age is exceeded, and puts auth_time in the ID token', async () => {
    const config = await oidc.discovery(new URL(running.issuer), client.client_id, undefined, oidc.ClientSecretBasic(client.client_secret), {
      execute: [oidc.allowInsecureRequests],
    });
    const browser = new FormBrowser();
    const first = await signIn(url(), { browser });
    expect(first.callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
    // 2.1 s later (the clock moved, not waited for), the session is older than max_age=1.
    const clock = clockAhead(2100);
    try {
      const { verifier, challenge } = pkcePair();
      const step = await browser.follow(url({ max_age: '1', code_challenge: challenge }), running.baseUrl);
      expect(step.leftTo).toBeUndefined();
      expect(browser.lastPage).toContain('id="login-form"');
      const signedIn = Math.floor(Date.now() / 1000);
      const again = await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
      const tokens = await oidc.authorizationCodeGrant(config, new URL(again.leftTo as string), { pkceCodeVerifier: verifier, expectedState: 'st', maxAge: 1 });
      const claims = tokens.claims();
      expect(claims?.auth_time).toBeGreaterThanOrEqual(signedIn);
      expect(claims?.auth_time).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    } finally {
      clock.restore();
    }
  });

  const DAY_MS = 86_400_000;
  /** Runs `step` with the clock `days` after now. */
  const onDay = async <T>(days: number, step: () => Promise<T>): Promise<T> => {
    const clock = clockAhead(days * DAY_MS);
    try {
      return await step();
    } finally {
      clock.restore();
    }
  };

  it('ends a sign-in 14 days after it, however often the session was used meanwhile: a kept cookie replayed on day 15 authorizes nothing silently', async () => {
    const browser = new FormBrowser();
    await signIn(url(), { browser });
    const used = await onDay(13, () => browser.follow(url({ prompt: 'none' }), running.baseUrl));
    expect(redirectParams(used.leftTo as string).get('code')).toEqual(expect.any(String));
    const kept = ['_session', '_session.sig'].map((name) => [name, browser.cookie(name) as string] as const);
    const expiry = browser.seenSetCookies.filter((line) => line.startsWith('_session=')).map((line) => Date.parse(/expires=([^;]+)/i.exec(line)?.[1] ?? ''));
    expect(Math.max(...expiry)).toBeLessThanOrEqual(Date.now() + 14 * DAY_MS + 60_000);
    const replayed = await onDay(15, async () => {
      for (const [name, value] of kept) browser.setCookie(name, value);
      return browser.follow(url({ prompt: 'none' }), running.baseUrl);
    });
    expect(redirectParams(replayed.leftTo as string).get('error')).toBe('login_required');
  });

  it('honest: a session is kept 14 days from her sign-in, and signing in again (prompt=login) starts 14 more', async () => {
    const browser = new FormBrowser();
    await signIn(url(), { browser });
    const silent = await onDay(13, () => browser.follow(url({ prompt: 'none' }), running.baseUrl));
    expect(redirectParams(silent.leftTo as string).get('code')).toEqual(expect.any(String));
    const again = await onDay(13, () => signIn(url({ prompt: 'login' }), { browser }));
    expect(again.callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
    // Signed in on day 13: on day 20 she still is (her grant, given on day 0, has ended: consent, not login).
    const later = await onDay(20, () => browser.follow(url({ prompt: 'none' }), running.baseUrl));
    expect(redirectParams(later.leftTo as string).get('error')).toBe('consent_required');
  });

  /** A browser signed in on a clock stopped 900 ms into a second, and the instant her sign-in turns 14 days old. */
  const signedInOnStoppedClock = async (): Promise<{ clock: ReturnType<typeof clockAt>; browser: FormBrowser; end: number }> => {
    const clock = clockAt(Math.floor(Date.now() / 1000) * 1000 + 900);
    const end = Math.floor(Date.now() / 1000) * 1000 + 14 * DAY_MS;
    const browser = new FormBrowser();
    await signIn(url(), { browser }).catch((err: unknown) => {
      clock.restore();
      throw err;
    });
    return { clock, browser, end };
  };

  /** Where a silent authorization (prompt=none) of `browser` ends, with the clock at `ms`: `code`, or the error. */
  const silentlyAt = async (clock: { set(ms: number): void }, ms: number, browser: FormBrowser): Promise<string> => {
    clock.set(ms);
    const params = redirectParams((await browser.follow(url({ prompt: 'none' }), running.baseUrl)).leftTo as string);
    return params.get('error') ?? (params.get('code') ? 'code' : 'nothing');
  };

  it('ends a sign-in exactly 14 days after it, also for a cookie used without pause across that instant: nobody is signed in by it after', async () => {
    const { clock, browser, end } = await signedInOnStoppedClock();
    try {
      expect(await silentlyAt(clock, end - 100, browser)).toBe('code');
      // Requests a few hundred milliseconds apart, each of which saved the session again.
      const after: string[] = [];
      for (let ms = end; ms <= end + 10_000; ms += 500) after.push(await silentlyAt(clock, ms, browser));
      expect(after).toEqual(after.map(() => 'login_required'));
      // Nor does a full authorization request find her signed in: the login form, not the consent page.
      clock.set(end + 10_500);
      await browser.follow(url(), running.baseUrl);
      expect(browser.lastPage).toContain('id="login-form"');
      expect(browser.lastPage).not.toContain('id="consent-allow"');
    } finally {
      clock.restore();
    }
  });

  it('honest: one second before the 14 days end she is still signed in, and a sign-in then starts 14 more', async () => {
    const { clock, browser, end } = await signedInOnStoppedClock();
    try {
      expect(await silentlyAt(clock, end - 1000, browser)).toBe('code');
      clock.set(end - 1000);
      const again = await signIn(url({ prompt: 'login' }), { browser });
      expect(again.callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
      // Still signed in past the first 14 days (her consent, given with the first sign-in, has ended: consent, not login).
      expect(await silentlyAt(clock, end + 1000, browser)).toBe('consent_required');
      expect(await silentlyAt(clock, end - 1000 + 14 * DAY_MS - 1000, browser)).toBe('consent_required');
      expect(await silentlyAt(clock, end - 1000 + 14 * DAY_MS, browser)).toBe('login_required');
    } finally {
      clock.restore();
    }
  });

  it('serves login and consent with a strict CSP, frame protections and no caching', async () => {
    const browser = new FormBrowser();
    const login = await browser.follow(url(), running.baseUrl);
    const consentStep = await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    const consentPage = browser.lastPage;
    for (const response of [login.response, consentStep.response]) {
      const csp = response?.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("base-uri 'none'");
      expect(csp).not.toContain('unsafe-inline');
      // The login page runs no script; the consent page its one, which holds off Allow (lib/pages/seen-gate.ts), by nonce.
      const nonce = /script-src 'nonce-([A-Za-z0-9+/]{22}==)';/.exec(csp)?.[1];
      if (response === login.response) expect(csp).not.toContain('script-src');
      else expect([csp.match(/script-src/g)?.length, consentPage.match(/<script\b[^>]*>/g)]).toEqual([1, [`<script nonce="${String(nonce)}">`]]);
      expect(response?.headers.get('x-frame-options')).toBe('DENY');
      expect(response?.headers.get('cache-control')).toBe('no-store');
      expect(response?.headers.get('content-type')).toContain('text/html');
    }
  });

  it('refuses a cross-site POST to the login form', async () => {
    const browser = new FormBrowser();
    await browser.follow(url(), running.baseUrl);
    const action = browser.formAction('login-form', running.baseUrl);
    const body = new URLSearchParams({ login: 'demo', password: 'demo' }).toString();
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const evilOrigin = await browser.request(action, { method: 'POST', headers: { ...form, origin: 'https://evil.example' }, body });
    expect(evilOrigin.status).toBe(403);
    expect(await evilOrigin.text()).toContain('cross_site_request');
    const crossSite = await browser.request(action, { method: 'POST', headers: { ...form, 'sec-fetch-site': 'cross-site', origin: 'null' }, body });
    expect(crossSite.status).toBe(403);
    const withoutCookie = await fetch(action, { method: 'POST', headers: form, body, redirect: 'manual' });
    expect(withoutCookie.status).toBe(400);
    // The same form from our own origin still works.
    const ok = await browser.request(action, { method: 'POST', headers: { ...form, 'sec-fetch-site': 'same-origin', origin: 'null' }, body });
    expect(ok.status).toBe(303);
  });

  it('refuses a form posted to one interaction with the cookie of another: the URL and the cookie name one sign-in', async () => {
    const browser = new FormBrowser();
    await browser.follow(url(), running.baseUrl);
    const first = browser.formAction('login-form', running.baseUrl);
    await browser.follow(url(), running.baseUrl);
    const second = browser.formAction('login-form', running.baseUrl);
    expect(second).not.toBe(first);
    const body = new URLSearchParams({ login: 'demo', password: 'demo' }).toString();
    const headers = { 'content-type': 'application/x-www-form-urlencoded', origin: running.baseUrl };
    const crossed = await browser.request(first, { method: 'POST', headers, body });
    expect(crossed.status).toBe(400);
    expect(await crossed.text()).not.toContain('login-form');
    // Honest: the form of the interaction the cookie names signs in.
    expect((await browser.request(second, { method: 'POST', headers, body })).status).toBe(303);
  });

  it('honest: a browser without Fetch Metadata (Safari before 16.4) posts the login form with its Origin and signs in', async () => {
    const browser = new FormBrowser();
    await browser.follow(url(), running.baseUrl);
    const action = browser.formAction('login-form', running.baseUrl);
    const body = new URLSearchParams({ login: 'demo', password: 'demo' }).toString();
    const signedIn = await browser.request(action, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: running.baseUrl }, body });
    expect(signedIn.status).toBe(303);
  });

  it('answers a failed login with 403 and one message for unknown accounts and wrong passwords', async () => {
    const texts: string[] = [];
    for (const [login, password] of [
      ['demo', 'wrong'],
      ['no-such-user', 'wrong'],
    ]) {
      const browser = new FormBrowser();
      await browser.follow(url(), running.baseUrl);
      const step = await browser.submit('login-form', { login: login as string, password: password as string }, running.baseUrl);
      expect(step.response?.status).toBe(403);
      texts.push(/<p class="error"[^>]*>([^<]*)<\/p>/.exec(browser.lastPage)?.[1] ?? '');
    }
    expect(texts).toEqual(['The login or password is not correct.', 'The login or password is not correct.']);
  });

  it('a failed login page is the same for an unknown account and a wrong password but for the login typed, and never holds the password', async () => {
    const pages: string[] = [];
    for (const [login, password] of [
      ['demo', 'wrong-pw-4d1f'],
      ['no-such-user', 'wrong-pw-4d1f'],
    ] as const) {
      const browser = new FormBrowser();
      await browser.follow(url(), running.baseUrl);
      const shown = browser.lastPage;
      expect(shown).toContain('id="login-form"');
      expect(shown).not.toContain('id="login-error"');
      expect(shown).toContain('value=""');
      const step = await browser.submit('login-form', { login, password }, running.baseUrl);
      expect(step.response?.status).toBe(403);
      const page = browser.lastPage;
      expect(page).not.toContain(password);
      expect(page).toContain(`value="${login}" aria-describedby="login-error"`);
      // What differs by the interaction (its uid, the page's nonce) and the login typed is set aside.
      pages.push(page.replaceAll(/interaction\/[^/"]+/g, 'interaction/UID').replaceAll(/nonce-[^'"\s]+|nonce="[^"]+"/g, 'NONCE').replace(`value="${login}"`, 'value="LOGIN"'));
    }
    expect(pages[1]).toBe(pages[0]);
  });
});

describe('a flood of anonymous authorization requests on the embedded store (svc.memory-store.max-mb)', () => {
  const publicClient = { client_id: 'public-rp', token_endpoint_auth_method: 'none' as const, redirect_uris: ['http://rp.localhost/public-cb'] };
  const crowd = appPerSuite({ clients: [client] });
  const running = appPerSuite({ clients: [client, publicClient], properties: { 'svc.memory-store.max-mb': 1 } });
  const STORE_BUSY = { error: 'server_error', error_description: 'the provider store is temporarily unavailable, try again shortly' };
  const answer = (location: string | undefined): Record<string, string | null> => {
    const params = redirectParams(location as string);
    return { error: params.get('error'), error_description: params.get('error_description') };
  };

  it('honest: 64 people signing in at once under the default budget all get their code', async () => {
    const results = await Promise.all(Array.from({ length: 64 }, () => signIn(codeFlowUrl(crowd.issuer, client, { state: 'st' }))));
    expect(results.filter((r) => r.callbackUrl.searchParams.get('code')).length).toBe(64);
  });

  it('attack: once a stranger\'s flood has filled nine tenths of it, new sign-ins get the store\'s 503 answer (server_error to the client) and /readyz 503; she who had started finishes; an hour later the flood has expired and sign-ins work again', async () => {
    const her = new FormBrowser();
    const { verifier, challenge } = pkcePair();
    await her.follow(codeFlowUrl(running.issuer, client, { state: 'hers', code_challenge: challenge }), running.baseUrl);
    expect(her.lastPage).toContain('id="login-form"');
    // Large requests first, then small ones filling the last gap.
    for (const state of ['x'.repeat(6000), 'x']) {
      let refused: string | undefined;
      for (let i = 0; i < 1000 && !refused; i += 1) {
        const response = await fetch(codeFlowUrl(running.issuer, publicClient, { state }), { redirect: 'manual' });
        const location = response.headers.get('location') ?? '';
        if (!location.includes('/interaction/')) refused = location;
      }
      expect(answer(refused)).toEqual(STORE_BUSY);
    }
    const newcomer = await new FormBrowser().follow(codeFlowUrl(running.issuer, client, { state: 'new' }), running.baseUrl);
    expect(answer(newcomer.leftTo)).toEqual(STORE_BUSY);
    expect((await fetch(`${running.baseUrl}/readyz`)).status).toBe(503);
    expect((await fetch(`${running.baseUrl}/healthz`)).status).toBe(200);

    // Her login page was served before the flood: her sign-in, consent and code redemption fit in the last tenth.
    await her.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    const { leftTo } = await her.submit('consent-allow', {}, running.baseUrl);
    const code = redirectParams(leftTo as string).get('code') as string;
    expect((await redeemCode(running.issuer, client, code, verifier)).body.id_token).toEqual(expect.any(String));

    const clock = clockAhead(3600_000);
    try {
      expect((await fetch(`${running.baseUrl}/readyz`)).status).toBe(200);
      const later = await signIn(codeFlowUrl(running.issuer, client, { state: 'later' }));
      expect(later.callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
    } finally {
      clock.restore();
    }
  });
});

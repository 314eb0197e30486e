import { describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../adapters/memory.js';
import { confidentialClient, type StartOptions } from '../helpers/app.js';
import { clockAhead } from '../helpers/clock.js';
import { countingAuthenticator } from '../helpers/counting-authenticator.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { codeFlowUrl, FormBrowser } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';
import { appPerSuite } from '../helpers/suite-app.js';

const client = confidentialClient();

/** Post/Redirect/Get (C8): a sign-in page is never the answer to her post, so reloading it sends nothing again. */
describe.each(['http', 'https'] as const)('a failed sign-in answers 303 to its login page, %s base URL', (scheme) => {
  const counting = countingAuthenticator();
  const { logger, lines } = capturingLogger();
  let store: CountingStore;
  const options = (): StartOptions => {
    store = countingStore(createMemoryStore());
    return { logger, store, clients: [client], authenticator: counting.authenticator, properties: { 'svc.proxy': true }, ...(scheme === 'https' ? { publicScheme: scheme } : {}) };
  };
  const running = appPerSuite(options);
  /** The origin her browser posts from (the base URL's), which is not the one the test talks to over https. */
  const origin = (): string => (scheme === 'https' ? running.baseUrl.replace(/^http:/, 'https:') : running.baseUrl);
  let address = 0;
  /** A fresh address per person: one budget each, unless a test names one. */
  const freshAddress = (): string => `198.51.100.${(address += 1)}`;

  /** A fresh browser at the login page of a new flow: the form's action and the page's own URL. */
  const atLoginPage = async (browser = new FormBrowser()): Promise<{ browser: FormBrowser; action: string; page: string }> => {
    await browser.follow(codeFlowUrl(running.issuer, client, { state: 'st' }), running.baseUrl);
    const action = browser.formAction('login-form', running.baseUrl);
    return { browser, action, page: action.replace(/\/login$/, '') };
  };
  const post = (browser: FormBrowser, action: string, login: string, password: string, from = freshAddress()): Promise<Response> =>
    browser.post(action, { login, password }, origin(), { 'x-forwarded-for': from });
  /** Reloads the page at `page` as a browser does: a GET with its cookies. */
  const reload = async (browser: FormBrowser, page: string): Promise<{ status: number; html: string; retryAfter: string | null }> => {
    const response = await browser.request(page);
    return { status: response.status, html: await response.text(), retryAfter: response.headers.get('retry-after') };
  };
  /** The value of the input `name` on `html`, and whether it takes the cursor. */
  const field = (html: string, name: string): { value: string | undefined; autofocus: boolean } => {
    const input = new RegExp(`<input id="${name}"[^>]*>`).exec(html)?.[0] ?? '';
    return { value: /value="([^"]*)"/.exec(input)?.[1], autofocus: / autofocus/.test(input) };
  };
  /** Follows `location` and the redirects after it on the provider's origin (over https, its path on the plain wire): the page it ends at. */
  const followed = async (browser: FormBrowser, location: string | null): Promise<string> => {
    let next = location;
    for (let hops = 0; next && hops < 5; hops += 1) {
      const url = new URL(next, origin());
      if (url.origin !== origin()) return url.href;
      const response = await browser.request(`${running.baseUrl}${url.pathname}${url.search}`);
      next = response.headers.get('location');
      if (!next) return response.text();
    }
    throw new Error('too many redirects');
  };
  const failedCookie = (browser: FormBrowser): string | undefined => browser.seenSetCookies.filter((line) => /^(__Host-)?svc\.login-failed/.test(line)).at(-1);

  it('honest: a wrong password answers 303 to the page itself; the page shows why, keeps her login, not her password, waits in the password field, and reloads judge nothing', async () => {
    const { browser, action, page } = await atLoginPage();
    const judged = counting.judged();
    const interactionWrites = store.writes('Interaction');
    const answer = await post(browser, action, 'demo', 'wrong-pw-5be1');
    expect(answer.status).toBe(303);
    expect(new URL(answer.headers.get('location') ?? '', running.baseUrl).href).toBe(page);
    expect(answer.headers.get('location')).toBe(new URL(page).pathname);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(await answer.text()).not.toContain('wrong-pw-5be1');
    expect(counting.judged()).toBe(judged + 1);
    for (let i = 0; i < 3; i += 1) {
      const shown = await reload(browser, page);
      expect(shown.status).toBe(403);
      expect(shown.html).toContain('<p class="error" role="alert" id="login-error">The login or password is not correct.</p>');
      expect(field(shown.html, 'login')).toEqual({ value: 'demo', autofocus: false });
      expect(field(shown.html, 'password')).toEqual({ value: undefined, autofocus: true });
      expect(shown.html).not.toContain('wrong-pw-5be1');
    }
    expect(counting.judged()).toBe(judged + 1);
    // Nothing of the failure went to the store: her login name is in no record, not even encrypted.
    expect(store.writes('Interaction')).toBe(interactionWrites);
  });

  it('honest: the right password after a failure signs in as before, and takes the failure away with it', async () => {
    const { browser, action, page } = await atLoginPage();
    await (await post(browser, action, 'demo', 'wrong')).arrayBuffer();
    const signedIn = await post(browser, action, 'demo', 'demo');
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).not.toBe(new URL(page).pathname);
    const cleared = failedCookie(browser);
    expect(cleared).toMatch(/expires=Thu, 01 Jan 1970/i);
    // The cookie that binds the sign-in to this browser is set as before.
    expect(browser.seenSetCookies.filter((line) => line.startsWith(scheme === 'https' ? `__Host-svc.signin.${new URL(page).pathname.split('/').at(-1)}=` : 'svc.signin='))).toHaveLength(1);
    expect(await followed(browser, signedIn.headers.get('location'))).toContain('id="consent-allow"');
  });

  it('the cookie that carries the failure to the page is bound to this interaction and expires with it, and holds the login name only encrypted', async () => {
    const { browser, action, page } = await atLoginPage();
    await (await post(browser, action, 'sentinel-login-83c2', 'wrong')).arrayBuffer();
    const line = failedCookie(browser) ?? '';
    const interactionExpiry = /expires=([^;]+)/i.exec(browser.seenSetCookies.find((l) => l.startsWith('_interaction=')) ?? '')?.[1];
    if (scheme === 'https') {
      expect(line.startsWith('__Host-svc.login-failed=')).toBe(true);
      expect(line).toMatch(/;\s*path=\/;/i);
      expect(line).toMatch(/;\s*secure/i);
    } else {
      expect(line.startsWith('svc.login-failed=')).toBe(true);
      expect(line).toMatch(new RegExp(`;\\s*path=${new URL(page).pathname};`, 'i'));
    }
    expect(line).toMatch(/;\s*httponly/i);
    expect(line).toMatch(/;\s*samesite=lax/i);
    expect(interactionExpiry).toEqual(expect.any(String));
    expect(/expires=([^;]+)/i.exec(line)?.[1]).toBe(interactionExpiry);
    const value = line.split(';')[0]?.split('=')[1] ?? '';
    for (const spelling of ['sentinel-login-83c2', Buffer.from('sentinel-login-83c2').toString('base64url'), Buffer.from('sentinel-login-83c2').toString('base64')]) expect(value).not.toContain(spelling);
    expect(store.written('Interaction').join('\n')).not.toContain('sentinel-login-83c2');
  });

  it('an unknown account and a wrong password: the same 303, the same cookies, the same page but for the login typed', async () => {
    const pages: string[] = [];
    const answers: unknown[] = [];
    for (const login of ['demo', 'nobody-here-7a']) {
      const { browser, action, page } = await atLoginPage();
      const answer = await post(browser, action, login, 'wrong-pw');
      const location = (answer.headers.get('location') ?? '').replace(/[^/]+$/, 'UID');
      answers.push({ status: answer.status, location, cookies: answer.headers.getSetCookie().map((l) => l.split('=')[0]?.replace(/\.[\w-]+$/, '.UID')) });
      expect(answer.headers.get('location')).not.toContain(login);
      const shown = await reload(browser, page);
      pages.push(shown.html.replaceAll(/interaction\/[^/"]+/g, 'interaction/UID').replaceAll(/nonce-[^'"\s]+|nonce="[^"]+"/g, 'NONCE').replace(`value="${login}"`, 'value="LOGIN"'));
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(pages[1]).toBe(pages[0]);
  });

  it('an empty field: 303 to the page, which says the login or password is not correct; nothing judged', async () => {
    const { browser, action, page } = await atLoginPage();
    const judged = counting.judged();
    const answer = await post(browser, action, 'demo', '');
    expect(answer.status).toBe(303);
    const shown = await reload(browser, page);
    expect(shown.status).toBe(403);
    expect(shown.html).toContain('id="login-error"');
    expect(field(shown.html, 'login').value).toBe('demo');
    expect(counting.judged()).toBe(judged);
  });

  it('a sign-in whose authenticator threw (an LDAP bind refusing a wrong password) is counted and logged once, and answered 303 to the page, which says it went wrong (500) on every reload', async () => {
    const { browser, action, page } = await atLoginPage();
    const judged = counting.judged();
    const from = lines.length;
    const login = `bound-${scheme}`;
    const answer = await post(browser, action, login, 'wrong');
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(new URL(page).pathname);
    for (let i = 0; i < 2; i += 1) {
      const shown = await reload(browser, page);
      expect(shown.status).toBe(500);
      expect(shown.html).toContain('Something went wrong while signing you in. Try again, or start again from the application.');
      expect(shown.html).not.toContain('The login or password is not correct');
      expect(shown.html).not.toContain('invalid credentials');
      expect(field(shown.html, 'login')).toEqual({ value: login, autofocus: false });
    }
    expect(counting.judged()).toBe(judged + 1);
    const failed = lines.slice(from).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'request_failed');
    expect(failed.map((l) => [l.code, l.cause_name])).toEqual([['SVC_AUTHENTICATOR_FAILED', 'InvalidCredentialsError']]);
    expect(lines.slice(from).join('\n')).not.toContain(login);
  });

  it('attack: a replayed post is a real attempt, judged and counted each time: the sixth finds the name locked, and the page says so (429, Retry-After) on every reload, which judge nothing', async () => {
    const { browser, action, page } = await atLoginPage();
    const judged = counting.judged();
    const from = lines.length;
    const login = `replayed-${scheme}`;
    for (let i = 1; i <= 5; i += 1) {
      expect((await post(browser, action, login, 'wrong')).status).toBe(303);
      expect(counting.judged()).toBe(judged + i);
      expect((await reload(browser, page)).status).toBe(403);
    }
    expect((await post(browser, action, login, 'wrong')).status).toBe(303);
    expect(counting.judged()).toBe(judged + 5);
    const throttled = lines.slice(from).filter((l) => l.includes('"e":"login_throttled"')).length;
    expect(throttled).toBe(1);
    let lastWait = Infinity;
    for (let i = 0; i < 3; i += 1) {
      const shown = await reload(browser, page);
      expect(shown.status).toBe(429);
      expect(Number(shown.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(shown.retryAfter)).toBeLessThanOrEqual(lastWait);
      lastWait = Number(shown.retryAfter);
      expect(shown.html).toMatch(/Too many failed sign-ins\. Try again in \d+ seconds \(after \d\d:\d\d:\d\d UTC\)\./);
      expect(field(shown.html, 'login')).toEqual({ value: login, autofocus: false });
    }
    expect(counting.judged()).toBe(judged + 5);
    // A reload is no sign-in attempt: it logs no refusal.
    expect(lines.slice(from).filter((l) => l.includes('"e":"login_throttled"')).length).toBe(throttled);
    // Once the cool-down is over, the page shows her login kept and no message; her next post is judged again.
    const later = clockAhead((lastWait + 1) * 1000);
    try {
      const shown = await reload(browser, page);
      expect(shown.status).toBe(200);
      expect(shown.html).not.toContain('id="login-error"');
      expect(field(shown.html, 'login')).toEqual({ value: login, autofocus: false });
      expect(field(shown.html, 'password').autofocus).toBe(true);
      expect((await post(browser, action, login, 'wrong')).status).toBe(303);
      expect(counting.judged()).toBe(judged + 6);
    } finally {
      later.restore();
    }
  });

  it('attack: a post replayed after the sign-in finished is refused and judges nothing', async () => {
    const { browser, action } = await atLoginPage();
    const signedIn = await post(browser, action, 'demo', 'demo');
    expect(signedIn.status).toBe(303);
    expect(await followed(browser, signedIn.headers.get('location'))).toContain('id="consent-allow"');
    const judged = counting.judged();
    const replayed = await post(browser, action, 'demo', 'wrong');
    expect(replayed.status).toBe(400);
    expect(counting.judged()).toBe(judged);
  });

  it("attack: another interaction's page asked with her cookies is refused (400) and names nobody", async () => {
    const her = await atLoginPage();
    await (await post(her.browser, her.action, 'sentinel-her-login-19', 'wrong')).arrayBuffer();
    const other = await atLoginPage();
    const asked = await reload(her.browser, other.page);
    expect(asked.status).toBe(400);
    expect(asked.html).not.toContain('sentinel-her-login-19');
    expect(asked.html).not.toContain('id="login-form"');
  });

  it("attack: the failure cookie of one interaction moved to another's page shows no message and no login name there", async () => {
    const his = await atLoginPage();
    await (await post(his.browser, his.action, 'sentinel-his-login-42', 'wrong')).arrayBuffer();
    const [pair = ''] = (failedCookie(his.browser) ?? '').split(';');
    const value = pair.slice(pair.indexOf('=') + 1);
    const hers = await atLoginPage();
    const name = scheme === 'https' ? '__Host-svc.login-failed' : 'svc.login-failed';
    hers.browser.setCookie(name, value);
    const shown = await reload(hers.browser, hers.page);
    expect(shown.status).toBe(200);
    expect(shown.html).not.toContain('sentinel-his-login-42');
    expect(shown.html).not.toContain('id="login-error"');
    expect(field(shown.html, 'login')).toEqual({ value: '', autofocus: true });
    // A value changed by one character, or one made by nobody holding the keys, is ignored alike.
    for (const forged of [`${value.slice(0, 20)}${value[20] === 'A' ? 'B' : 'A'}${value.slice(21)}`, 'A'.repeat(value.length), '']) {
      hers.browser.setCookie(name, forged);
      const again = await reload(hers.browser, hers.page);
      expect(again.status).toBe(200);
      expect(again.html).not.toContain('id="login-error"');
    }
  });

  it('honest: retrying from the application while her name is locked, one sign-in in each of 40 interactions within the hour, leaves her browser one failure cookie, not one each (over https each would go with every request to the host)', async () => {
    const browser = new FormBrowser();
    const login = `retrying-${scheme}`;
    const live = new Map<string, boolean>();
    let last = { page: '', action: '' };
    for (let i = 0; i < 40; i += 1) {
      last = await atLoginPage(browser);
      const from = browser.seenSetCookies.length;
      expect((await post(browser, last.action, login, 'wrong')).status).toBe(303);
      for (const line of browser.seenSetCookies.slice(from).filter((l) => /^(__Host-)?svc\.login-failed/.test(l))) {
        live.set(line.slice(0, line.indexOf('=')), !/=;|expires=Thu, 01 Jan 1970/i.test(line));
      }
    }
    expect([...live.values()].filter(Boolean)).toHaveLength(1);
    // The page of the last post still says what it found: the name is refused for now.
    const shown = await reload(browser, last.page);
    expect(shown.status).toBe(429);
    expect(field(shown.html, 'login').value).toBe(login);
  });

  it.each([
    ['341 characters of 3 UTF-8 bytes each, kept', '€'.repeat(341), '€'.repeat(341)],
    ['1000 control characters, 6 bytes each in the cookie, not kept', '\u0001'.repeat(1000), ''],
    ['1000 quotes and backslashes, 2 bytes each in the cookie, not kept', '"\\'.repeat(500), ''],
  ])('a long login name (%s): the failure cookie stays within what a browser keeps (4096 bytes), the page says the login or password is not correct', async (_what, login, kept) => {
    const { browser, action, page } = await atLoginPage();
    expect((await post(browser, action, login, 'wrong')).status).toBe(303);
    expect((failedCookie(browser) ?? '').split(';')[0]?.length).toBeLessThanOrEqual(4096);
    const shown = await reload(browser, page);
    expect(shown.status).toBe(403);
    expect(shown.html).toContain('The login or password is not correct.');
    expect(field(shown.html, 'login').value).toBe(kept);
  });

  it('after the interaction expired, its page says the sign-in ended and shows no login name', async () => {
    const { browser, action, page } = await atLoginPage();
    await (await post(browser, action, 'sentinel-expired-login-5', 'wrong')).arrayBuffer();
    const later = clockAhead(3601 * 1000);
    try {
      const shown = await reload(browser, page);
      expect(shown.status).toBe(400);
      expect(shown.html).not.toContain('sentinel-expired-login-5');
      expect(shown.html).not.toContain('id="login-form"');
    } finally {
      later.restore();
    }
  });

  it('honest: 64 people behind one address (its budget 100) sign in at once, each after a wrong password and two reloads: all 64 get in, as the reloads counted nothing', async () => {
    const address = freshAddress();
    const judged = counting.judged();
    const people = await Promise.all(Array.from({ length: 64 }, () => atLoginPage()));
    const signedIn = await Promise.all(
      people.map(async ({ browser, action, page }, n) => {
        const login = `person-${n}`;
        expect((await post(browser, action, login, 'typo', address)).status).toBe(303);
        for (let i = 0; i < 2; i += 1) expect((await reload(browser, page)).status).toBe(403);
        const answer = await post(browser, action, login, `pw-${login}`, address);
        return answer.status === 303 && answer.headers.get('location') !== new URL(page).pathname;
      }),
    );
    expect(signedIn.filter(Boolean)).toHaveLength(64);
    expect(counting.judged()).toBe(judged + 128);
  });
});

import { describe, expect, it } from '@jest/globals';

import { createMemoryStore } from '../../lib/index.js';
import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { DEMO_REGISTRATION_TOKEN_TTL } from '../../lib/demo/relying-party.js';
import { DEMO_PENDING_FLOWS } from '../../lib/demo/router.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { FormBrowser } from '../helpers/flow.js';
import { freePort } from '../helpers/processes.js';

describe('the demo page\'s unfinished flows: at most DEMO_PENDING_FLOWS, up to five per browser', () => {
  const running = appPerSuite({ claimModules: createDemoClaimModules() });

  /** Starts one demo flow in a fresh browser; resolves the browser and its state. */
  const start = async (): Promise<{ browser: FormBrowser; state: string }> => {
    const browser = new FormBrowser();
    const origin = running.baseUrl;
    const posted = await browser.post(`${origin}/oidcdemo/login`, { scope: 'email' }, origin);
    expect(posted.status).toBe(303);
    return { browser, state: (browser.cookie('svc_demo_state') ?? '').split('.')[0] ?? '' };
  };
  /** The callback of `flow` as the provider would send it back with an error (no sign-in needed). */
  const callback = async (flow: { browser: FormBrowser; state: string }): Promise<number> => {
    const response = await flow.browser.request(`${running.baseUrl}/oidcdemo/callback?state=${flow.state}&error=access_denied`);
    await response.text();
    return response.status;
  };

  it('an unauthenticated flood forgets the oldest flow, and a flow started last still completes', async () => {
    const first = await start();
    const second = await start();
    expect(await callback(second)).toBe(200);
    for (let i = 0; i < DEMO_PENDING_FLOWS; i += 50) await Promise.all(Array.from({ length: 50 }, () => start()));
    const last = await start();
    expect(await callback(first)).toBe(400);
    expect(await callback(last)).toBe(200);
  });

  const startDemo = async (browser: FormBrowser, scope: string): Promise<string> => {
    const posted = await browser.post(`${running.baseUrl}/oidcdemo/login`, { scope }, running.baseUrl);
    expect(posted.status).toBe(303);
    return posted.headers.get('location') as string;
  };
  /** Follows a demo authorization URL through login and consent; the page the demo callback answered, and its URL. */
  const complete = async (browser: FormBrowser, url: string): Promise<{ status?: number; page: string; url?: string }> => {
    let step = await browser.follow(url, running.baseUrl);
    for (let pages = 0; pages < 3 && browser.lastPage.match(/id="(login-form|consent-allow)"/); pages += 1) {
      step = browser.lastPage.includes('id="login-form"')
        ? await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl)
        : await browser.submit('consent-allow', {}, running.baseUrl);
    }
    return { status: step.response?.status, page: browser.lastPage, url: step.response?.url };
  };

  it('honest: the flow of the first tab completes after a second was started, and then the second', async () => {
    const browser = new FormBrowser();
    const first = await startDemo(browser, 'email');
    const second = await startDemo(browser, 'profile');
    const one = await complete(browser, first);
    expect(one.status).toBe(200);
    expect(one.page).toContain('id="id-token-claims"');
    expect(one.page).toContain('email_verified');
    const two = await complete(browser, second);
    expect(two.status).toBe(200);
    expect(two.page).toContain('family_name');
  });

  it('a code that reached another browser for a flow someone started is never redeemed for its starter: the flow is forgotten', async () => {
    const attacker = new FormBrowser();
    const url = await startDemo(attacker, 'email profile');
    // The attacker has the person open the authorization URL of his flow; she signs in and allows.
    const person = new FormBrowser();
    const landed = await complete(person, url);
    expect([landed.status, landed.page]).toEqual([400, expect.stringContaining('invalid_state')]);
    const callback = new URL(landed.url ?? '');
    expect([callback.pathname, callback.searchParams.has('code')]).toEqual(['/oidcdemo/callback', true]);
    // Her code, had it leaked to him, in the browser that holds the flow's state: not redeemed.
    const replayed = await attacker.request(callback.href);
    const page = await replayed.text();
    expect([replayed.status, page]).toEqual([400, expect.stringContaining('invalid_state')]);
    expect(page).not.toContain('id-token-claims');
  });

  /** A demo authorization URL with its parameters in plain, read from its signed request object when it carries one. */
  const plainParameters = (url: string): URL => {
    const plain = new URL(url);
    const request = plain.searchParams.get('request');
    if (!request) return plain;
    plain.search = '';
    const payload = JSON.parse(Buffer.from(request.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;
    for (const [k, v] of Object.entries(payload)) if (typeof v === 'string') plain.searchParams.set(k, v);
    return plain;
  };
  /** Where the provider sends `browser` in the end for `url` (its Location, fragment kept), after login and consent. */
  const landing = async (browser: FormBrowser, url: string): Promise<string> => {
    const callback = `${running.baseUrl}/oidcdemo/callback`;
    let next: string | undefined = url;
    let init: RequestInit | undefined;
    for (let hops = 0; next && hops < 20; hops += 1) {
      if (next.startsWith(callback)) return next;
      const response = await browser.request(next, init);
      init = undefined;
      const location = response.headers.get('location');
      if (location) {
        next = new URL(location, next).href;
        continue;
      }
      browser.lastPage = await response.text();
      const form = browser.lastPage.includes('id="login-form"') ? 'login-form' : browser.lastPage.includes('id="consent-allow"') ? 'consent-allow' : undefined;
      if (!form) return next;
      const fields: Record<string, string> = form === 'login-form' ? { login: 'demo', password: 'demo' } : {};
      next = browser.formAction(form, running.baseUrl);
      init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: running.baseUrl }, body: new URLSearchParams({ ...browser.hiddenFields(form), ...fields }).toString() };
    }
    return next ?? '';
  };

  it('an authorization URL of a demo flow changed to another response_mode (her code kept out of the query the callback reads) gives its starter no code to redeem', async () => {
    const attacker = new FormBrowser();
    const url = await startDemo(attacker, 'email');
    const plain = plainParameters(url);
    const state = plain.searchParams.get('state') ?? '';
    const crafted = ['fragment', 'form_post'].flatMap((mode) => [`${url}&response_mode=${mode}`, `${plain.href}&response_mode=${mode}`]);
    for (const href of crafted) {
      // The person opens the URL he hands her, signs in and allows.
      const person = new FormBrowser();
      const landed = new URL(await landing(person, href));
      const fromForm = /<input[^>]*name="code"[^>]*value="([^"]*)"/.exec(person.lastPage)?.[1];
      // A code reaches her browser only in the query of the callback, where it ends the flow there.
      const elsewhere = new URLSearchParams(landed.hash.slice(1)).get('code') ?? fromForm ?? null;
      expect({ href, elsewhere }).toEqual({ href, elsewhere: null });
      const code = landed.searchParams.get('code') ?? elsewhere;
      if (code === null) continue;
      if (landed.searchParams.has('code')) await (await person.request(landed.href)).text();
      // Her code, leaked to him, in the browser that holds the flow's state: never redeemed there.
      const replayed = await attacker.request(`${running.baseUrl}/oidcdemo/callback?${new URLSearchParams({ code, state })}`);
      const page = await replayed.text();
      expect({ href, status: replayed.status, claims: page.includes('id="id-token-claims"') }).toEqual({ href, status: 400, claims: false });
    }
  });

  it('honest: an authorization URL of a demo flow followed as given lands in the query of its callback and completes', async () => {
    const browser = new FormBrowser();
    const url = await startDemo(browser, 'email');
    const landed = new URL(await landing(browser, url));
    expect([landed.pathname, landed.searchParams.has('code'), landed.hash]).toEqual(['/oidcdemo/callback', true, '']);
    const page = await browser.request(landed.href);
    expect([page.status, await page.text()]).toEqual([200, expect.stringContaining('id="id-token-claims"')]);
  });

  it('honest: reloading the result page (or coming back to it) says her flow finished already, and where to start another, not that another browser started it', async () => {
    const browser = new FormBrowser();
    const url = await startDemo(browser, 'email');
    const landed = await landing(browser, url);
    const first = await browser.request(landed);
    expect([first.status, await first.text()]).toEqual([200, expect.stringContaining('id="id-token-claims"')]);
    const reloaded = await browser.request(landed);
    const page = await reloaded.text();
    expect([reloaded.status, page]).toEqual([400, expect.stringContaining('invalid_state')]);
    expect(page).toContain('finished already');
    expect(page).toContain('href="/oidcdemo/login"');
    expect(page).not.toContain('id-token-claims');
  });

  it('a callback is still refused in a browser that did not start its flow, and when its state comes back a second time', async () => {
    const browser = new FormBrowser();
    const url = await startDemo(browser, 'email');
    const state = plainParameters(url).searchParams.get('state') as string;
    const stranger = new FormBrowser();
    await startDemo(stranger, 'email');
    const elsewhere = await stranger.request(`${running.baseUrl}/oidcdemo/callback?state=${state}&error=access_denied`);
    expect([elsewhere.status, await elsewhere.text()]).toEqual([400, expect.stringContaining('invalid_state')]);
    const own = await browser.request(`${running.baseUrl}/oidcdemo/callback?state=${state}&error=access_denied`);
    expect(own.status).toBe(200);
    await own.text();
    const again = await browser.request(`${running.baseUrl}/oidcdemo/callback?state=${state}&error=access_denied`);
    expect([again.status, await again.text()]).toEqual([400, expect.stringContaining('invalid_state')]);
  });
});

describe('the demo client\'s registration: what an anonymous POST of the demo form leaves in the store', () => {
  const unreachable: { store?: CountingStore } = {};
  const reachable: { store?: CountingStore } = {};
  // svc.base-url names a port nobody listens on: the demo page cannot reach its own registration endpoint.
  const lost = appPerSuite(async () => {
    unreachable.store = countingStore(createMemoryStore());
    return { claimModules: createDemoClaimModules(), store: unreachable.store, properties: { 'svc.base-url': `http://127.0.0.1:${await freePort()}` } };
  });
  const found = appPerSuite(() => {
    reachable.store = countingStore(createMemoryStore());
    return { claimModules: createDemoClaimModules(), store: reachable.store };
  });
  /** The initial access tokens written to `store`: their ids and lifetimes. */
  const issued = (store: CountingStore): { jti: string; lifetime: number }[] =>
    store.written('InitialAccessToken').map((json) => JSON.parse(json) as { jti: string; iat: number; exp: number }).map(({ jti, iat, exp }) => ({ jti, lifetime: exp - iat }));

  it('a registration that fails destroys the initial access token it issued, however often the form is posted, and says why', async () => {
    const store = unreachable.store as CountingStore;
    const origin = lost.settings.baseUrl;
    for (let i = 0; i < 3; i += 1) {
      const posted = await new FormBrowser().post(`${lost.baseUrl}/oidcdemo/login`, { scope: 'email' }, origin);
      const page = await posted.text();
      expect([posted.status, page]).toEqual([502, expect.stringContaining('registration_failed')]);
      expect(page).toContain('svc.base-url must be reachable from the server itself');
    }
    const tokens = issued(store);
    expect(tokens.map((t) => t.lifetime)).toEqual([DEMO_REGISTRATION_TOKEN_TTL, DEMO_REGISTRATION_TOKEN_TTL, DEMO_REGISTRATION_TOKEN_TTL]);
    for (const { jti } of tokens) expect(await store.adapter('InitialAccessToken').find(jti)).toBeUndefined();
  });

  it('honest: a reachable provider registers the demo client once, with a short-lived token it consumes, and every flow starts', async () => {
    const store = reachable.store as CountingStore;
    for (let i = 0; i < 3; i += 1) {
      const posted = await new FormBrowser().post(`${found.baseUrl}/oidcdemo/login`, { scope: 'email' }, found.baseUrl);
      expect([posted.status, posted.headers.get('location')]).toEqual([303, expect.stringContaining(`${found.issuer}/authorize?client_id=`)]);
    }
    const tokens = issued(store);
    expect(tokens.map((t) => t.lifetime)).toEqual([DEMO_REGISTRATION_TOKEN_TTL]);
    expect(store.writes('Client')).toBe(1);
  });
});

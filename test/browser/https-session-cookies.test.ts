import { request } from 'node:https';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';
import type { Browser, BrowserContext, Cookie, Page } from 'playwright-core';

import Koa from 'koa';
import mount from 'koa-mount';

import { createApp, createSvcConnect, loadSettings, silentLogger, type SvcApp } from '../../lib/index.js';
import { browserCookieName } from '../../lib/interactions/sign-in-binding.js';
import { basicAuthorization } from '../../lib/web/basic-auth.js';
import { pairwiseSubOf, TEST_PAIRWISE_KEY } from '../helpers/app.js';
import { allow } from '../helpers/chromium.js';
import { codeFlowUrl, pkcePair } from '../helpers/flow.js';
import { launchChromiumFor, makeCertificate, startSite, type Site, type TestCertificate } from '../helpers/https-sites.js';
import { clockAhead } from '../helpers/clock.js';
import { testProviderKeys } from '../helpers/provider-keys.js';
import { TEST_STORE_TIMEOUT_MS } from '../helpers/redis.js';

/**
 * svc-connect served over https at `id.svc.test`, a relying party at `app.rp.test` (another site), in Chromium. Someone
 * who answers for another name under `svc.test` (a sibling subdomain he runs, or, on her network, any http answer for
 * such a name) can put cookies with `Domain=svc.test` in her browser: the session cookie of a browser of his must not
 * sign her in as him.
 */
describe('over https, a session counts only in the browser that signed in, whatever cookies others plant (Chromium)', () => {
  let certificate: TestCertificate;
  let browser: Browser;
  let idp: Site;
  let rp: Site;
  let sibling: Site;
  let plainSibling: Site;
  let app: SvcApp;
  let issuer = '';
  let client: ClientMetadata;

  beforeAll(async () => {
    certificate = makeCertificate();
    [idp, rp, sibling, plainSibling] = await Promise.all([startSite('id.svc.test', certificate), startSite('app.rp.test', certificate), startSite('evil.svc.test', certificate), startSite('wifi.svc.test')]);
    client = { client_id: 'rp', client_secret: 'rp-secret-that-is-long-enough-0123456789abc', redirect_uris: [`${rp.origin}/cb`], post_logout_redirect_uris: [`${rp.origin}/bye`] };
    const settings = loadSettings({
      env: {},
      properties: { 'svc.base-url': idp.origin, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS, 'svc.subject.pairwise-key': TEST_PAIRWISE_KEY },
    });
    app = await createApp(settings, { logger: silentLogger, jwks: await testProviderKeys(), clients: [client] });
    issuer = app.svc.paths.issuer;
    const callback = app.callback();
    idp.serve((req, res) => void callback(req, res));
    rp.serve((req, res) => {
      const url = new URL(req.url ?? '/', rp.origin);
      res.setHeader('content-type', 'text/html');
      if (url.pathname !== '/logout') return void res.end(`<p id="rp">${url.pathname}</p>`);
      const fields = [...url.searchParams].map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`).join('');
      res.end(`<form id="f" method="post" action="${issuer}/logout">${fields}</form><script>document.getElementById('f').submit()</script>`);
    });
    browser = await launchChromiumFor(certificate);
  }, 30_000);
  afterAll(async () => {
    await browser?.close();
    await app?.svc.close();
    await Promise.all([idp, rp, sibling, plainSibling].map((site) => site?.close()));
  });

  const onRp = (url: URL): boolean => url.origin === rp.origin;
  const fillLogin = async (page: Page, login: string): Promise<void> => {
    await page.fill('input[name="login"]', login);
    await page.fill('input[name="password"]', login);
    await page.click('#login-form button[type="submit"]');
  };

  /** Opens the relying party's sign-in in `page`: where she lands first, the relying party (with a code or an error) or the login form. */
  const openSignIn = async (page: Page, params: Record<string, string> = {}): Promise<'login form' | URL> => {
    await page.goto(codeFlowUrl(issuer, client, { state: 'st', ...params }));
    await page.waitForURL((url) => onRp(url) || url.pathname.includes('/interaction/'));
    if (onRp(new URL(page.url()))) return new URL(page.url());
    await page.waitForSelector('#login-form');
    return 'login form';
  };

  /** A browser (`context`, or a fresh one) signed in as `login` that approved the relying party, its code at the relying party redeemed. */
  const signedIn = async (login: string, context?: BrowserContext): Promise<{ context: BrowserContext; page: Page; sub: unknown }> => {
    context ??= await browser.newContext();
    const page = await context.newPage();
    const { verifier, challenge } = pkcePair();
    expect(await openSignIn(page, { code_challenge: challenge })).toBe('login form');
    await fillLogin(page, login);
    await allow(page);
    await page.waitForURL(onRp);
    return { context, page, sub: await subOf(new URL(page.url()), verifier) };
  };

  /** The `sub` of the ID token the code at the relying party's `url` is redeemed for (the token endpoint reached by its name, over TLS). */
  const subOf = (url: URL, verifier: string): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const body = new URLSearchParams({ grant_type: 'authorization_code', code: url.searchParams.get('code') ?? '', code_verifier: verifier, redirect_uri: `${rp.origin}/cb` }).toString();
      const headers = { authorization: basicAuthorization('rp', String(client.client_secret), { formEncoded: true }), 'content-type': 'application/x-www-form-urlencoded' };
      const sent = request({ host: '127.0.0.1', port: idp.port, servername: 'id.svc.test', ca: certificate.cert, method: 'POST', path: '/oidc/v1/token', headers }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
        res.on('end', () => {
          const idToken = String((JSON.parse(text) as { id_token?: string }).id_token);
          resolve((JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8')) as { sub?: unknown }).sub);
        });
      });
      sent.on('error', reject);
      sent.end(body);
    });

  /** The cookies a browser holds for the provider's host or its site, at any path. */
  const siteCookies = async (context: BrowserContext): Promise<Cookie[]> => (await context.cookies()).filter((c) => c.domain.endsWith('svc.test'));
  /** The cookies of a browser's session: those not of one interaction or one sign-in. */
  const idpCookies = async (context: BrowserContext): Promise<Cookie[]> => (await siteCookies(context)).filter((c) => !c.name.startsWith('_interaction') && !c.name.startsWith('svc.'));

  /** `site` answers her browser with each of `cookies` as a `Domain=svc.test` cookie at `path` (its own path without one). */
  const plant = async (page: Page, site: Site, cookies: Cookie[], path?: string): Promise<void> => {
    const secure = site.origin.startsWith('https:') ? '; Secure; SameSite=None' : '';
    site.serve((_req, res) => {
      res.setHeader('set-cookie', cookies.map((c) => `${c.name}=${c.value}; Domain=svc.test; Path=${path ?? c.path}; HttpOnly${secure}`));
      res.end('planted');
    });
    await page.goto(`${site.origin}/`);
  };

  it('attack: a sibling subdomain plants the cookies of a browser signed in as him in a fresh browser: opening the relying party, she is asked to sign in, not sent back signed in as him', async () => {
    const attacker = await signedIn('demo-basic');
    const planted = await idpCookies(attacker.context);
    expect(planted.map((c) => c.name).sort()).toEqual(['__Host-svc.browser', '_session', '_session.sig']);
    const victim = await browser.newContext();
    const page = await victim.newPage();
    await plant(page, sibling, planted);
    // Chromium keeps the session cookie and its signature, and refuses the `__Host-` cookie set with a Domain.
    expect((await siteCookies(victim)).map((c) => c.name).sort()).toEqual(['_session', '_session.sig']);
    expect(await openSignIn(page)).toBe('login form');
    await attacker.context.close();
    await victim.close();
  });

  it('attack: an http answer for another name under the site (her network) plants them: she is asked to sign in', async () => {
    const attacker = await signedIn('demo-basic');
    const victim = await browser.newContext();
    const page = await victim.newPage();
    await plant(page, plainSibling, await idpCookies(attacker.context));
    expect((await siteCookies(victim)).map((c) => c.name)).toContain('_session');
    expect(await openSignIn(page)).toBe('login form');
    await attacker.context.close();
    await victim.close();
  });

  it('attack: planted at a longer path, ahead of her own session cookie: she is asked to sign in, never signed in as him', async () => {
    const attacker = await signedIn('demo-basic');
    const victim = await signedIn('demo');
    expect([victim.sub, attacker.sub]).toEqual([pairwiseSubOf(`${rp.origin}/cb`, 'demo-0001'), pairwiseSubOf(`${rp.origin}/cb`, 'demo-0002')]);
    await plant(victim.page, sibling, await idpCookies(attacker.context), '/oidc/v1/authorize');
    expect(await openSignIn(victim.page)).toBe('login form');
    // While his cookie stays ahead of hers at /authorize, no session is found there: her new sign-in holds no grant, and
    // the consent she gives cannot resume (a sibling subdomain can always keep her from signing in; never as him).
    await fillLogin(victim.page, 'demo');
    await allow(victim.page);
    await victim.page.waitForSelector('h1');
    expect([new URL(victim.page.url()).origin, await victim.page.textContent('h1')]).toEqual([idp.origin, 'Sign-in could not continue']);
    await attacker.context.close();
    await victim.context.close();
  });

  it('attack: he read the browser cookie of a computer he shared with her (it outlives every sign-out), set it in his own browser and signed in there, then plants his session cookie in hers: she is asked to sign in, never signed in as him', async () => {
    const shared = await browser.newContext();
    const hers = await signedIn('demo', shared);
    await hers.page.goto(`${issuer}/logout?client_id=rp`);
    await hers.page.click('button[name="logout"]');
    await hers.page.waitForSelector('h1');
    const secret = (await siteCookies(shared)).find((c) => c.name === '__Host-svc.browser');
    expect(secret).toBeDefined();
    const his = await browser.newContext();
    await his.addCookies([secret as Cookie]);
    expect((await signedIn('demo-basic', his)).sub).toBe(pairwiseSubOf(`${rp.origin}/cb`, 'demo-0002'));
    await plant(hers.page, sibling, await idpCookies(his));
    expect(await openSignIn(hers.page)).toBe('login form');
    await his.close();
    await shared.close();
  });

  /** Where a silent sign-in (`prompt=none`) at the relying party ends in `page`: the `sub` of its code, or its error. */
  const silently = async (page: Page): Promise<unknown> => {
    const { verifier, challenge } = pkcePair();
    const landed = await openSignIn(page, { prompt: 'none', code_challenge: challenge });
    if (landed === 'login form') return landed;
    return landed.searchParams.get('error') ?? subOf(landed, verifier);
  };

  /**
   * He signs in as himself on an interaction of his own browser, which he scripts so that it stops before the resume,
   * has a sibling subdomain plant all his browser holds for that resume in hers, and sends her to the resume URL.
   */
  const plantedResume = async (victim: Page): Promise<void> => {
    const his = await browser.newContext({ bypassCSP: true });
    const page = await his.newPage();
    expect(await openSignIn(page)).toBe('login form');
    const uid = new URL(page.url()).pathname.split('/').pop() as string;
    const login = (action: string): Promise<string> => fetch(action, { method: 'POST', body: new URLSearchParams({ login: 'demo-basic', password: 'demo-basic' }), redirect: 'manual' }).then((r) => r.type);
    expect(await page.evaluate(login, `${issuer}/interaction/${uid}/login`)).toBe('opaqueredirect');
    const resume = `/oidc/v1/authorize/${uid}`;
    const planted = (await siteCookies(his)).filter((c) => c.path === resume || c.name.includes(uid));
    expect(planted.length).toBeGreaterThanOrEqual(3);
    await plant(victim, sibling, planted);
    await his.close();
    await victim.goto(`${idp.origin}${resume}`);
    await victim.waitForSelector('h1');
  };

  it('attack: his sign-in, finished in his browser and planted by a sibling subdomain in a fresh browser with all he holds for its resume, does not sign hers in as him when she is sent to the resume', async () => {
    const victim = await browser.newContext();
    const page = await victim.newPage();
    await plantedResume(page);
    expect([new URL(page.url()).origin, await page.textContent('h1')]).toEqual([idp.origin, 'Sign-in could not continue']);
    expect(await silently(page)).toBe('login_required');
    await victim.close();
  });

  it('attack: planted so in a browser signed in as her, it neither signs her out nor signs her in as him', async () => {
    const hers = await signedIn('demo');
    await plantedResume(hers.page);
    expect(await hers.page.textContent('h1')).toBe('Sign-in could not continue');
    expect(await silently(hers.page)).toBe(hers.sub);
    await hers.context.close();
  });

  it('honest: another person signs in in a browser signed in as her (prompt=login): she is signed out on the way, and he reaches consent and a code of his own', async () => {
    const { context, page } = await signedIn('demo');
    const { verifier, challenge } = pkcePair();
    expect(await openSignIn(page, { prompt: 'login', code_challenge: challenge })).toBe('login form');
    await fillLogin(page, 'demo-basic');
    await allow(page);
    await page.waitForURL(onRp);
    expect(await subOf(new URL(page.url()), verifier)).toBe(pairwiseSubOf(`${rp.origin}/cb`, 'demo-0002'));
    expect((await siteCookies(context)).filter((c) => c.name.includes('svc.signin'))).toEqual([]);
    await context.close();
  });

  it('honest: signing in again in a browser already signed in (prompt=login in another tab), she stays signed in in every tab', async () => {
    const { context, page } = await signedIn('demo');
    const before = (await siteCookies(context)).find((c) => c.name === '__Host-svc.browser')?.value;
    const tab = await context.newPage();
    await tab.goto(codeFlowUrl(issuer, client, { state: 'st', prompt: 'login' }));
    await tab.waitForSelector('#login-form');
    await fillLogin(tab, 'demo');
    await tab.waitForURL(onRp);
    const silent = await openSignIn(page, { prompt: 'none' });
    expect({ code: silent === 'login form' ? silent : silent.searchParams.get('code'), renewed: (await siteCookies(context)).find((c) => c.name === '__Host-svc.browser')?.value !== before }).toEqual({ code: expect.any(String), renewed: true });
    await context.close();
  });

  it('honest: she signs in at the relying party, comes back silently signed in, and signs out from its site; every cookie of ours is Secure', async () => {
    const { context, page, sub } = await signedIn('demo');
    expect(sub).toBe(pairwiseSubOf(`${rp.origin}/cb`, 'demo-0001'));
    const silent = await openSignIn(page, { prompt: 'none' });
    expect(silent === 'login form' ? silent : silent.searchParams.get('code')).toEqual(expect.any(String));
    for (const cookie of await siteCookies(context)) expect({ name: cookie.name, secure: cookie.secure }).toEqual({ name: cookie.name, secure: true });
    const cookies = await siteCookies(context);
    expect(cookies.find((c) => c.name === '_session')).toMatchObject({ domain: 'id.svc.test', path: '/oidc/v1', sameSite: 'None', httpOnly: true });
    expect(cookies.find((c) => c.name === '__Host-svc.browser')).toMatchObject({ domain: 'id.svc.test', path: '/', sameSite: 'None', httpOnly: true });

    await page.goto(`${rp.origin}/logout?${new URLSearchParams({ client_id: 'rp', post_logout_redirect_uri: `${rp.origin}/bye`, state: 'rs' })}`);
    await page.waitForSelector('button[name="logout"]');
    await page.click('button[name="logout"]');
    await page.waitForURL(onRp);
    expect(page.url()).toBe(`${rp.origin}/bye?state=rs`);
    const after = await openSignIn(page, { prompt: 'none' });
    expect(after === 'login form' ? after : after.searchParams.get('error')).toBe('login_required');
    await context.close();
  });

  it('honest: two svc-connect apps on one host (/a and /b): a consent at one days later does not cut short her sign-in at the other', async () => {
    const host = await startSite('two.svc.test', certificate);
    const day = 86_400_000;
    const jwks = await testProviderKeys();
    const apps = await Promise.all(['a', 'b'].map((prefix) =>
      createSvcConnect(loadSettings({ env: {}, properties: { 'svc.base-url': `${host.origin}/${prefix}`, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS, 'svc.subject.pairwise-key': TEST_PAIRWISE_KEY } }), {
        logger: silentLogger,
        jwks,
        clients: [{ ...client, client_id: `rp-${prefix}` }, { ...client, client_id: `rp-${prefix}-2` }],
      })));
    const [a, b] = apps as [typeof apps[0], typeof apps[0]];
    const callback = new Koa().use(mount('/a', a.middleware)).use(mount('/b', b.middleware)).callback();
    host.serve((req, res) => void callback(req, res));
    const context = await browser.newContext();
    const page = await context.newPage();
    const signInAt = async (issuerOf: string, clientId: string, login: boolean): Promise<void> => {
      await page.goto(codeFlowUrl(issuerOf, { ...client, client_id: clientId }, { state: 'st' }));
      if (login) {
        await page.waitForSelector('#login-form');
        await fillLogin(page, 'demo');
      }
      await page.waitForSelector('#consent-allow');
      await allow(page);
      await page.waitForURL(onRp);
      expect(new URL(page.url()).searchParams.get('code')).toEqual(expect.any(String));
    };
    /** Her browser `days` from now: the cookies that expired by then are gone, and the provider's clock is there. */
    const daysLater = async (days: number): Promise<{ restore(): void }> => {
      const then = Date.now() / 1000 + days * 86_400;
      for (const c of await context.cookies()) if (c.expires > 0 && c.expires <= then) await context.clearCookies({ name: c.name, domain: c.domain, path: c.path });
      return clockAhead(days * day);
    };
    await signInAt(a.paths.issuer, 'rp-a', true);
    let clock = await daysLater(10);
    try {
      await signInAt(b.paths.issuer, 'rp-b', true);
      clock.restore();
      // Signed in at /a eleven days ago, she consents to another client there: no new sign-in.
      clock = await daysLater(11);
      await signInAt(a.paths.issuer, 'rp-a-2', false);
      clock.restore();
      // Her sign-in at /b (day 10) lasts until day 24: on day 15 she is still signed in there.
      clock = await daysLater(15);
      await page.goto(codeFlowUrl(b.paths.issuer, { ...client, client_id: 'rp-b' }, { state: 'st', prompt: 'none' }));
      await page.waitForURL(onRp);
      const back = new URL(page.url()).searchParams;
      expect({ error: back.get('error'), code: typeof back.get('code') }).toEqual({ error: null, code: 'string' });
    } finally {
      clock.restore();
    }
    await context.close();
    await Promise.all(apps.map((app) => app.close()));
    await host.close();
  });

  it('honest: mounted at /auth in a host app (koa-mount) over https, she signs in and comes back silently; every cookie Secure, the session cookie under /auth, no sign-in cookie left after her sign-in', async () => {
    const host = await startSite('host.svc.test', certificate);
    const mounted = { ...client, client_id: 'rp-mounted' };
    const svc = await createSvcConnect(loadSettings({ env: {}, properties: { 'svc.base-url': `${host.origin}/auth`, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS, 'svc.subject.pairwise-key': TEST_PAIRWISE_KEY } }), {
      logger: silentLogger,
      jwks: await testProviderKeys(),
      clients: [mounted],
    });
    const callback = new Koa({ keys: ['a-host-key-of-its-own-0123456789abcdef'] }).use(mount('/auth', svc.middleware)).callback();
    host.serve((req, res) => void callback(req, res));
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(codeFlowUrl(svc.paths.issuer, mounted, { state: 'st' }));
    await page.waitForSelector('#login-form');
    await fillLogin(page, 'demo');
    await page.waitForSelector('#consent-allow');
    // Set at `/` (`__Host-`) by the login answer, gone once the sign-in resumed: none is left to travel with every request.
    const signInCookies = (await context.cookies()).filter((c) => c.name.includes('svc.signin'));
    await allow(page);
    await page.waitForURL(onRp);
    expect(new URL(page.url()).searchParams.get('code')).toEqual(expect.any(String));
    await page.goto(codeFlowUrl(svc.paths.issuer, mounted, { state: 'st', prompt: 'none' }));
    await page.waitForURL(onRp);
    expect(new URL(page.url()).searchParams.get('code')).toEqual(expect.any(String));
    expect(signInCookies).toEqual([]);
    const cookies = (await context.cookies()).filter((c) => c.domain === 'host.svc.test');
    for (const cookie of cookies) expect({ name: cookie.name, secure: cookie.secure }).toEqual({ name: cookie.name, secure: true });
    expect(cookies.filter((c) => c.name === '_session' || c.name.startsWith('__Host-')).map((c) => [c.name, c.path]).sort()).toEqual([[browserCookieName(svc.paths.issuer), '/'], ['_session', '/auth/oidc/v1']]);
    expect(browserCookieName(svc.paths.issuer)).toMatch(/^__Host-svc\.browser\.[\w-]{16}$/);
    await context.close();
    await svc.close();
    await host.close();
  });

  it('honest: two svc-connect mounted at /a and /b on one https host: signing in at one, she stays signed in at the other', async () => {
    const host = await startSite('two.svc.test', certificate);
    const instances = await Promise.all(
      ['/a', '/b'].map(async (path) => {
        const rpOf = { ...client, client_id: `rp${path.slice(1)}` };
        const properties = { 'svc.base-url': `${host.origin}${path}`, 'svc.redis.operation-timeout-ms': TEST_STORE_TIMEOUT_MS, 'svc.subject.pairwise-key': TEST_PAIRWISE_KEY };
        const svc = await createSvcConnect(loadSettings({ env: {}, properties }), { logger: silentLogger, jwks: await testProviderKeys(), clients: [rpOf] });
        return { path, svc, rp: rpOf };
      }),
    );
    const hostApp = new Koa({ keys: ['a-host-key-of-its-own-0123456789abcdef'] });
    for (const { path, svc } of instances) hostApp.use(mount(path, svc.middleware));
    const callback = hostApp.callback();
    host.serve((req, res) => void callback(req, res));
    const context = await browser.newContext();
    const page = await context.newPage();
    /** Where an authorization request at `instance` lands: a code at the relying party, an error there, or the login form. */
    const authorize = async ({ svc, rp: rpOf }: (typeof instances)[number], params: Record<string, string> = {}): Promise<string> => {
      await page.goto(codeFlowUrl(svc.paths.issuer, rpOf, { state: 'st', ...params }));
      await page.waitForURL((url) => onRp(url) || url.pathname.includes('/interaction/'));
      const url = new URL(page.url());
      return onRp(url) ? (url.searchParams.has('code') ? 'code' : String(url.searchParams.get('error'))) : 'login form';
    };
    for (const instance of instances) {
      expect(await authorize(instance)).toBe('login form');
      await fillLogin(page, 'demo');
      await allow(page);
      await page.waitForURL(onRp);
    }
    const silent: string[][] = [];
    for (const instance of instances) silent.push([instance.path, await authorize(instance, { prompt: 'none' })]);
    expect(silent).toEqual([
      ['/a', 'code'],
      ['/b', 'code'],
    ]);
    await context.close();
    await Promise.all(instances.map(({ svc }) => svc.close()));
    await host.close();
  });
});

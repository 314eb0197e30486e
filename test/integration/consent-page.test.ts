import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { FormBrowser } from '../helpers/flow.js';
import { registerClient, type RegisteredClient, registeredClientUrl } from '../helpers/clients.js';

describe('the consent page says what is asked for, in plain words (C5, issue 5 item 6)', () => {
  let running: RunningApp;
  let rsa: RegisteredClient;
  let plain: RegisteredClient;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
    rsa = await registerClient(running, 'rsa');
    plain = await registerClient(running, 'plain');
  });
  afterAll(async () => running.close());

  const consentHtml = async (client: RegisteredClient, params: Record<string, string>): Promise<string> => {
    const browser = new FormBrowser();
    await browser.follow(registeredClientUrl(running.issuer, client, params), running.baseUrl);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain('id="consent-allow"');
    return browser.lastPage;
  };

  it('lists scope claims and alternatives in words, marks required ones, and says the channels are encrypted', async () => {
    const html = await consentHtml(rsa, {
      scope: 'openid email svc.insurance',
      claims: JSON.stringify({ userinfo: { 'svc.ver.[idcard.l3.nfc,email.l2]': { essential: true }, 'svc.ver.[driverslicense.l2,mobile.l2.api]': null } }),
    });
    expect(html).toContain('<strong><bdi>rsa test client</bdi></strong> asks for:');
    expect(html).toContain('<li>your e-mail address — in the sign-in token</li>');
    expect(html).toContain('<li>your health insurance member number — in the sign-in token</li>');
    expect(html).toContain('<li>one of: your verified ID card (level 3, NFC): name, date of birth, nationality and when it was read; your verified e-mail address (level 2): the address and when it was confirmed <em>(required)</em> — in the profile request</li>');
    // No module provides a driving licence: it is never delivered, so never asked; the one alternative left is named.
    expect(html).toContain('<li>your verified mobile number (level 2, checked with the issuer): the number and when it was confirmed — in the profile request</li>');
    expect(html).not.toContain('driving licence');
    expect(html).toContain('Sign-in token: <strong>encrypted</strong>');
    expect(html).toContain('Profile request (UserInfo): <strong>encrypted</strong>');
    expect(html).not.toContain('svc_alternative_of');
  });

  it('tells the person that a client without encryption receives no personal data', async () => {
    const html = await consentHtml(plain, { scope: 'openid profile' });
    expect(html).toContain('Sign-in token: not encrypted, so <strong>no personal data</strong> is sent this way');
    expect(html).toContain('<li>your full name — not sent</li>');
  });

  it('tells the person when the client recognises her by her account identifier, which other such clients share (subject_type public)', async () => {
    const asked = await registerClient(running, 'rsa', { subject_type: 'public' });
    // Redirect URIs on two hosts and no sector_identifier_uri: public by default (C12 item 12).
    const spread = await registerClient(running, 'rsa', { redirect_uris: ['https://one.example/cb', 'https://two.example/cb'] });
    for (const client of [asked, spread]) expect(await consentHtml(client, { scope: 'openid' })).toContain('id="consent-shared-subject"');
  });

  it('honest: a pairwise client, which alone receives its sub for her, carries no such warning', async () => {
    expect(await consentHtml(rsa, { scope: 'openid email' })).not.toContain('consent-shared-subject');
  });

  it('says a claim named in both members of the claims parameter travels in both', async () => {
    const html = await consentHtml(rsa, { scope: 'openid email', claims: JSON.stringify({ userinfo: { email: null }, id_token: { email: null } }) });
    expect(html).toContain('<li>your e-mail address — in the sign-in token and the profile request</li>');
    expect(html).toContain('<li>whether your e-mail address is confirmed — in the sign-in token</li>');
  });

  it("keeps a client name's bidi overrides inside the name: the page's own words around it read as written", async () => {
    // U+202E (right-to-left override) left open would run on to the end of the line and reverse "asks for:".
    const spoofing = await registerClient(running, 'rsa', { client_name: '\u202eknab ruoY' });
    const browser = new FormBrowser();
    await browser.follow(registeredClientUrl(running.issuer, spoofing, { scope: 'openid email' }), running.baseUrl);
    expect(browser.lastPage).toContain('<p>to continue to <strong><bdi>\u202eknab ruoY</bdi></strong></p>');
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
    expect(browser.lastPage).toContain('<p><strong><bdi>\u202eknab ruoY</bdi></strong> asks for:</p>');
  });

  it('shows a right-to-left client name as registered, isolated the same way', async () => {
    const hebrew = await registerClient(running, 'rsa', { client_name: 'בנק שלי' });
    expect(await consentHtml(hebrew, { scope: 'openid email' })).toContain('<strong><bdi>בנק שלי</bdi></strong> asks for:');
  });

  it('names where her answer goes as her browser will go there: a look-alike host in ASCII, after a name claiming to be someone else, cut short', async () => {
    const lookalike = await registerClient(running, 'rsa', { client_name: `Your Bank ${'.'.repeat(500)}`, redirect_uris: ['https://\u0430pple.example/cb'] });
    const html = await consentHtml(lookalike, { scope: 'openid email' });
    expect(html).toContain('<p id="consent-destination">Your answer is sent to <strong>xn--pple-43d.example</strong>.</p>');
    expect(html).toContain(`<strong><bdi>Your Bank ${'.'.repeat(70)}…</bdi></strong> asks for:`);
  });

  it('honest: names the port of a web client, an application on this device for a loopback redirect, and the app of a native scheme', async () => {
    const ported = await registerClient(running, 'rsa', { redirect_uris: ['https://RP.example:8443/cb'] });
    expect(await consentHtml(ported, { scope: 'openid' })).toContain('Your answer is sent to <strong>rp.example:8443</strong>.');
    const loopback = await registerClient(running, 'rsa', { application_type: 'native', redirect_uris: ['http://127.0.0.1:5173/cb'] });
    expect(await consentHtml(loopback, { scope: 'openid' })).toContain('Your answer is sent to an application on this device.');
    const app = await registerClient(running, 'rsa', { application_type: 'native', redirect_uris: ['com.example.app:/cb'] });
    expect(await consentHtml(app, { scope: 'openid' })).toContain('Your answer is sent to the app that opens <strong>com.example.app:</strong> links on this device.');
  });
});

describe('the consent page says what a claim holds in its module\'s words', () => {
  it('attack: words holding markup are shown as text; honest: a claim whose module says nothing is named alone', async () => {
    const running = await startApp({
      claimModules: [
        { name: 'card', provides: ['svc.ver.idcard.l2'], holds: { 'svc.ver.idcard.l2': 'name & <b>nationality</b>' }, resolve: () => ({ 'svc.ver.idcard.l2': { nationality: 'DE' } }) },
        { name: 'mail', provides: ['email', 'email_verified'], resolve: () => ({ email: 'e@example.com', email_verified: true }) },
      ],
    });
    try {
      const client = await registerClient(running, 'rsa');
      const browser = new FormBrowser();
      await browser.follow(registeredClientUrl(running.issuer, client, { scope: 'openid email', claims: JSON.stringify({ userinfo: { 'svc.ver.idcard.l2': null } }) }), running.baseUrl);
      await browser.submit('login-form', { login: 'demo', password: 'demo' }, running.baseUrl);
      expect(browser.lastPage).toContain('<li>your verified ID card (level 2): name &amp; &lt;b&gt;nationality&lt;/b&gt; — in the profile request</li>');
      expect(browser.lastPage).toContain('<li>your e-mail address — in the sign-in token</li>');
    } finally {
      await running.close();
    }
  });
});

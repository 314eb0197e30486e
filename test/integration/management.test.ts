import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { simpleParser } from 'mailparser';

import { createMemoryStore } from '../../adapters/memory.js';
import { createApp, createMailer, loadSettings, SettingsError, silentLogger, type Logger, type Mailer } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { testProviderKeys } from '../helpers/provider-keys.js';
import { freePort } from '../helpers/processes.js';
import { register } from '../helpers/registration.js';
import { startSmtp, tokenIn, type TestSmtp } from '../helpers/smtp.js';
import { capturingLogger } from '../helpers/logs.js';

const USER = 'ops';
const PASSWORD = 'correct horse battery staple';
const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function invite(
  running: RunningApp,
  email: string | undefined,
  authorization?: string,
  method = 'GET',
  clientIp = '192.0.2.1',
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const url = new URL(`${running.issuer}/management/invite_client`);
  if (email !== undefined) url.searchParams.set('email', email);
  // svc.proxy is on in these apps: the lockout keys on the forwarded client address.
  const headers: Record<string, string> = { 'x-forwarded-for': clientIp };
  if (authorization) headers.authorization = authorization;
  const response = await fetch(url, { method, headers });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

describe('management invitations over SMTP (C7)', () => {
  let smtp: TestSmtp;
  let running: RunningApp;
  const { logger, lines } = capturingLogger();
  // The store's clock: a cool-down ends when a test moves it on, never while a slow machine is still
  // sending the requests it must refuse (600 s: longer than the test timeout).
  let ahead = 0;

  beforeAll(async () => {
    smtp = await startSmtp();
    running = await startApp({
      logger,
      store: createMemoryStore({ now: () => Date.now() + ahead }),
      properties: {
        'svc.mail.smtp-url': smtp.url,
        'svc.mail.from': 'idp@example.test',
        'svc.management.user': USER,
        'svc.management.password': PASSWORD,
        'svc.management.lockout-threshold': 3,
        'svc.management.lockout-seconds': 600,
        'svc.proxy': true,
      },
    });
  });
  afterAll(async () => {
    await running.close();
    await smtp.close();
  });

  it('mails a token that registers exactly once, and never shows it in the response or the logs', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await invite(running, 'partner@example.com', basic(USER, PASSWORD));
    const after = Math.floor(Date.now() / 1000);
    expect(res.status).toBe(202);
    expect(Object.keys(res.body).sort()).toEqual(['expires_at', 'invitation', 'invited', 'mail']);
    expect(res.body.invitation).toMatch(/^inv_[A-Za-z0-9_-]{43}$/);
    expect(res.body.mail).toEqual({ transport: 'smtp', host: new URL(smtp.url).host });
    expect(res.body.invited).toBe('partner@example.com');
    expect(res.body.expires_at).toBeGreaterThanOrEqual(before + 172_800);
    expect(res.body.expires_at).toBeLessThanOrEqual(after + 172_800);

    const mail = await smtp.next();
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.text : '').toBe('partner@example.com');
    expect(mail.from?.text).toBe('idp@example.test');
    const token = tokenIn(mail.text ?? '');
    expect(mail.text).toContain(`${running.issuer}/register`);
    expect(mail.text).toContain(new Date((res.body.expires_at as number) * 1000).toISOString());
    expect(mail.text).toContain(`-H 'Authorization: Bearer ${token}'`);
    expect(mail.html).toContain(token);
    expect(JSON.stringify(res.body)).not.toContain(token);

    expect((await register(running, { redirect_uris: ['https://partner.example/cb'] }, token)).status).toBe(201);
    const again = await register(running, { redirect_uris: ['https://partner.example/cb'] }, token);
    expect([again.status, again.body.error]).toEqual([401, 'invalid_token']);
    expect(lines.join('\n')).not.toContain(token);
    expect(lines.some((l) => l.includes('"e":"invitation_sent"'))).toBe(true);
  });

  it.each<[string, string | undefined]>([
    ['a wrong password', basic(USER, 'wrong')],
    ['a wrong user', basic('root', PASSWORD)],
    ['no header', undefined],
    ['a malformed header', 'Basic ***'],
    ['a Bearer header', 'Bearer abc'],
  ])('answers %s with 401 and the Basic challenge', async (name, header) => {
    const res = await invite(running, 'partner@example.com', header, 'GET', `198.51.100.${name.length}`);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('unauthorized');
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="svc-connect management", charset="UTF-8"');
  });

  it('locks a client out after repeated failures (429 with Retry-After), and lifts it after the cool-down', async () => {
    const ip = '203.0.113.9';
    for (let i = 0; i < 3; i += 1) expect((await invite(running, 'partner@example.com', basic(USER, 'nope'), 'GET', ip)).status).toBe(401);
    const locked = await invite(running, 'partner@example.com', basic(USER, PASSWORD), 'GET', ip);
    expect(locked.status).toBe(429);
    expect(locked.body.error).toBe('too_many_requests');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await invite(running, 'partner@example.com', basic(USER, PASSWORD), 'GET', '203.0.113.10')).status).toBe(202);
    await smtp.next();
    ahead += Number(locked.headers.get('retry-after')) * 1000;
    const after = await invite(running, 'partner@example.com', basic(USER, PASSWORD), 'GET', ip);
    expect(after.status).toBe(202);
    await smtp.next();
  });

  it('attack: a right password from the same address (one office NAT) gives a guesser no fresh budget', async () => {
    const ip = '203.0.113.11';
    const statuses: number[] = [];
    for (let round = 0; round < 3; round += 1) {
      for (let i = 0; i < 2; i += 1) statuses.push((await invite(running, 'partner@example.com', basic(USER, `guess-${round}-${i}`), 'GET', ip)).status);
      const honest = await invite(running, 'partner@example.com', basic(USER, PASSWORD), 'GET', ip);
      if (honest.status === 202) await smtp.next();
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
  });

  it('honest: an operator who mistypes now and then between her sign-ins is served until the threshold', async () => {
    const ip = '203.0.113.12';
    const statuses: number[] = [];
    for (const password of [PASSWORD, 'typo', PASSWORD, PASSWORD, 'typo again', PASSWORD]) {
      const res = await invite(running, 'partner@example.com', basic(USER, password), 'GET', ip);
      statuses.push(res.status);
      if (res.status === 202) await smtp.next();
    }
    expect(statuses).toEqual([202, 401, 202, 202, 401, 202]);
  });

  it.each<[string, string | undefined, string]>([
    ['missing', undefined, 'the email query parameter is required'],
    ['empty', '', 'the email query parameter is required'],
    ['malformed', 'not-an-address', 'the email query parameter is not a valid e-mail address'],
    ['with a display name', 'Partner <partner@example.com>', 'the email query parameter is not a valid e-mail address'],
    ['overlong', `${'a'.repeat(250)}@example.com`, 'the email query parameter is longer than 254 characters'],
    ['header injection', 'a@example.com\r\nBcc: b@example.com', 'the email query parameter is not a valid e-mail address'],
    ['two addresses', 'a@example.com,b@example.com', 'the email query parameter is not a valid e-mail address'],
    ['group', 'g:a@example.com,b@example.com;', 'the email query parameter is not a valid e-mail address'],
    ['leading-dot local part (mailed re-quoted as ".a")', '.a@example.com', 'the email query parameter is not a valid e-mail address'],
    ['double-dot local part', 'a..b@example.com', 'the email query parameter is not a valid e-mail address'],
    ['overlong local part', `${'a'.repeat(65)}@example.com`, 'the email query parameter is not a valid e-mail address'],
    ['look-alike local part', 'pаrtner@example.com', 'the email query parameter is not a valid e-mail address'],
    ['hexadecimal IP address domain (the mailer sent it to a@127.0.0.1)', 'a@0x7f000001', 'the email query parameter is not a valid e-mail address'],
    ['IP address domain in hexadecimal pieces', 'a@0x7f.1', 'the email query parameter is not a valid e-mail address'],
    ['domain the host parser cut at its slash (mailed to evil.example)', 'a@evil.example/partner.example', 'the email query parameter is not a valid e-mail address'],
  ])('refuses a %s email with 400', async (_name, email, description) => {
    const sent = smtp.raw.length;
    const res = await invite(running, email, basic(USER, PASSWORD));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: description });
    expect(smtp.raw.length).toBe(sent);
  });

  it.each<[string, string, string]>([
    ['a +tag', 'partner+tag@example.com', 'partner+tag@example.com'],
    ['an apostrophe', "o'hara@example.com", "o'hara@example.com"],
    ['capitals, the domain answered as it is mailed', 'PARTNER@EXAMPLE.COM', 'PARTNER@example.com'],
    ['an IDN domain, answered and mailed in ASCII', 'partner+tag@bücher.example', 'partner+tag@xn--bcher-kva.example'],
    ['a look-alike letter in the domain, answered for what it is', 'partner@еxample.com', 'partner@xn--xample-2of.com'],
    ['a domain label that starts like a hexadecimal number', 'partner@0xc0ffee.example', 'partner@0xc0ffee.example'],
  ])('invites an address with %s, and the mail goes to the address answered', async (_name, email, invited) => {
    const res = await invite(running, email, basic(USER, PASSWORD));
    expect([res.status, res.body.invited]).toEqual([202, invited]);
    await smtp.next();
    expect(smtp.raw[smtp.raw.length - 1]).toMatch(new RegExp(`^To: ${invited.replace(/[+.]/g, '\\$&')}$`, 'm'));
    expect(smtp.recipients[smtp.recipients.length - 1]).toEqual([invited]);
  });

  it('honest: an operator who sends an invitation again (the first mail was lost) gets a second token; revoking the first leaves the second working', async () => {
    const auth = basic(USER, PASSWORD);
    const first = await invite(running, 'resend@example.com', auth, 'POST', '192.0.2.21');
    const firstToken = tokenIn((await smtp.next()).text ?? '');
    const again = await invite(running, 'resend@example.com', auth, 'POST', '192.0.2.21');
    const secondToken = tokenIn((await smtp.next()).text ?? '');
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.body.invitation).not.toBe(first.body.invitation);
    const revoked = await fetch(`${running.issuer}/management/invitations/${String(first.body.invitation)}`, { method: 'DELETE', headers: { authorization: auth, 'x-forwarded-for': '192.0.2.21' } });
    expect(revoked.status).toBe(200);
    const refused = await register(running, { redirect_uris: ['https://partner.example/cb'] }, firstToken);
    expect([refused.status, refused.body.error]).toEqual([401, 'invalid_token']);
    expect((await register(running, { redirect_uris: ['https://partner.example/cb'] }, secondToken)).status).toBe(201);
  });

  it('serves an operator who sends 20 invitations in a row: 20 mails, 20 tokens, each registering once', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 20; i += 1) {
      const res = await invite(running, `partner-${i}@example.com`, basic(USER, PASSWORD), i % 2 ? 'POST' : 'GET', '192.0.2.20');
      expect(res.status).toBe(202);
      tokens.add(tokenIn((await smtp.next()).text ?? ''));
    }
    expect(tokens.size).toBe(20);
    for (const token of tokens) expect((await register(running, { redirect_uris: ['https://partner.example/cb'] }, token)).status).toBe(201);
  });

  it('answers anything but GET and POST with 405, under every spelling the router accepts', async () => {
    const sent = smtp.raw.length;
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const res = await invite(running, 'partner@example.com', basic(USER, PASSWORD), method);
      expect([res.status, res.body.error]).toEqual([405, 'method_not_allowed']);
      expect(res.headers.get('allow')).toBe('GET, POST');
    }
    const head = await fetch(`${running.issuer}/management/invite_client?email=partner%40example.com`, {
      method: 'HEAD',
      headers: { authorization: basic(USER, PASSWORD), 'x-forwarded-for': '192.0.2.77' },
    });
    expect(head.status).toBe(405);
    expect(smtp.raw.length).toBe(sent);
  });

  const post = async (path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> => {
    const response = await fetch(`${running.baseUrl}${path}`, { method: 'POST', headers: { 'x-forwarded-for': '192.0.2.40', ...headers }, body });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
  };
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

  it('accepts POST with the email in a form body or the query (C7)', async () => {
    const auth = { authorization: basic(USER, PASSWORD) };
    const inForm = await post('/oidc/v1/management/invite_client', { ...auth, ...FORM }, 'email=form%40example.com');
    expect([inForm.status, inForm.body.invited]).toEqual([202, 'form@example.com']);
    expect((await smtp.next()).to).toMatchObject({ text: 'form@example.com' });
    const inQuery = await post('/oidc/v1/management/invite_client?email=query%40example.com', auth);
    expect([inQuery.status, inQuery.body.invited]).toEqual([202, 'query@example.com']);
    await smtp.next();
  });

  it.each<[string, Record<string, string>, string | undefined, number, string]>([
    ['the email twice (query and form)', FORM, 'email=b%40example.com', 400, 'give the email parameter once'],
    ['a JSON body', { 'content-type': 'application/json' }, '{"email":"a@example.com"}', 415, 'send the email parameter in the query or as an application/x-www-form-urlencoded body'],
    ['an oversized form', FORM, `email=a%40example.com&pad=${'x'.repeat(20_000)}`, 413, 'request body larger than 16384 bytes'],
  ])('refuses a POST with %s, mailing nothing', async (_name, headers, body, status, description) => {
    const sent = smtp.raw.length;
    const res = await post('/oidc/v1/management/invite_client?email=a%40example.com', { authorization: basic(USER, PASSWORD), ...headers }, body);
    expect([res.status, res.body]).toEqual([status, { error: 'invalid_request', error_description: description }]);
    expect(smtp.raw.length).toBe(sent);
  });

  it.each<[string, Record<string, string>]>([
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['Sec-Fetch-Site: cross-site with our own Origin', { 'sec-fetch-site': 'cross-site', origin: 'ORIGIN' }],
    ['Origin: https://evil.example', { origin: 'https://evil.example' }],
    ['Origin: null without Sec-Fetch-Site', { origin: 'null' }],
    ['our Origin on another port', { origin: 'ORIGIN:1' }],
    ['Sec-Fetch-Site: same-origin with a foreign Origin', { 'sec-fetch-site': 'same-origin', origin: 'https://evil.example' }],
    ['Sec-Fetch-Site: none with a foreign Origin', { 'sec-fetch-site': 'none', origin: 'https://evil.example' }],
    ['Sec-Fetch-Site: same-origin with Origin: null', { 'sec-fetch-site': 'same-origin', origin: 'null' }],
    ['Sec-Fetch-Site: CROSS-SITE in capitals', { 'sec-fetch-site': 'CROSS-SITE' }],
    ['a foreign Referer without Origin or Sec-Fetch-Site', { referer: 'https://evil.example/page' }],
    ['a Referer that is not a URL, without Origin or Sec-Fetch-Site', { referer: 'not a url' }],
  ])('refuses a cross-site request (%s) with 403 on GET and POST, under every spelling served, mailing nothing', async (_name, site) => {
    const sent = smtp.raw.length;
    const origin = new URL(running.baseUrl).origin;
    const headers = Object.fromEntries(Object.entries(site).map(([k, v]) => [k, v === 'ORIGIN' ? origin : v === 'ORIGIN:1' ? `${origin.replace(/:\d+$/, '')}:1` : v]));
    const auth = { authorization: basic(USER, PASSWORD) };
    for (const path of ['/oidc/v1/management/invite_client', '/oidc/v1/management/INVITE_CLIENT', '/oidc/v1/management/invite_client/']) {
      const viaGet = await fetch(`${running.baseUrl}${path}?email=victim%40example.com`, { headers: { ...auth, ...headers, 'x-forwarded-for': '192.0.2.41' } });
      expect([viaGet.status, ((await viaGet.json()) as Record<string, unknown>).error]).toEqual([403, 'cross_site_request']);
      const viaPost = await post(path, { ...auth, ...FORM, ...headers }, 'email=victim%40example.com');
      expect([viaPost.status, viaPost.body.error]).toEqual([403, 'cross_site_request']);
    }
    // Spellings the management router does not serve are not served at all.
    for (const path of ['/oidc/v1/MANAGEMENT/invite_client', '/oidc/v1//management/invite_client']) {
      const other = await fetch(`${running.baseUrl}${path}?email=victim%40example.com`, { headers: { ...auth, ...headers } });
      expect(other.status).toBe(404);
    }
    expect(smtp.raw.length).toBe(sent);
  });

  it('serves a request with a Referer from its own origin and no other browser header', async () => {
    const res = await post('/oidc/v1/management/invite_client', { authorization: basic(USER, PASSWORD), ...FORM, referer: `${running.baseUrl}/somewhere` }, 'email=own-referer%40example.com');
    expect(res.status).toBe(202);
    await smtp.next();
  });

  it('counts one client once whatever port the trusted proxy appended to its address', async () => {
    const sent = smtp.raw.length;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await invite(running, 'partner@example.com', basic(USER, `wrong-${i}`), 'GET', `evil, 198.51.100.8:4000${i}`)).status);
    for (let i = 0; i < 2; i += 1) statuses.push((await invite(running, 'partner@example.com', basic(USER, `wrong-${i}`), 'GET', `evil, [2001:db8:7:7::${i + 1}]:443`)).status);
    for (let i = 0; i < 3; i += 1) statuses.push((await invite(running, 'partner@example.com', basic(USER, `wrong-${i}`), 'GET', `evil, [2001:db8:7:7::${i + 10}]:${i + 1}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 401, 401, 401, 429, 429]);
    expect(smtp.raw.length).toBe(sent);
  });

  it('serves a request from its own origin', async () => {
    const origin = new URL(running.baseUrl).origin;
    const res = await post('/oidc/v1/management/invite_client', { authorization: basic(USER, PASSWORD), ...FORM, origin, 'sec-fetch-site': 'same-origin' }, 'email=own%40example.com');
    expect(res.status).toBe(202);
    await smtp.next();
  });

  it('locks out the address the trusted proxy saw, whatever the client writes to the left of X-Forwarded-For', async () => {
    const peer = '203.0.113.50';
    const sent = smtp.raw.length;
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await invite(running, 'partner@example.com', basic(USER, `wrong-${i}`), 'GET', `10.1.1.${i}, ${peer}`)).status);
    // The right credentials behind a fresh spoofed left end are refused: the address is locked.
    for (let i = 0; i < 3; i += 1) statuses.push((await invite(running, 'partner@example.com', basic(USER, PASSWORD), 'GET', `198.18.0.${i}, ${peer}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    expect(smtp.raw.length).toBe(sent);
  });

  it('of 20 concurrent wrong passwords from one address, exactly 3 are judged', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_v, i) => invite(running, 'partner@example.com', basic(USER, `guess-${i}`), 'GET', '203.0.113.60')));
    const statuses = answers.map((a) => a.status);
    expect([statuses.filter((s) => s === 401).length, statuses.filter((s) => s === 429).length]).toEqual([3, 17]);
  });

  it('answers 502 when the SMTP server refuses the mail, and the token it carried does not work', async () => {
    smtp.refuseWith = { code: 552, message: 'mailbox full' };
    try {
      const res = await invite(running, 'partner@example.com', basic(USER, PASSWORD));
      expect(res.status).toBe(502);
      expect(res.body.error).toBe('mail_delivery_failed');
    } finally {
      delete smtp.refuseWith;
    }
    const parsed = await simpleParser(smtp.raw[smtp.raw.length - 1] as string);
    const token = tokenIn(parsed.text ?? '');
    const res = await register(running, { redirect_uris: ['https://partner.example/cb'] }, token);
    expect([res.status, res.body.error]).toEqual([401, 'invalid_token']);
  });
});

describe('management invitations when SMTP is unreachable', () => {
  it('answers 502, telling the operator where the cause is and how to test the mail server', async () => {
    const running = await startApp({
      properties: { 'svc.mail.smtp-url': `smtp://127.0.0.1:${await freePort()}`, 'svc.management.password': PASSWORD },
    });
    try {
      const res = await invite(running, 'partner@example.com', basic('admin', PASSWORD));
      expect(res.status).toBe(502);
      expect(res.body).toEqual({
        error: 'mail_delivery_failed',
        error_description:
          'the invitation mail could not be sent; no invitation was issued (the invitation_mail_failed log line names the cause; svc-connect config check --connect tests the mail server)',
      });
    } finally {
      await running.close();
    }
  });
});

describe('SMTP credentials travel only over TLS', () => {
  const user = { name: 'idp-mailer', password: 'smtp-pw-Lm42' };
  const auth = basic('admin', PASSWORD);

  /** Invites through `smtpUrl` and answers with the response and the invitations still pending. */
  async function inviteThrough(smtpUrl: string): Promise<{ status: number; body: Record<string, unknown>; pending: unknown[] }> {
    const running = await startApp({ properties: { 'svc.mail.smtp-url': smtpUrl, 'svc.management.password': PASSWORD } });
    try {
      const res = await invite(running, 'partner@example.com', auth);
      const listing = await fetch(`${running.issuer}/management/invitations`, { headers: { authorization: auth } });
      return { status: res.status, body: res.body, pending: ((await listing.json()) as { invitations: unknown[] }).invitations };
    } finally {
      await running.close();
    }
  }

  it('attack: a server that offers no STARTTLS (as when a man in the middle strips it) gets neither the credentials nor the mail: 502, no invitation left', async () => {
    const smtp = await startSmtp({ user });
    try {
      const res = await inviteThrough(smtp.url.replace('smtp://', `smtp://${user.name}:${user.password}@`));
      expect([res.status, res.body.error, res.pending]).toEqual([502, 'mail_delivery_failed', []]);
      expect([smtp.signIns, smtp.raw]).toEqual([[], []]);
    } finally {
      await smtp.close();
    }
  });

  it('honest: a server that offers STARTTLS gets the sign-in over TLS, and the mail', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-smtp-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-subj', '/CN=127.0.0.1', '-days', '1', '-addext', 'subjectAltName=IP:127.0.0.1'], { cwd: dir, stdio: 'ignore' });
    const cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const smtp = await startSmtp({ user, tls: { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert } });
    try {
      // The test's own certificate authority, trusted through the URL (nodemailer reads tls.* from its query).
      const res = await inviteThrough(`${smtp.url.replace('smtp://', `smtp://${user.name}:${user.password}@`)}?tls.ca=${encodeURIComponent(cert)}`);
      expect([res.status, res.pending]).toEqual([202, [expect.objectContaining({ id: expect.stringMatching(/^inv_/) })]]);
      expect(smtp.signIns).toEqual([{ user: user.name, secure: true }]);
      expect(tokenIn((await smtp.next()).text ?? '')).toMatch(/^\S+$/);
    } finally {
      await smtp.close();
    }
  });

  it('honest: the URL may say requireTLS=false (a relay on the same machine), and the mail goes', async () => {
    const smtp = await startSmtp({ user });
    try {
      const res = await inviteThrough(`${smtp.url.replace('smtp://', `smtp://${user.name}:${user.password}@`)}?requireTLS=false`);
      expect(res.status).toBe(202);
      expect(smtp.signIns).toEqual([{ user: user.name, secure: false }]);
      await smtp.next();
    } finally {
      await smtp.close();
    }
  });
});

describe('a relay on the development machine whose STARTTLS certificate is self-signed (as Postfix on Debian ships)', () => {
  const user = { name: 'idp-mailer', password: 'smtp-pw-Lm42' };
  let smtp: TestSmtp;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-smtp-self-signed-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-subj', '/CN=127.0.0.1', '-days', '1', '-addext', 'subjectAltName=IP:127.0.0.1'], { cwd: dir, stdio: 'ignore' });
    smtp = await startSmtp({ tls: { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') } });
  });
  afterAll(async () => smtp.close());

  /** Invites through `smtpUrl`: the answer, the invitations still pending and the log lines. */
  async function inviteThrough(smtpUrl: string): Promise<{ status: number; body: Record<string, unknown>; pending: unknown[]; lines: string[] }> {
    const { logger, lines } = capturingLogger();
    const running = await startApp({ logger, properties: { 'svc.mail.smtp-url': smtpUrl, 'svc.management.password': PASSWORD } });
    try {
      const res = await invite(running, 'partner@example.com', basic('admin', PASSWORD));
      const listing = await fetch(`${running.issuer}/management/invitations`, { headers: { authorization: basic('admin', PASSWORD) } });
      return { status: res.status, body: res.body, pending: ((await listing.json()) as { invitations: unknown[] }).invitations, lines };
    } finally {
      await running.close();
    }
  }

  it('refuses to hand it the mail: 502, no invitation left, and the log line says why (self-signed certificate)', async () => {
    const sent = smtp.raw.length;
    const res = await inviteThrough(smtp.url);
    expect([res.status, res.body.error, res.pending]).toEqual([502, 'mail_delivery_failed', []]);
    const failed = res.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.e === 'invitation_mail_failed');
    expect(failed).toMatchObject({ user: 'admin', cause_code: 'ESOCKET', cause: expect.stringContaining('self-signed certificate') });
    expect(res.lines.join('\n')).not.toContain('partner@');
    expect(smtp.raw.length).toBe(sent);
  });

  it('honest: without credentials, ?ignoreTLS=true (as the guide says for such a relay) sends the mail', async () => {
    const res = await inviteThrough(`${smtp.url}?ignoreTLS=true`);
    expect([res.status, res.pending]).toEqual([202, [expect.objectContaining({ id: expect.stringMatching(/^inv_/) })]]);
    expect(tokenIn((await smtp.next()).text ?? '')).toMatch(/^\S+$/);
  });

  it('attack: ?ignoreTLS=true copied beside credentials does not send them in plain text, even to a server that would take them: 502, no sign-in', async () => {
    const plain = await startSmtp({ user });
    try {
      const res = await inviteThrough(`${plain.url.replace('smtp://', `smtp://${user.name}:${user.password}@`)}?ignoreTLS=true`);
      expect([res.status, res.body.error, res.pending]).toEqual([502, 'mail_delivery_failed', []]);
      expect([plain.signIns, plain.raw]).toEqual([[], []]);
    } finally {
      await plain.close();
    }
  });
});

describe('management invitations into the outbox', () => {
  it('writes a parseable .eml holding the token, and logs no token', async () => {
    const outbox = mkdtempSync(join(tmpdir(), 'svc-outbox-'));
    const lines: string[] = [];
    const logger: Logger = { info: (e, f) => lines.push(JSON.stringify({ e, ...f })), warn: () => undefined, error: () => undefined };
    const running = await startApp({ logger, properties: { 'svc.mail.outbox-dir': outbox, 'svc.management.password': PASSWORD } });
    try {
      const res = await invite(running, 'partner@example.com', basic('admin', PASSWORD));
      expect(res.status).toBe(202);
      const files = readdirSync(outbox).filter((f) => f.endsWith('.eml'));
      expect(files).toHaveLength(1);
      const mail = await simpleParser(readFileSync(join(outbox, files[0] as string)));
      const token = tokenIn(mail.text ?? '');
      expect((await register(running, { redirect_uris: ['https://partner.example/cb'] }, token)).status).toBe(201);
      expect(lines.join('\n')).not.toContain(token);
      expect(lines.join('\n')).toContain('"transport":"outbox"');
    } finally {
      await running.close();
    }
  });
});

describe('default management credentials', () => {
  it('are refused in production, naming svc.management.password', async () => {
    const settings = loadSettings({
      env: {
        NODE_ENV: 'production',
        REDIS_URL: 'redis://127.0.0.1:6379',
        SVC_KEYS_FILE: '/nonexistent/keys.json',
        SVC_COOKIES_KEYS: 'x'.repeat(32),
        SVC_SUBJECT_PAIRWISE_KEY: 'p'.repeat(32),
        SMTP_URL: 'smtp://127.0.0.1:25',
      },
    });
    await expect(createApp(settings, { logger: silentLogger })).rejects.toThrow(SettingsError);
    await expect(createApp(settings, { logger: silentLogger })).rejects.toThrow(/svc\.management\.password/);
  });

  it('honest: an embedder passing a mailer of its own starts in production without an SMTP URL (no outbox is in use)', async () => {
    const settings = loadSettings({
      env: { NODE_ENV: 'production', SVC_COOKIES_KEYS: 'x'.repeat(32), SVC_SUBJECT_PAIRWISE_KEY: 'p'.repeat(32), SVC_MANAGEMENT_PASSWORD: 'a-strong-password', SVC_MAIL_FROM: 'idp@example.com' },
    });
    const mailer = { kind: 'smtp' as const, send: async (): Promise<void> => undefined, close: (): void => undefined };
    const authenticator = { authenticate: async (): Promise<undefined> => undefined, exists: async (): Promise<boolean> => false };
    const app = await createApp(settings, { logger: silentLogger, store: createMemoryStore(), jwks: await testProviderKeys(), mailer, authenticator });
    await app.svc.close();
  });

  describe('a mailer passed in code hides no unsafe mail default in production', () => {
    const production = { NODE_ENV: 'production', SVC_COOKIES_KEYS: 'x'.repeat(32), SVC_SUBJECT_PAIRWISE_KEY: 'p'.repeat(32), SVC_MANAGEMENT_PASSWORD: 'a-strong-password' };
    const authenticator = { authenticate: async (): Promise<undefined> => undefined, exists: async (): Promise<boolean> => false };
    const ownMailer = { kind: 'smtp' as const, send: async (): Promise<void> => undefined, close: (): void => undefined };
    const startWith = async (env: Record<string, string>, mailer: Mailer): Promise<unknown> => {
      const settings = loadSettings({ env: { ...production, ...env } });
      const made = await createApp(settings, { logger: silentLogger, store: createMemoryStore(), jwks: await testProviderKeys(), mailer, authenticator }).then(
        (app) => app,
        (err: unknown) => err,
      );
      if (made instanceof Error) return made;
      await (made as Awaited<ReturnType<typeof createApp>>).svc.close();
      return 'started';
    };

    it('attack: the outbox mailer passed in code (an embedder wrapping createMailer(settings.mail) without svc.mail.smtp-url) is refused, naming svc.mail.smtp-url', async () => {
      const outbox = createMailer({ outboxDir: './outbox' });
      const wrapped: Mailer = { ...outbox, send: (message) => outbox.send(message) };
      const refused = await startWith({ SVC_MAIL_FROM: 'idp@example.com' }, wrapped);
      expect(refused).toBeInstanceOf(SettingsError);
      expect(String(refused)).toMatch(/svc\.mail\.smtp-url/);
    });

    it('attack: a mailer of its own with the default sender no-reply@localhost is refused, naming svc.mail.from', async () => {
      const refused = await startWith({}, ownMailer);
      expect(refused).toBeInstanceOf(SettingsError);
      expect(String(refused)).toMatch(/svc\.mail\.from/);
    });

    it('honest: a mailer of its own with a sender of its domain starts', async () => {
      expect(await startWith({ SVC_MAIL_FROM: 'idp@example.com' }, ownMailer)).toBe('started');
    });

    it('honest: a plain-JavaScript embedder passing `mailer: null` (none configured) starts with the mailer of the settings, as without one', async () => {
      // Plain JavaScript may pass null where the type says optional.
      const none = null as unknown as Mailer;
      expect(await startWith({ SVC_MAIL_FROM: 'idp@example.com', SMTP_URL: 'smtp://mail.example.com:587' }, none)).toBe('started');
    });
  });
});

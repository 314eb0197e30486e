import { gzipSync } from 'node:zlib';

import { describe, expect, it } from '@jest/globals';

import { confidentialClient } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { loginAttempts } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';

const client = confidentialClient();
const USER = 'operator';
const PASSWORD = 'login-reset-password-123';
const AUTH = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

describe("the operator's reset of a login name (C8: after 100 failures in a row, until a success or an operator's reset)", () => {
  const { logger, lines } = capturingLogger();
  let address = 0;

  const running = appPerSuite({
    logger,
    clients: [client],
    // No cool-down gets in the way: only the run of failures in a row stops the name.
    properties: { 'svc.proxy': true, 'svc.login.lockout-threshold': 1000, 'svc.login.consecutive-limit': 10, 'svc.management.user': USER, 'svc.management.password': PASSWORD },
  });

  /** One sign-in attempt in a fresh browser from a fresh address; resolves the status. */
  const attempt = async (login: string, password: string): Promise<number> => {
    address += 1;
    const response = await (await loginAttempts(running, client)).attempt(login, password, `198.51.100.${address}`);
    await response.arrayBuffer();
    return response.status;
  };
  const reset = async (query: string, options: { auth?: string | null; method?: string; headers?: Record<string, string>; body?: Buffer } = {}): Promise<{ status: number; body: Record<string, unknown> }> => {
    const headers: Record<string, string> = { ...(options.auth === null ? {} : { authorization: options.auth ?? AUTH }), ...options.headers };
    const response = await fetch(`${running.baseUrl}/oidc/v1/management/logins/reset${query}`, { method: options.method ?? 'POST', headers, body: options.body && new Uint8Array(options.body) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const lockOut = async (login: string): Promise<void> => {
    for (let i = 0; i < 10; i += 1) expect(await attempt(login, `guess-${i}`)).toBe(403);
    expect(await attempt(login, login)).toBe(429);
  };

  it('lets the name try again after the reset; another spelling is another login for the demo accounts, which compare logins as they are', async () => {
    const before = lines.length;
    await lockOut('demo');
    expect(await reset('?login=%20DEMO%20')).toEqual({ status: 200, body: { reset: true } });
    expect(await attempt('demo', 'demo')).toBe(429);
    expect(await reset('?login=demo')).toEqual({ status: 200, body: { reset: true } });
    expect(await attempt('demo', 'demo')).toBe(303);
    const audit = lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.e === 'management_audit' && l.action === 'logins.reset');
    expect(audit).toMatchObject({ outcome: 'done', user: USER });
    expect(lines.join('\n')).not.toMatch(/"demo"|DEMO/);
  });

  it('resets nothing for a refused request: no credentials, a wrong method, no login, two logins, an over-long login', async () => {
    await lockOut('demo-basic');
    expect((await reset('?login=demo-basic', { auth: null })).status).toBe(401);
    expect((await reset('?login=demo-basic', { method: 'GET' })).body).toMatchObject({ error: 'method_not_allowed' });
    expect((await reset('')).body).toEqual({ error: 'invalid_request', error_description: 'the login parameter is required' });
    expect((await reset('?login=demo-basic&login=demo-basic')).body).toEqual({ error: 'invalid_request', error_description: 'give the login parameter once' });
    expect((await reset(`?login=${'x'.repeat(257)}`)).body).toEqual({ error: 'invalid_request', error_description: 'the login parameter is longer than 256 characters' });
    expect(await attempt('demo-basic', 'demo-basic')).toBe(429);
  });

  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

  it('attack: a login that is not UTF-8 (Latin-1 bytes, in the query or the form, raw or percent-encoded) or a body in a content coding is refused, and resets nothing', async () => {
    const before = lines.length;
    await lockOut('jörg');
    const answers = [
      await reset('?login=j%F6rg'),
      await reset('', { headers: FORM, body: Buffer.from('login=j%F6rg') }),
      await reset('', { headers: FORM, body: Buffer.from('login=j\xf6rg', 'latin1') }),
      await reset('', { headers: { ...FORM, 'content-encoding': 'gzip' }, body: gzipSync('login=j%C3%B6rg') }),
      await reset('', { headers: { ...FORM, 'content-encoding': 'br' }, body: Buffer.from('login=j%C3%B6rg') }),
    ];
    expect(answers.map((a) => [a.status, a.body.error])).toEqual([[400, 'invalid_request'], [400, 'invalid_request'], [400, 'invalid_request'], [415, 'invalid_request'], [415, 'invalid_request']]);
    expect(answers[0]?.body.error_description).toBe('the login parameter is not UTF-8 (percent-encode its UTF-8 bytes)');
    expect(await attempt('jörg', 'jörg')).toBe(429);
    const audits = lines.slice(before).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'management_audit');
    expect(audits.map((a) => a.outcome)).toEqual(Array(5).fill('invalid_request'));
  });

  it('honest: a login in UTF-8, percent-encoded in the query or the form, or as raw UTF-8 in the form, is reset', async () => {
    const sends: [string, (login: string) => Promise<{ status: number; body: Record<string, unknown> }>][] = [
      ['jürgen', (login) => reset(`?login=${encodeURIComponent(login)}`)],
      ['jürgen-form', (login) => reset('', { headers: FORM, body: Buffer.from(`login=${encodeURIComponent(login)}`) })],
      ['jürgen-raw', (login) => reset('', { headers: { ...FORM, 'content-encoding': 'identity' }, body: Buffer.from(`login=${login}`) })],
    ];
    for (const [login, send] of sends) {
      await lockOut(login);
      expect(await send(login)).toEqual({ status: 200, body: { reset: true } });
      expect(await attempt(login, 'wrong')).toBe(403);
    }
  });
});

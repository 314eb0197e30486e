import { describe, expect, it } from '@jest/globals';

import { refOf } from '../../adapters/inventory.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { registerClient } from '../helpers/clients.js';
import { capturingLogger } from '../helpers/logs.js';
import { managementCalls } from '../helpers/management-calls.js';
import { register } from '../helpers/registration.js';

const USER = 'operator';
const PASSWORD = 'printed-token-password-123';
const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const AUTH = basic(USER, PASSWORD);
const M = '/oidc/v1/management';
const ROUTE = `${M}/initial-access-tokens`;

describe('an initial access token handed to the operator, unmailed (C7)', () => {
  const { logger, lines } = capturingLogger();
  const PROPERTIES = { 'svc.management.user': USER, 'svc.management.password': PASSWORD, 'svc.proxy': true, 'svc.management.lockout-threshold': 3 };

  const running = appPerSuite({ logger, properties: PROPERTIES });
  const call = managementCalls(running, AUTH);

  /** Every initial access token record in the store (of `app`, default the suite's), spent or not, by reference. */
  const storedTokens = async (app: RunningApp = running): Promise<Set<string>> => {
    const inventory = app.app.svc.store.inventory;
    if (!inventory) throw new Error('the store has no inventory');
    const refs = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await inventory.list('InitialAccessToken', { limit: 500, ...(cursor ? { cursor } : {}) });
      for (const record of page.records) refs.add(record.ref);
      cursor = page.cursor;
    } while (cursor);
    return refs;
  };

  const cli = (args: string[], env: Record<string, string> = {}): Promise<CliRun> => runCli(args, { SVC_BASE_URL: running.baseUrl, SVC_MANAGEMENT_USER: USER, SVC_MANAGEMENT_PASSWORD: PASSWORD, ...env });


  it('answers 201 with the token once; the token registers exactly one client, and no log line holds it', async () => {
    const before = Math.floor(Date.now() / 1000);
    const issued = await call('POST', ROUTE);
    expect(issued.status).toBe(201);
    expect([issued.headers.get('cache-control'), issued.headers.get('pragma')]).toEqual(['no-store', 'no-cache']);
    expect(Object.keys(issued.body).sort()).toEqual(['expires_at', 'initial_access_token']);
    const token = String(issued.body.initial_access_token);
    expect(issued.body.expires_at).toBeGreaterThanOrEqual(before + 172_800);
    expect(issued.body.expires_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 172_800);
    // Listed as a pending invitation, by its id and never its value.
    const listed = await call('GET', `${M}/invitations?limit=500`);
    expect(JSON.stringify(listed.body)).not.toContain(token);
    expect((listed.body.invitations as { id: string }[]).map((i) => i.id)).toContain(`inv_${refOf(token)}`);

    const first = await register(running, { redirect_uris: ['https://own.example/cb'] }, token);
    expect(first.status).toBe(201);
    const second = await register(running, { redirect_uris: ['https://own.example/cb'] }, token);
    expect([second.status, second.body.error]).toEqual([401, 'invalid_token']);

    const event = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.e === 'initial_access_token_issued' && l.invitation === `inv_${refOf(token)}`);
    expect(event).toEqual({ e: 'initial_access_token_issued', request_id: expect.any(String), user: USER, invitation: `inv_${refOf(token)}`, expires_at: issued.body.expires_at });
    expect(lines.join('\n')).not.toContain(token);
  });

  it('svc-connect invite --print prints only the token, which registers exactly one client', async () => {
    const printed = await cli(['invite', '--print']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toMatch(/^[A-Za-z0-9_-]{20,}\n$/);
    const token = printed.stdout.trim();
    expect(printed.stderr).toMatch(/^initial access token issued: it registers one client, until \d{4}-\d\d-\d\dT[\d:.]+Z; it is not shown again\n$/);
    expect(printed.stderr).not.toContain(token);
    const registered = await cli(['register', '--redirect-uri', 'https://own.example/cb'], { SVC_INITIAL_ACCESS_TOKEN: token });
    expect(registered.code).toBe(0);
    expect(JSON.parse(registered.stdout)).toMatchObject({ client_id: expect.any(String), redirect_uris: ['https://own.example/cb'] });
    const again = await cli(['register', '--redirect-uri', 'https://own.example/cb'], { SVC_INITIAL_ACCESS_TOKEN: token });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('registration failed: HTTP 401 invalid_token');
    expect(lines.join('\n')).not.toContain(token);
  });

  it('invite takes --email or --print, not both and not neither (exit 2, nothing stored)', async () => {
    const before = await storedTokens();
    for (const args of [['invite'], ['invite', '--print', '--email', 'a@example.com'], ['invite', '--print', 'extra'], ['invite', '--print=yes']]) {
      expect([args.join(' '), (await cli(args)).code]).toEqual([args.join(' '), 2]);
    }
    expect(await storedTokens()).toEqual(before);
  });

  it('refuses without credentials, with wrong ones or other roles\' credentials, from another site and with another method; nothing is stored', async () => {
    const client = await registerClient(running, 'plain');
    const unspent = await issueInitialAccessToken(running.app.svc.provider);
    const before = await storedTokens();
    const issuedEvents = (): number => lines.filter((l) => l.includes('"e":"initial_access_token_issued"')).length;
    const events = issuedEvents();
    for (const spelling of [ROUTE, ROUTE.toUpperCase().replace('/OIDC/V1/MANAGEMENT', M), `${ROUTE}/`]) {
      const none = await call('POST', spelling, { auth: null });
      expect([spelling, none.status, none.body.error]).toEqual([spelling, 401, 'unauthorized']);
      expect(none.headers.get('www-authenticate')).toBe('Basic realm="svc-connect management", charset="UTF-8"');
      for (const wrong of [
        basic(USER, 'wrong'),
        basic('admin', 'admin'),
        basic(String(client.metadata.client_id), String(client.metadata.client_secret)),
        `Bearer ${String(client.metadata.registration_access_token)}`,
        `Bearer ${unspent.token}`,
      ]) {
        const refused = await call('POST', spelling, { auth: wrong });
        expect([spelling, refused.status, refused.body.error]).toEqual([spelling, 401, 'unauthorized']);
      }
      for (const site of [{ 'sec-fetch-site': 'cross-site' }, { origin: 'https://evil.example' }, { origin: 'null' }, { referer: 'https://evil.example/x' }] as Record<string, string>[]) {
        const refused = await call('POST', spelling, { headers: site });
        expect([spelling, refused.status, refused.body.error]).toEqual([spelling, 403, 'cross_site_request']);
      }
      for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
        const refused = await call(method, spelling);
        expect([spelling, method, refused.status]).toEqual([spelling, method, 405]);
        expect(refused.headers.get('allow')).toBe('POST');
      }
    }
    // Spellings the management router does not serve are not served at all, credentials or not.
    for (const other of [
      `/oidc/v1/MANAGEMENT/initial-access-tokens`,
      `/oidc/v1//management/initial-access-tokens`,
      `${M}//initial-access-tokens`,
      `${M}/%69nitial-access-tokens`,
      `${M}/initial_access_tokens`,
      `${M}/initial-access-token`,
      `${M}/initial-access-tokens/new`,
      `${M}/initial-access-tokens.json`,
      `/oidc/v1/initial-access-tokens`,
    ]) {
      expect([other, (await call('POST', other)).status]).toEqual([other, 404]);
    }
    expect(await storedTokens()).toEqual(before);
    expect(issuedEvents()).toBe(events);
  });

  it('counts failures in the shared management lockout: locked out, the right password gets 429 and no token', async () => {
    const from = '203.0.113.24';
    for (let i = 0; i < 3; i += 1) expect((await call('POST', ROUTE, { auth: basic(USER, `guess-${i}`), from })).status).toBe(401);
    const before = await storedTokens();
    const locked = await call('POST', ROUTE, { from });
    expect([locked.status, locked.body.error]).toEqual([429, 'too_many_requests']);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(locked.body).not.toHaveProperty('initial_access_token');
    expect((await call('GET', `${M}/invite_client?email=a%40example.com`, { from })).status).toBe(429);
    expect(await storedTokens()).toEqual(before);
  });

  it('svc-connect names the user a 401 tried, and says how many seconds a lockout lasts (from Retry-After); no token is printed', async () => {
    // The command line connects without X-Forwarded-For: its failures count for this machine's
    // address, so it locks out an app of its own, not the one the other command-line tests use.
    const own = await startApp({ properties: PROPERTIES });
    try {
      const tries: [string[], Record<string, string>, string][] = [
        [['--user', 'nobody'], {}, 'nobody'],
        [[], { SVC_MANAGEMENT_USER: 'from-env' }, 'from-env'],
        [['--user', 'flag-wins'], { SVC_MANAGEMENT_USER: 'from-env' }, 'flag-wins'],
      ];
      for (const [i, [flags, env, user]] of tries.entries()) {
        const refused = await cli(['invite', '--print', ...flags], { SVC_BASE_URL: own.baseUrl, SVC_MANAGEMENT_PASSWORD: `guess-${i}`, ...env });
        expect([refused.code, refused.stdout]).toEqual([1, '']);
        expect(refused.stderr).toBe(
          `svc-connect invite: initial access token failed: HTTP 401 unauthorized: the management credentials are not valid (tried the management user "${user}", from --user, SVC_MANAGEMENT_USER or the default admin; the password comes from SVC_MANAGEMENT_PASSWORD or --password-file)\n`,
        );
      }
      const before = await storedTokens(own);
      const locked = await cli(['invite', '--print'], { SVC_BASE_URL: own.baseUrl });
      expect([locked.code, locked.stdout]).toEqual([1, '']);
      const seconds = Number(/\(wait (\d+) seconds? before trying again; every failed try counts towards the lockout\)\n$/.exec(locked.stderr)?.[1]);
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(own.settings.management.lockoutSeconds);
      expect(locked.stderr).toContain('HTTP 429 too_many_requests');
      expect(await storedTokens(own)).toEqual(before);
    } finally {
      await own.close();
    }
  });

  it('issues one token per request under concurrency, each registering exactly once', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, () => call('POST', ROUTE)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    const tokens = answers.map((a) => String(a.body.initial_access_token));
    expect(new Set(tokens).size).toBe(8);
    const registrations = await Promise.all(tokens.flatMap((t) => [register(running, { redirect_uris: ['https://own.example/cb'] }, t), register(running, { redirect_uris: ['https://own.example/cb'] }, t)]));
    expect(registrations.filter((r) => r.status === 201)).toHaveLength(8);
    expect(registrations.filter((r) => r.status !== 201).map((r) => [r.status, r.body.error])).toEqual(Array(8).fill([401, 'invalid_token']));
  });
});

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { appPerSuite } from '../helpers/suite-app.js';
import { runCli as cli } from '../helpers/cli.js';

const PASSWORD = 'foreign-answers-password-1';
const env = { SVC_MANAGEMENT_PASSWORD: PASSWORD };

/**
 * What a command does with an answer that is not the provider's: a sign-in page of a proxy in front of it, a web site
 * at a mistyped --url, a listing that never ends. Nothing that is not svc-connect's JSON may pass for a success.
 */
describe('the command line takes only a JSON object from the provider for a success', () => {
  const running = appPerSuite({ properties: { 'svc.management.password': PASSWORD } });
  let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const heard: string[] = [];
  const foreign = createServer((req, res) => {
    heard.push(`${req.method ?? ''} ${req.url ?? ''}`);
    req.resume();
    answer(req, res);
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(foreign.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => foreign.close(() => resolve())));

  it('attack: a sign-in page answered 200 by a proxy in front is no success: disable, revoke and invite exit 1 naming the answer, and claim nothing done', async () => {
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Sign in to Example SSO</body></html>');
    const runs = {
      'clients disable': await cli(['clients', 'disable', 'compromised-client', '--url', url], env),
      'clients delete': await cli(['clients', 'delete', 'compromised-client', '--url', url], env),
      'subjects revoke': await cli(['subjects', 'revoke', 'her-sub', '--url', url], env),
      'invitations revoke': await cli(['invitations', 'revoke', `inv_${'a'.repeat(43)}`, '--url', url], env),
      'logins reset': await cli(['logins', 'reset', 'her-login', '--url', url], env),
      'invite --email': await cli(['invite', '--email', 'rp@example.com', '--url', url], env),
      'clients list': await cli(['clients', 'list', '--url', url], env),
      register: await cli(['register', '--redirect-uri', 'https://rp.example/cb', '--url', url], { SVC_INITIAL_ACCESS_TOKEN: 'an-initial-access-token' }),
    };
    for (const [command, run] of Object.entries(runs)) {
      expect({ command, code: run.code, stdout: run.stdout }).toEqual({ command, code: 1, stdout: '' });
      expect({ command, stderr: run.stderr }).toEqual({ command, stderr: expect.stringContaining('HTTP 200 unexpected_response: HTTP 200 with a body that is not a JSON object') });
      expect({ command, stderr: run.stderr }).toEqual({ command, stderr: expect.stringContaining('is --url the base URL of the provider?') });
      expect(run.stderr).not.toMatch(/is disabled|is revoked|revoked \S+ session|mail for/);
    }
  });

  it('attack: JSON that is not an object (null, a list, a string) or an empty body answered 200 is no success either', async () => {
    for (const body of ['null', '[{"client_id":"x"}]', '"done"', '']) {
      answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      for (const args of [['clients', 'disable', 'compromised-client'], ['clients', 'list']]) {
        const run = await cli([...args, '--url', url], env);
        expect({ body, args, code: run.code, stdout: run.stdout }).toEqual({ body, args, code: 1, stdout: '' });
        expect(run.stderr).toContain(`HTTP 200 unexpected_response: HTTP 200 with ${body ? 'a body that is not a JSON object' : 'no body'}`);
      }
    }
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"clients":"abc"}');
    const letters = await cli(['clients', 'list', '--url', url], env);
    expect([letters.code, letters.stdout, letters.stderr]).toEqual([1, '', expect.stringContaining("clients listing failed: the answer's clients is not a list")]);
  });

  it('attack: a time beyond any date (1e400 reads as Infinity) is shown as "-": the listing is still printed, an issued token is no failure', async () => {
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"clients":[{"client_id":"far","client_id_issued_at":1e400},{"client_id":"near","client_id_issued_at":1767225600}]}');
    const listed = await cli(['clients', 'list', '--url', url], env);
    expect([listed.code, listed.stdout.split('\n').slice(1, 3).map((row) => row.split(/ +/).slice(0, 3))]).toEqual([0, [['far', 'enabled', '-'], ['near', 'enabled', '2026-01-01T00:00:00Z']]]);
    answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"initial_access_token":"a-token","expires_at":1e20}');
    const printed = await cli(['invite', '--print', '--url', url], env);
    expect([printed.code, printed.stdout, printed.stderr]).toEqual([0, 'a-token\n', 'initial access token issued: it registers one client; it is not shown again\n']);
  });

  it('attack: a listing whose next_cursor comes back again stops at the repeat (exit 1) instead of asking for ever', async () => {
    heard.length = 0;
    // A server that, left to it, would answer the same page 50 times before it ends the listing.
    answer = (_req, res) => {
      const again = heard.length < 50;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ clients: [{ client_id: 'looping' }], ...(again ? { next_cursor: 'same' } : {}) }));
    };
    const run = await cli(['clients', 'list', '--all', '--url', url], env);
    expect([run.code, run.stdout]).toEqual([1, '']);
    expect(run.stderr).toContain('clients listing failed: the answer gave the cursor same a second time');
    expect(heard).toEqual(['GET /oidc/v1/management/clients?limit=500', 'GET /oidc/v1/management/clients?limit=500&cursor=same']);
  });

  /** A server that names a new next page, holding `entry`, until it has answered `end` pages (then the last one). */
  const endless = (end: number, entry: string): void => {
    heard.length = 0;
    answer = (_req, res) => {
      const next = heard.length < end ? { next_cursor: `after-${heard.length}` } : {};
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ clients: [{ client_id: 'paged', client_name: entry }], ...next }));
    };
  };

  it('attack: a listing that names a new next page every time stops after 1000 pages (exit 1) instead of paging for ever', async () => {
    endless(1500, 'x');
    const run = await cli(['clients', 'list', '--all', '--json', '--url', url], env);
    expect([run.code, run.stdout]).toEqual([1, '']);
    expect(run.stderr).toContain('clients listing failed: --all stops after 1000 pages; list them page by page with --cursor');
    expect(heard).toHaveLength(1000);
  });

  it('attack: the pages of one --all listing come to 64 MiB at most (exit 1), not 64 MiB a page held for ever', async () => {
    endless(100, 'x'.repeat(2 ** 20));
    const run = await cli(['clients', 'list', '--all', '--json', '--url', url], env);
    expect([run.code, run.stdout]).toEqual([1, '']);
    expect(run.stderr).toContain(`svc-connect clients: the pages of ${url} come to more than 64 MiB; list them page by page with --cursor`);
    expect(heard).toHaveLength(64);
  });

  it('honest: a listing of exactly 1000 pages, and one of 60 pages of 1 MiB, are read whole; --limit is asked as given', async () => {
    endless(1000, 'x');
    const many = await cli(['clients', 'list', '--all', '--json', '--limit', '7', '--url', url], env);
    expect([many.code, (JSON.parse(many.stdout) as { clients: unknown[] }).clients.length, heard.length, heard[999]]).toEqual([0, 1000, 1000, 'GET /oidc/v1/management/clients?limit=7&cursor=after-999']);
    endless(60, 'x'.repeat(2 ** 20));
    const large = await cli(['clients', 'list', '--all', '--json', '--url', url], env);
    expect([large.code, (JSON.parse(large.stdout) as { clients: unknown[] }).clients.length]).toEqual([0, 60]);
  });

  it('attack: an answer larger than 64 MiB is cut off and refused (exit 1), not held whole in memory', async () => {
    const MiB = 2 ** 20;
    const item = `{"client_id":"${'x'.repeat(MiB - 20)}"}`;
    answer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"clients":[');
      res.on('error', () => undefined);
      for (let i = 0; i < 65; i += 1) res.write(`${i ? ',' : ''}${item}`);
      res.end(']}');
    };
    const run = await cli(['clients', 'list', '--json', '--url', url], env);
    expect([run.code, run.stdout]).toEqual([1, '']);
    expect(run.stderr).toContain(`svc-connect clients: the answer of ${url} is larger than 64 MiB; is --url the base URL of the provider?`);
  });

  it('honest: the provider itself lists, pages, disables and registers as before', async () => {
    const base = running.baseUrl;
    const invited = await cli(['invite', '--print', '--url', base], env);
    expect(invited.code).toBe(0);
    const registered = await cli(['register', '--redirect-uri', 'https://rp.example/cb', '--url', base], { SVC_INITIAL_ACCESS_TOKEN: invited.stdout.trim() });
    expect(registered.code).toBe(0);
    const clientId = (JSON.parse(registered.stdout) as { client_id: string }).client_id;
    const second = await cli(['invite', '--print', '--url', base], env);
    await cli(['register', '--redirect-uri', 'https://rp.example/cb', '--url', base], { SVC_INITIAL_ACCESS_TOKEN: second.stdout.trim() });
    // One client a page: --all follows each new cursor to the end.
    const listed = await cli(['clients', 'list', '--all', '--limit', '1', '--json', '--url', base], env);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { clients: unknown[] }).clients).toHaveLength(2);
    const disabled = await cli(['clients', 'disable', clientId, '--url', base], env);
    expect([disabled.code, JSON.parse(disabled.stdout)]).toEqual([0, { client_id: clientId, disabled: true, changed: true }]);
    expect(disabled.stderr).toContain(`client ${clientId} is disabled`);
  });

  it('honest: an error answer that is not JSON (a proxy 502 page) still names its status', async () => {
    answer = (_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
    const run = await cli(['clients', 'list', '--url', url], env);
    expect([run.code, run.stderr]).toEqual([1, expect.stringContaining('clients listing failed: HTTP 502 unexpected_response: HTTP 502 with a body that is not a JSON object')]);
  });
});

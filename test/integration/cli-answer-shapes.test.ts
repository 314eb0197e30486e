import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { appPerSuite } from '../helpers/suite-app.js';
import { runCli as cli } from '../helpers/cli.js';

const PASSWORD = 'answer-shapes-password-1';
const env = { SVC_MANAGEMENT_PASSWORD: PASSWORD };
const INVITATION = `inv_${'a'.repeat(43)}`;

/** Each command, and the member of its answer it cannot do without. */
const COMMANDS: [string[], string, string][] = [
  [['clients', 'list'], 'clients listing', 'clients'],
  [['clients', 'show', 'some-client'], 'show', 'client'],
  [['clients', 'disable', 'some-client'], 'disable', 'disabled'],
  [['clients', 'enable', 'some-client'], 'enable', 'disabled'],
  [['clients', 'delete', 'some-client'], 'delete', 'deleted'],
  [['clients', 'revoke-grants', 'some-client'], 'revoke-grants', 'revoked_grants'],
  [['invitations', 'list'], 'invitations listing', 'invitations'],
  [['invitations', 'revoke', INVITATION], 'revoke', 'revoked'],
  [['subjects', 'revoke', 'her-sub'], 'revoke', 'revoked_sessions'],
  [['logins', 'reset', 'her-login'], 'reset', 'reset'],
  [['invite', '--email', 'rp@example.com'], 'invitation', 'invitation'],
  [['invite', '--print'], 'initial access token', 'initial_access_token'],
  [['register', '--redirect-uri', 'https://rp.example/cb'], 'registration', 'client_id'],
];

/**
 * A JSON object answered 200 is not yet an answer of svc-connect: a proxy answering `200 {}`, a broken or hostile
 * server. Each command checks the members it prints or reports on, and fails (1) naming the first one missing or of
 * the wrong kind, with nothing on stdout and nothing reported done.
 */
describe('the command line checks the shape of each answer it reports on', () => {
  let body = '{}';
  const foreign = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(foreign.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => foreign.close(() => resolve())));
  const run = (args: string[]) => cli([...args, '--url', url], { ...env, SVC_INITIAL_ACCESS_TOKEN: 'an-initial-access-token' });

  it('attack: 200 {} is no success for any command: exit 1 naming the missing member, nothing printed, nothing reported done', async () => {
    body = '{}';
    for (const [args, what, member] of COMMANDS) {
      const done = await run(args);
      expect({ args, code: done.code, stdout: done.stdout }).toEqual({ args, code: 1, stdout: '' });
      expect({ args, stderr: done.stderr }).toEqual({ args, stderr: expect.stringContaining(`${what} failed: the answer holds no ${member} (not an answer of svc-connect: is --url the base URL of the provider?)`) });
      expect(done.stderr).not.toMatch(/is disabled|is enabled|is deleted|is revoked|revoked \S+ session|mail for|token issued/);
    }
  });

  it.each([
    [['clients', 'disable', 'some-client'], '{"client_id":"some-client","disabled":false,"changed":false}', "disable failed: the answer's disabled is not true"],
    [['clients', 'enable', 'some-client'], '{"client_id":"some-client","disabled":true,"changed":true}', "enable failed: the answer's disabled is not false"],
    [['clients', 'delete', 'some-client'], '{"client_id":"some-client","deleted":"yes","revoked_grants":0,"revoked_tokens":0}', "delete failed: the answer's deleted is not true"],
    [['clients', 'revoke-grants', 'some-client'], '{"client_id":"some-client","revoked_grants":"all","revoked_tokens":0}', "revoke-grants failed: the answer's revoked_grants is not a number"],
    [['clients', 'show', 'some-client'], '{"client":"some-client","disabled":false,"static":false}', "show failed: the answer's client is not an object"],
    [['subjects', 'revoke', 'her-sub'], '{"revoked_sessions":1,"revoked_grants":null,"revoked_tokens":0}', "revoke failed: the answer's revoked_grants is not a number"],
    [['invitations', 'revoke', INVITATION], '{"id":5,"revoked":true}', "revoke failed: the answer's id is not a string"],
    [['register', '--redirect-uri', 'https://rp.example/cb'], '{"client_id":"c","registration_client_uri":"https://id.example/oidc/v1/reg/c"}', 'registration failed: the answer holds no registration_access_token'],
    [['invite', '--print'], '{"initial_access_token":["a-token"]}', "initial access token failed: the answer's initial_access_token is not a string"],
    [['clients', 'list'], '{"clients":[1]}', 'clients listing failed: clients[0] is not an object'],
    [['clients', 'list'], '{"clients":[{"client_id":"a"},{"client_name":"no id"}]}', 'clients listing failed: clients[1] holds no client_id'],
    [['clients', 'list'], '{"clients":[],"static_clients":{"client_id":"s"}}', "clients listing failed: the answer's static_clients is not a list"],
    [['clients', 'list'], '{"clients":[],"static_clients":[{}]}', 'clients listing failed: static_clients[0] holds no client_id'],
    [['clients', 'list', '--all'], '{"clients":[],"next_cursor":5}', "clients listing failed: the answer's next_cursor is not a string"],
    [['invitations', 'list'], '{"invitations":[{"issued_at":1}]}', 'invitations listing failed: invitations[0] holds no id'],
  ])('attack: %j answered %s fails (1): %s', async (args, answer, message) => {
    body = answer;
    const done = await run(args);
    expect([done.code, done.stdout]).toEqual([1, '']);
    expect(done.stderr).toContain(message);
  });
});

describe('honest: every command reads the answers of the provider itself', () => {
  const outbox = join(mkdtempSync(join(tmpdir(), 'svc-shapes-')), 'outbox');
  const running = appPerSuite({ properties: { 'svc.management.password': PASSWORD, 'svc.mail.outbox-dir': outbox } });

  it('invite, register, list, show, disable, enable, revoke, delete, reset: each exits 0 and reports what it did', async () => {
    const base = { ...env, SVC_BASE_URL: running.baseUrl };
    const printed = await cli(['invite', '--print'], base);
    expect([printed.code, printed.stderr]).toEqual([0, expect.stringContaining('initial access token issued')]);
    const registered = await cli(['register', '--redirect-uri', 'https://rp.example/cb'], { ...base, SVC_INITIAL_ACCESS_TOKEN: printed.stdout.trim() });
    expect(registered.code).toBe(0);
    const clientId = (JSON.parse(registered.stdout) as { client_id: string }).client_id;
    const mailed = await cli(['invite', '--email', 'rp@example.com'], base);
    expect([mailed.code, mailed.stderr]).toEqual([0, expect.stringContaining(`mail for rp@example.com written to ${outbox}`)]);
    const invitation = (JSON.parse(mailed.stdout) as { invitation: string }).invitation;
    const runs = [
      ['clients', 'list', '--all'],
      ['clients', 'list', '--json'],
      ['clients', 'show', clientId],
      ['clients', 'disable', clientId],
      ['clients', 'enable', clientId],
      ['clients', 'revoke-grants', clientId],
      ['invitations', 'list', '--all'],
      ['invitations', 'revoke', invitation],
      ['subjects', 'revoke', 'nobody-signed-in'],
      ['logins', 'reset', 'someone@example.com'],
      ['clients', 'delete', clientId],
    ];
    for (const args of runs) {
      const done = await cli(args, base);
      expect({ args, code: done.code, stderr: done.stderr }).toEqual({ args, code: 0, stderr: expect.not.stringContaining('failed') });
    }
  });
});

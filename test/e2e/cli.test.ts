import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken, loadSettings } from '../../lib/index.js';
import { validateProviderKeys } from '../../lib/provider/keys.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { runCli as cli } from '../helpers/cli.js';
import { freePort } from '../helpers/processes.js';

describe('the svc-connect command line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  const running = appPerSuite({ properties: { 'svc.mail.outbox-dir': join(dir, 'outbox'), 'svc.management.password': 'cli-password' } });

  it('prints an overview with --help (0), and refuses an unknown command (2)', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const c of ['serve', 'config', 'keys', 'client-keys', 'invite', 'register', 'clients', 'invitations', 'subjects']) expect(help.stdout).toContain(`  ${c}`);
    const unknown = await cli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command frobnicate');
  });

  it("refuses commands named like an object's own members (constructor, toString, __proto__) as unknown (2)", async () => {
    for (const name of ['constructor', 'toString', '__proto__']) {
      expect(await cli(['clients', name, 'some-client'])).toEqual(expect.objectContaining({ code: 2, stderr: expect.stringContaining(`unknown clients command ${name}`) }));
    }
  });

  it.each(['serve', 'config', 'keys', 'client-keys', 'invite', 'register', 'clients', 'invitations', 'subjects'])('prints usage for %s --help', async (command) => {
    const result = await cli([command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Usage: svc-connect ${command}`);
  });

  it('keys generate --out writes a private JWKS with RSA and P-256 keys for signing and for request-object decryption, mode 0600', async () => {
    const file = join(dir, 'keys.json');
    const result = await cli(['keys', 'generate', '--out', file]);
    expect(result.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const jwks = validateProviderKeys(JSON.parse(readFileSync(file, 'utf8')), file);
    expect(jwks.keys.map((k) => `${k.use}:${k.kty}${k.crv ? `:${k.crv}` : ''}`).sort()).toEqual(['enc:EC:P-256', 'enc:RSA', 'sig:EC:P-256', 'sig:RSA']);
    expect(new Set(jwks.keys.map((k) => k.kid)).size).toBe(4);
    expect((await cli(['keys', 'rotate'])).code).toBe(2);
    expect((await cli(['keys', 'generate', '--bogus'])).code).toBe(2);
  });

  it('attack: a private key file written over a world-readable file or a planted symbolic link ends up mode 0600, and the link target stays as it was', async () => {
    const folder = mkdtempSync(join(dir, 'shared-'));
    const readable = join(folder, 'keys.json');
    writeFileSync(readable, 'old\n');
    chmodSync(readable, 0o644);
    const target = join(folder, 'attacker-readable.json');
    writeFileSync(target, 'planted\n');
    chmodSync(target, 0o644);
    const link = join(folder, 'rp-private.json');
    symlinkSync(target, link);
    expect((await cli(['keys', 'generate', '--out', readable])).code).toBe(0);
    expect((await cli(['client-keys', '--private-out', link])).code).toBe(0);
    for (const file of [readable, link]) {
      expect([file, lstatSync(file).isFile(), lstatSync(file).mode & 0o777]).toEqual([file, true, 0o600]);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(expect.any(Object));
    }
    expect(readFileSync(target, 'utf8')).toBe('planted\n');
    expect(readdirSync(folder).sort()).toEqual(['attacker-readable.json', 'keys.json', 'rp-private.json']);
  });

  it('honest: keys generate --out over its own earlier file replaces it, mode 0600, leaving nothing beside it', async () => {
    const folder = mkdtempSync(join(dir, 'own-'));
    const file = join(folder, 'keys.json');
    expect((await cli(['keys', 'generate', '--out', file])).code).toBe(0);
    const first = readFileSync(file, 'utf8');
    const again = await cli(['keys', 'generate', '--out', file]);
    expect(again).toEqual({ code: 0, stdout: `wrote ${file} (mode 0600); set svc.keys.file=${file}\n`, stderr: '' });
    expect(readFileSync(file, 'utf8')).not.toBe(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(folder)).toEqual(['keys.json']);
  });

  it('client-keys makes a key pair and a registration body; bad --alg → 2', async () => {
    const result = await cli(['client-keys', '--alg', 'ECDH-ES+A256KW', '--redirect-uri', 'https://rp.example/cb']);
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout) as { registration: Record<string, unknown>; private_jwk: Record<string, unknown> };
    expect(out.registration).toMatchObject({ redirect_uris: ['https://rp.example/cb'], id_token_encrypted_response_alg: 'ECDH-ES+A256KW' });
    expect((out.registration.jwks as { keys: Record<string, unknown>[] }).keys[0]).not.toHaveProperty('d');
    expect(out.private_jwk).toHaveProperty('d');
    const bad = await cli(['client-keys', '--alg', 'RSA1_5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--alg: RSA1_5 is not one of');
  });

  it('register registers a client-keys body with an initial access token, and fails clearly on a bad token', async () => {
    const keys = await cli(['client-keys', '--redirect-uri', 'https://rp.example/cb', '--private-out', join(dir, 'rp-private.json')]);
    writeFileSync(join(dir, 'body.json'), keys.stdout);
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const ok = await cli(['register', '--url', running.baseUrl, '--body', join(dir, 'body.json')], { SVC_INITIAL_ACCESS_TOKEN: token });
    expect(ok.code).toBe(0);
    const client = JSON.parse(ok.stdout) as Record<string, unknown>;
    expect(client.client_id).toEqual(expect.any(String));
    expect(client.registration_client_uri).toBe(`${running.issuer}/register/${client.client_id as string}`);
    const reused = await cli(['register', '--url', running.baseUrl, '--redirect-uri', 'https://rp.example/cb'], { SVC_INITIAL_ACCESS_TOKEN: token });
    expect(reused.code).toBe(1);
    expect(reused.stderr).toContain('registration failed: HTTP 401 invalid_token');
    expect((await cli(['register', '--url', running.baseUrl, '--redirect-uri', 'https://rp.example/cb'])).code).toBe(2);
  });

  it('invite calls the management endpoint; wrong password → 1; unreachable server → 1; no --email → 2', async () => {
    const ok = await cli(['invite', '--url', running.baseUrl, '--email', 'rp@example.com'], { SVC_MANAGEMENT_PASSWORD: 'cli-password' });
    expect(ok.code).toBe(0);
    const answer = JSON.parse(ok.stdout) as { invited: string; mail: { transport: string; file: string } };
    expect(answer).toMatchObject({ invited: 'rp@example.com', mail: { transport: 'outbox' } });
    // Where the mail went, for the person at the terminal: the .eml file holding the token.
    expect(ok.stderr).toContain(`mail for rp@example.com written to ${answer.mail.file} on the server`);
    expect(readFileSync(answer.mail.file, 'utf8')).toContain('Initial access token');
    const wrong = await cli(['invite', '--url', running.baseUrl, '--email', 'rp@example.com'], { SVC_MANAGEMENT_PASSWORD: 'nope' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('invitation failed: HTTP 401 unauthorized');
    const down = await cli(['invite', '--url', `http://127.0.0.1:${await freePort()}`, '--email', 'rp@example.com'], { SVC_MANAGEMENT_PASSWORD: 'x' });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('cannot reach http://127.0.0.1:');
    expect((await cli(['invite', '--url', running.baseUrl], { SVC_MANAGEMENT_PASSWORD: 'x' })).code).toBe(2);
  });

  it('clients list/show/disable/enable/revoke-grants/delete over the management API, never printing a secret', async () => {
    const env = { SVC_MANAGEMENT_PASSWORD: 'cli-password', SVC_BASE_URL: running.baseUrl };
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const registered = await fetch(`${running.issuer}/register`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://rp.example/cb'], client_name: 'CLI listed app' }),
    });
    const client = (await registered.json()) as { client_id: string; client_secret: string; registration_access_token: string };

    const listed = await cli(['clients', 'list', '--all'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^CLIENT_ID\s+STATE\s+ISSUED\s+NAME$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${client.client_id}\\s+enabled\\s+\\S+\\s+CLI listed app$`, 'm'));

    const shown = await cli(['clients', 'show', client.client_id], env);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ disabled: false, client: { client_id: client.client_id, client_name: 'CLI listed app' } });
    for (const output of [listed.stdout, shown.stdout]) {
      expect(output).not.toContain(client.client_secret);
      expect(output).not.toContain(client.registration_access_token);
    }

    const disabled = await cli(['clients', 'disable', client.client_id, '--url', running.baseUrl], { SVC_MANAGEMENT_PASSWORD: 'cli-password' });
    expect([disabled.code, JSON.parse(disabled.stdout)]).toEqual([0, { client_id: client.client_id, disabled: true, changed: true }]);
    expect(disabled.stderr).toContain(`client ${client.client_id} is disabled`);
    expect((await cli(['clients', 'list', '--json'], env)).stdout).toContain('"disabled": true');
    expect((await cli(['clients', 'enable', client.client_id], env)).code).toBe(0);
    const revoked = await cli(['clients', 'revoke-grants', client.client_id], env);
    expect(JSON.parse(revoked.stdout)).toMatchObject({ client_id: client.client_id, revoked_grants: 0 });
    const passwordFile = join(dir, 'management-password');
    writeFileSync(passwordFile, 'cli-password\n', { mode: 0o600 });
    expect((await cli(['clients', 'delete', client.client_id, '--password-file', passwordFile], { SVC_BASE_URL: running.baseUrl })).code).toBe(0);
    const gone = await cli(['clients', 'show', client.client_id], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('show failed: HTTP 404 not_found: no client with this id');
  });

  it('honest: the management password as the server reads it (surrounding spaces and blank lines are not part of it) lets the command in, from the same variable or a file', async () => {
    const spaced = ' cli-password\t';
    expect(loadSettings({ env: { SVC_MANAGEMENT_PASSWORD: spaced } }).management.password).toBe('cli-password');
    const passwordFile = join(dir, 'spaced-password');
    writeFileSync(passwordFile, 'cli-password \r\n\n', { mode: 0o600 });
    const runs = [await cli(['clients', 'list'], { SVC_BASE_URL: running.baseUrl, SVC_MANAGEMENT_PASSWORD: spaced }), await cli(['clients', 'list', '--password-file', passwordFile], { SVC_BASE_URL: running.baseUrl })];
    expect(runs.map((run) => [run.code, run.stderr])).toEqual([[0, ''], [0, '']]);
    // Another password stays another password, spaces or not.
    expect((await cli(['clients', 'list'], { SVC_BASE_URL: running.baseUrl, SVC_MANAGEMENT_PASSWORD: ' cli-passwor ' })).code).toBe(1);
  });

  it('invitations list/revoke, subjects revoke and logins reset over the management API', async () => {
    const env = { SVC_MANAGEMENT_PASSWORD: 'cli-password', SVC_BASE_URL: running.baseUrl };
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const listed = await cli(['invitations', 'list', '--all', '--json'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(token);
    const ids = (JSON.parse(listed.stdout) as { invitations: { id: string }[] }).invitations.map((i) => i.id);
    const id = `inv_${createHash('sha256').update(token).digest('base64url')}`;
    expect(ids).toContain(id);
    expect((await cli(['invitations', 'list'], env)).stdout).toMatch(new RegExp(`^${id}\\s+\\S+Z\\s+\\S+Z$`, 'm'));
    const revoked = await cli(['invitations', 'revoke', id], env);
    expect([revoked.code, JSON.parse(revoked.stdout)]).toEqual([0, { id, revoked: true }]);
    const again = await cli(['invitations', 'revoke', id], env);
    expect([again.code, again.stderr]).toEqual([1, expect.stringContaining('revoke failed: HTTP 404 not_found')]);
    const subject = await cli(['subjects', 'revoke', 'nobody-signed-in'], env);
    expect([subject.code, JSON.parse(subject.stdout)]).toEqual([0, expect.objectContaining({ revoked_sessions: 0, revoked_grants: 0 })]);
    const unknownClient = await cli(['subjects', 'revoke', 'some-pairwise-sub', '--client', 'no-such-client'], env);
    expect([unknownClient.code, unknownClient.stderr]).toEqual([1, expect.stringContaining('revoke failed: HTTP 404 not_found')]);
    const login = await cli(['logins', 'reset', 'someone@example.com'], env);
    expect([login.code, JSON.parse(login.stdout)]).toEqual([0, { reset: true }]);
  });

  it('toolbox usage errors exit 2; a wrong password exits 1', async () => {
    for (const args of [['clients'], ['clients', 'frobnicate'], ['clients', 'show'], ['clients', 'list', 'extra'], ['invitations', 'revoke'], ['subjects', 'revoke'], ['subjects', 'revoke', 'a', 'b'], ['subjects', 'revoke', 'a', '--client'], ['subjects', 'revoke', 'a', '--client', ''], ['clients', 'list', '--bogus'], ['logins'], ['logins', 'reset'], ['logins', 'reset', 'a', 'b'], ['logins', 'unlock', 'a']]) {
      expect([args.join(' '), (await cli(args, { SVC_MANAGEMENT_PASSWORD: 'x', SVC_BASE_URL: running.baseUrl })).code]).toEqual([args.join(' '), 2]);
    }
    // A URL of another scheme names no provider: a wrong command line, said before anything is sent.
    for (const url of ['ftp://id.example.com', 'file:///etc/passwd', 'redis://127.0.0.1:6379']) {
      const other = await cli(['clients', 'list', '--url', url], { SVC_MANAGEMENT_PASSWORD: 'x' });
      expect([url, other.code, other.stderr]).toEqual([url, 2, expect.stringContaining(`--url: ${url} is not an https URL`)]);
    }
    const noPassword = await cli(['clients', 'list'], { SVC_BASE_URL: running.baseUrl });
    expect([noPassword.code, noPassword.stderr]).toEqual([2, expect.stringContaining('set SVC_MANAGEMENT_PASSWORD')]);
    const wrong = await cli(['clients', 'list'], { SVC_MANAGEMENT_PASSWORD: 'wrong', SVC_BASE_URL: running.baseUrl });
    expect([wrong.code, wrong.stderr]).toEqual([1, expect.stringContaining('clients listing failed: HTTP 401 unauthorized')]);
  });

  it('config check prints every effective value with its source, secrets redacted, and the warnings; exit 0', async () => {
    const properties = join(dir, 'check.properties');
    writeFileSync(properties, 'svc.port = 4000\nsvc.mail.from = idp@example.com\n');
    const cookieKey = 'c'.repeat(40);
    const result = await cli(['config', 'check', '--file', properties], {
      SVC_MANAGEMENT_PASSWORD: 'a-secret-password',
      SVC_COOKIES_KEYS: cookieKey,
      SVC_UNRELATED_THING: 'x',
      SVC_REDIS_URL: 'redis://:redis-pw-in-url@127.0.0.1:1/0',
      SVC_REDIS_CLUSTER_NODES: 'redis://svc:cluster-pw-in-url@127.0.0.1:1,redis://svc:cluster-pw-in-url@[::1]:2',
      SMTP_URL: 'smtp://mailer:smtp-pw-in-url@127.0.0.1:1?password=smtp-pw-in-query',
    });
    expect(result.code).toBe(0);
    const row = (name: string): string[] => (new RegExp(`^${name.replace(/\./g, '\\.')}\\s+(\\S+)\\s+(.+)$`, 'm').exec(result.stdout) ?? []).slice(1);
    expect(row('svc.port')).toEqual(['4000', `file ${properties}`]);
    expect(row('svc.mail.from')).toEqual(['idp@example.com', `file ${properties}`]);
    expect(row('svc.base-url')).toEqual(['http://localhost:4000', 'default (from svc.port)']);
    expect(row('svc.management.password')).toEqual(['<redacted>', 'env SVC_MANAGEMENT_PASSWORD']);
    expect(row('svc.cookies.keys')).toEqual(['<redacted>', 'env SVC_COOKIES_KEYS']);
    expect(row('svc.redis.url')).toEqual(['redis://:***@127.0.0.1:1/0', 'env SVC_REDIS_URL']);
    expect(row('svc.redis.cluster-nodes')).toEqual(['redis://svc:***@127.0.0.1:1,redis://svc:***@[::1]:2', 'env SVC_REDIS_CLUSTER_NODES']);
    const overTls = await cli(['config', 'check', '--file', properties], { SVC_REDIS_CLUSTER_NODES: 'rediss://svc:cluster-pw-in-url@127.0.0.1:1,rediss://[::1]:2' });
    expect(overTls.stdout + overTls.stderr).toContain('item #2 is reached otherwise than item #1');
    expect(overTls.stdout + overTls.stderr).not.toContain('cluster-pw-in-url');
    const tlsRow = await cli(['config', 'check', '--file', properties], { SVC_REDIS_CLUSTER_NODES: 'rediss://127.0.0.1:1,rediss://[::1]:2' });
    expect(/^svc\.redis\.cluster-nodes\s+(\S+)/m.exec(tlsRow.stdout)?.[1]).toBe('rediss://127.0.0.1:1,rediss://[::1]:2');
    expect(row('svc.mail.smtp-url')).toEqual(['<redacted>', 'env SMTP_URL']);
    expect(result.stdout + result.stderr).not.toMatch(/redis-pw-in-url|cluster-pw-in-url|smtp-pw-in-url|smtp-pw-in-query/);
    expect(row('svc.access-token.ttl')).toEqual(['3600', 'default']);
    expect(result.stdout).not.toContain('a-secret-password');
    expect(result.stdout).not.toContain(cookieKey);
    expect(result.stdout).toContain('ignored: environment variable SVC_UNRELATED_THING');
    expect(result.stdout).toMatch(/configuration OK: the server would start with \d+ warnings\n$/);
  });
});

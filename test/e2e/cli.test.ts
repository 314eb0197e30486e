import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken, validateSigningKeys } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { freePort, waitFor } from '../helpers/processes.js';

const root = new URL('../..', import.meta.url).pathname;

/** Runs `svc-connect …` (lib/cli.ts under tsx) and collects its output and exit code. */
function cli(args: string[], env: Record<string, string> = {}, untilOutput?: string): Promise<{ code: number | null; stdout: string; stderr: string; kill: () => void }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const kill = (): void => {
      child.kill('SIGTERM');
    };
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (untilOutput && stdout.includes(untilOutput)) resolve({ code: null, stdout, stderr, kill });
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr, kill }));
  });
}

describe('the svc-connect command line (issue 8)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ properties: { 'svc.mail.outbox-dir': join(dir, 'outbox'), 'svc.management.password': 'cli-password' } });
  });
  afterAll(async () => running.close());

  it('prints an overview with --help (0), and refuses an unknown command (2)', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    for (const c of ['serve', 'keys', 'client-keys', 'invite', 'register']) expect(help.stdout).toContain(`  ${c}`);
    const unknown = await cli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command frobnicate');
  });

  it.each(['serve', 'keys', 'client-keys', 'invite', 'register'])('prints usage for %s --help', async (command) => {
    const result = await cli([command, '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Usage: svc-connect ${command}`);
  });

  it('keys generate --out writes a private JWKS with RSA and P-256 keys, mode 0600', async () => {
    const file = join(dir, 'keys.json');
    const result = await cli(['keys', 'generate', '--out', file]);
    expect(result.code).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const jwks = validateSigningKeys(JSON.parse(readFileSync(file, 'utf8')), file);
    expect(jwks.keys.map((k) => `${k.kty}${k.crv ? `:${k.crv}` : ''}`).sort()).toEqual(['EC:P-256', 'RSA']);
    expect((await cli(['keys', 'rotate'])).code).toBe(2);
    expect((await cli(['keys', 'generate', '--bogus'])).code).toBe(2);
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
    expect(JSON.parse(ok.stdout)).toMatchObject({ invited: 'rp@example.com' });
    const wrong = await cli(['invite', '--url', running.baseUrl, '--email', 'rp@example.com'], { SVC_MANAGEMENT_PASSWORD: 'nope' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('invitation failed: HTTP 401 unauthorized');
    const down = await cli(['invite', '--url', `http://127.0.0.1:${await freePort()}`, '--email', 'rp@example.com'], { SVC_MANAGEMENT_PASSWORD: 'x' });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('cannot reach http://127.0.0.1:');
    expect((await cli(['invite', '--url', running.baseUrl], { SVC_MANAGEMENT_PASSWORD: 'x' })).code).toBe(2);
  });

  it('serve runs the example server', async () => {
    const port = await freePort();
    const started = await cli(['serve'], { PORT: String(port) }, 'listening on');
    try {
      const doc = (await (await waitFor(`http://localhost:${port}/oidc/v1/.well-known/openid-configuration`, 5000)).json()) as { issuer: string };
      expect(doc.issuer).toBe(`http://localhost:${port}/oidc/v1`);
    } finally {
      started.kill();
    }
  });
});

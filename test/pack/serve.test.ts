import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';

import { freePort, waitFor } from '../helpers/processes.js';

const root = new URL('../..', import.meta.url).pathname;

/** Runs `svc-connect …` (lib/cli.ts under tsx) as its own process and collects its output and exit code. */
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

describe('svc-connect as its own process: the bin, and serve beside config check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-serve-'));

  it('the bin starts and prints its overview with --help (0)', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: svc-connect <command>');
  });

  it.each<[string, Record<string, string>, () => void]>([
    ['an invalid value', { PORT: 'abc' }, () => undefined],
    ['a mistyped variable', { SVC_MANAGMENT_PASSWORD: 'x' }, () => undefined],
    ['unsafe defaults under NODE_ENV=production', { NODE_ENV: 'production' }, () => undefined],
    ['a broken keys file', { SVC_KEYS_FILE: join(dir, 'broken-keys.json') }, () => writeFileSync(join(dir, 'broken-keys.json'), '{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}')],
    ['a missing authenticator module', { SVC_AUTHENTICATOR_MODULE: join(dir, 'no-such-module.js') }, () => undefined],
  ])('config check refuses %s with exit 1 and the message the server stops with', async (_name, env, prepare) => {
    prepare();
    const checked = await cli(['config', 'check'], env);
    const serve = await cli(['serve'], { PORT: String(await freePort()), ...env });
    expect(checked.code).toBe(1);
    expect(serve.code).toBe(1);
    const message = /cannot start: (.*)$/m.exec(serve.stderr)?.[1];
    expect(message).toBeDefined();
    expect(checked.stderr.split('\n').filter((l) => l.includes('cannot start:'))).toEqual([`svc-connect config: cannot start: ${message as string}`]);
  });

  it('serve runs the example server', async () => {
    const port = await freePort();
    const started = await cli(['serve'], { PORT: String(port) }, '"event":"listening"');
    try {
      const doc = (await (await waitFor(`http://localhost:${port}/oidc/v1/.well-known/openid-configuration`, 5000)).json()) as { issuer: string };
      expect(doc.issuer).toBe(`http://localhost:${port}/oidc/v1`);
    } finally {
      started.kill();
    }
  });
});

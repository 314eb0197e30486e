import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from '@jest/globals';

import { freePort } from '../helpers/processes.js';

const root = new URL('../..', import.meta.url).pathname;
const cli = join(root, 'dist/lib/cli.js');

/** Polls `check` every 100 ms until it returns true; fails after `seconds`. */
async function eventually(what: string, seconds: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const answers = async (url: string): Promise<boolean> => fetch(url).then((r) => r.ok, () => false);
const kids = async (issuer: string): Promise<string[]> => ((await (await fetch(`${issuer}/jwks`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();
const fileKids = (file: string): string[] => (JSON.parse(readFileSync(file, 'utf8')) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();

function start(command: string, args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

describe('signals reach the production process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-signals-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('svc-connect serve reloads the keys file on SIGHUP and publishes the new keys', async () => {
    const keys = join(dir, 'keys.json');
    const next = join(dir, 'next.json');
    execFileSync('node', [cli, 'keys', 'generate', '--out', keys]);
    execFileSync('node', [cli, 'keys', 'generate', '--out', next]);
    const port = await freePort();
    const issuer = `http://localhost:${port}/oidc/v1`;
    const server = start('node', [cli, 'serve'], { PORT: String(port), SVC_KEYS_FILE: keys });
    try {
      await eventually('the server answers', 30, () => answers(`${issuer}/jwks`));
      const before = await kids(issuer);
      expect(before).toEqual(fileKids(keys));
      copyFileSync(next, keys);
      server.child.kill('SIGHUP');
      await eventually('keys_reloaded is logged', 30, async () => server.output().includes('"event":"keys_reloaded"'));
      expect(await kids(issuer)).toEqual(fileKids(next));
      expect(server.output().split('\n').filter((line) => line && !line.startsWith('{'))).toEqual([]);
    } finally {
      server.child.kill('SIGTERM');
    }
  }, 90_000);

  it.each(['SIGHUP', 'SIGTERM'] as const)('leaves no server answering after npm start gets %s', async (signal) => {
    const port = await freePort();
    const npm = start('npm', ['start'], { PORT: String(port) });
    const url = `http://localhost:${port}/healthz`;
    try {
      await eventually('the server answers', 60, () => answers(url));
      npm.child.kill(signal);
      // The parent check runs every second, and a stop lets requests under way finish (at most 5 s).
      await eventually('the server is gone', 15, async () => !(await answers(url)));
    } finally {
      npm.child.kill('SIGKILL');
    }
  }, 120_000);
});

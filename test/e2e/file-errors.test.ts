import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it, jest } from '@jest/globals';

import { runCli } from '../helpers/cli.js';
import { PROCESS_MS, spawnCli } from '../helpers/processes.js';

jest.setTimeout(PROCESS_MS);

/** The command's own lines on stderr (not the runtime's warnings). */
const ours = (stderr: string): string[] => stderr.split('\n').filter((line) => line.startsWith('svc-connect'));

describe('file errors name the absolute path and the cause, never a stack', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-file-errors-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keys generate --out into a missing folder says which folder is missing (exit 1); into a folder that exists it writes the file and prints its absolute path', async () => {
    const missing = await runCli(['keys', 'generate', '--out', 'no-such-folder/keys.json'], {}, dir);
    expect(missing.code).toBe(1);
    expect(ours(missing.stderr)).toEqual([`svc-connect keys: cannot write ${dir}/no-such-folder/keys.json: the folder ${dir}/no-such-folder does not exist (ENOENT)`]);
    expect(missing.stderr).not.toMatch(/\n\s+at /);

    const folder = await runCli(['keys', 'generate', '--out', '.'], {}, dir);
    expect(ours(folder.stderr)).toEqual([`svc-connect keys: cannot write ${dir}: it is a folder, not a file (EISDIR)`]);

    mkdirSync(join(dir, 'etc'));
    const written = await runCli(['keys', 'generate', '--out', 'etc/keys.json'], {}, dir);
    expect(written.code).toBe(0);
    expect(written.stdout).toBe(`wrote ${dir}/etc/keys.json (mode 0600); set svc.keys.file=${dir}/etc/keys.json\n`);
    expect(statSync(join(dir, 'etc/keys.json')).mode & 0o777).toBe(0o600);
    expect((JSON.parse(readFileSync(join(dir, 'etc/keys.json'), 'utf8')) as { keys: unknown[] }).keys.length).toBeGreaterThan(0);
  });

  it('client-keys --private-out into a missing folder names it', async () => {
    const result = await runCli(['client-keys', '--private-out', 'gone/rp-private.json'], {}, dir);
    expect(result.code).toBe(1);
    expect(ours(result.stderr)).toEqual([`svc-connect client-keys: cannot write ${dir}/gone/rp-private.json: the folder ${dir}/gone does not exist (ENOENT)`]);
  });

  it.each<[string, string[], string]>([
    ['keys status', ['keys', 'status', '--file', 'absent.json'], 'svc-connect keys: the keys file: cannot read DIR/absent.json: no such file (ENOENT)'],
    ['keys rotate', ['keys', 'rotate', '--file', 'nowhere/keys.json'], 'svc-connect keys: the keys file: cannot read DIR/nowhere/keys.json: no such file (ENOENT)'],
    ['register --body', ['register', '--token', 't', '--body', 'absent-body.json'], 'svc-connect register: --body: cannot read DIR/absent-body.json: no such file (ENOENT)'],
    ['clients list --password-file', ['clients', 'list', '--password-file', 'absent-password'], 'svc-connect clients: --password-file: cannot read DIR/absent-password: no such file (ENOENT)'],
  ])('%s with a missing file names its absolute path', async (_name, args, message) => {
    const result = await runCli(args, {}, dir);
    expect(result.code).not.toBe(0);
    expect(ours(result.stderr)).toEqual([message.replace('DIR', dir)]);
  });

  it('register --body that is not JSON says so with the absolute path', async () => {
    writeFileSync(join(dir, 'body.txt'), 'not json');
    const result = await runCli(['register', '--token', 't', '--body', 'body.txt'], {}, dir);
    expect(ours(result.stderr)).toEqual([`svc-connect register: --body: ${dir}/body.txt is not valid JSON`]);
  });

  it.each<[string, Record<string, string>, string]>([
    ['svc.keys.file', { SVC_KEYS_FILE: 'keys/absent.json' }, 'svc.keys.file: cannot read DIR/keys/absent.json: no such file (ENOENT)'],
    ['svc.clients.file', { SVC_CLIENTS_FILE: 'absent-clients.json' }, 'svc.clients.file: cannot read DIR/absent-clients.json: no such file (ENOENT)'],
    ['SVC_CONFIG', { SVC_CONFIG: 'absent.properties' }, 'the configuration file named by SVC_CONFIG: cannot read DIR/absent.properties: no such file (ENOENT)'],
  ])('config check and serve name the absolute path of a missing %s', async (_name, env, message) => {
    const check = await runCli(['config', 'check'], env, dir);
    const serve = await spawnCli(dir, ['serve'], { PORT: '0', ...env });
    expect(ours(check.stderr)).toEqual([`svc-connect config: cannot start: ${message.replace('DIR', dir)}`]);
    expect(serve.code).toBe(1);
    expect(ours(serve.stderr)).toEqual([`svc-connect: cannot start: ${message.replace('DIR', dir)}`]);
  });
});

import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';

import { runCli as cli } from '../helpers/cli.js';

describe('how the command line reads its flags', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-args-'));

  it('attack: an empty value (an unset shell variable, --out "$KEYS") is a wrong command line (2), never "no flag": no private key is printed instead of written, no other configuration checked', async () => {
    for (const args of [
      ['keys', 'generate', '--out', ''],
      ['keys', 'generate', '--out='],
      ['client-keys', '--private-out', ''],
      ['config', 'check', '--file', ''],
      ['clients', 'list', '--cursor', ''],
      ['subjects', 'revoke', 'a', '--client', ''],
    ]) {
      const run = await cli(args, { SVC_MANAGEMENT_PASSWORD: 'x', SVC_BASE_URL: 'http://127.0.0.1:9' });
      expect([args.join(' '), run.code, run.stdout, run.stderr]).toEqual([args.join(' '), 2, '', expect.stringMatching(/^svc-connect [\w-]+: --[\w-]+ is given an empty value\n/)]);
    }
  });

  it('attack: a flag that takes one value given twice is a wrong command line (2), not the last one silently', async () => {
    const first = join(dir, 'first.json');
    const second = join(dir, 'second.json');
    for (const args of [
      ['keys', 'generate', '--out', first, `--out=${second}`],
      ['clients', 'list', '--url', 'http://127.0.0.1:9', '--url', 'https://id.example.com'],
      ['invite', '--email', 'a@example.com', '--email', 'b@example.com'],
    ]) {
      const run = await cli(args, { SVC_MANAGEMENT_PASSWORD: 'x' });
      expect([args.join(' '), run.code, run.stdout, run.stderr]).toEqual([args.join(' '), 2, '', expect.stringMatching(/^svc-connect [\w-]+: --[\w-]+ is given more than once\n/)]);
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('attack: a SUB, CLIENT_ID or LOGIN after -- that reads like -h or --help is sent, never taken for help: no exit 0 with nothing done', async () => {
    for (const args of [
      ['subjects', 'revoke', '--', '-h'],
      ['subjects', 'revoke', '--client', 'rp', '--', '--help'],
      ['clients', 'delete', '--', '--help'],
      ['clients', 'revoke-grants', '--', '-h'],
      ['logins', 'reset', '--', '-h'],
    ]) {
      const run = await cli(args, { SVC_MANAGEMENT_PASSWORD: 'x', SVC_BASE_URL: 'http://127.0.0.1:9' });
      expect([args.join(' '), run.code, run.stdout, run.stderr]).toEqual([args.join(' '), 1, '', expect.stringContaining('cannot reach http://127.0.0.1:9')]);
    }
    // Before --, each is the command's help.
    for (const args of [['subjects', 'revoke', '-h', '--', 'a'], ['clients', '--help']]) expect((await cli(args)).code).toBe(0);
  });

  it('attack: -h or --help where a flag takes its value (--client -h, a CLIENT_ID from an unset-looking variable) is a wrong command line (2), not the help with exit 0 and nothing done', async () => {
    for (const args of [
      ['subjects', 'revoke', 'a', '--client', '-h'],
      ['subjects', 'revoke', 'a', '--client', '--help'],
      ['clients', 'list', '--cursor', '-h'],
    ]) {
      const run = await cli(args, { SVC_MANAGEMENT_PASSWORD: 'x', SVC_BASE_URL: 'http://127.0.0.1:9' });
      expect([args.join(' '), run.code, run.stdout, run.stderr]).toEqual([args.join(' '), 2, '', expect.stringMatching(/^svc-connect [\w-]+: Option '--[\w-]+' argument is ambiguous/)]);
    }
  });

  it('honest: -h or --help after a flag that takes no value (--all, --json, --print, --connect) is the help, exit 0 with nothing done', async () => {
    for (const args of [['clients', 'list', '--all', '--help'], ['invitations', 'list', '--json', '-h'], ['invite', '--print', '--help'], ['config', 'check', '--connect', '-h']]) {
      const run = await cli(args, { SVC_MANAGEMENT_PASSWORD: 'x', SVC_BASE_URL: 'http://127.0.0.1:9' });
      expect([args.join(' '), run.code, run.stdout.split('\n')[0], run.stderr]).toEqual([args.join(' '), 0, expect.stringMatching(/^Usage: svc-connect /), '']);
    }
  });

  it('honest: --flag=value and --flag value read alike, and a flag that takes a list takes it repeated', async () => {
    for (const args of [['--out', join(dir, 'spaced.json')], [`--out=${join(dir, 'joined.json')}`]]) {
      expect((await cli(['keys', 'generate', ...args])).code).toBe(0);
    }
    expect(existsSync(join(dir, 'spaced.json')) && existsSync(join(dir, 'joined.json'))).toBe(true);
    const pair = await cli(['client-keys', '--alg', 'ECDH-ES', '--redirect-uri', 'https://rp.example/a', '--redirect-uri=https://rp.example/b']);
    expect([pair.code, (JSON.parse(pair.stdout) as { registration: { redirect_uris: string[] } }).registration.redirect_uris]).toEqual([0, ['https://rp.example/a', 'https://rp.example/b']]);
  });
});

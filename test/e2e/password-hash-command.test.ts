/**
 * `examples/authenticator-file.ts hash` (docs/operations/production.md#the-users-file): the password comes from
 * standard input as a person types it or a script pipes it, with or without a line end.
 */
import { spawn } from 'node:child_process';

import { describe, expect, it } from '@jest/globals';

import { verifyPassword } from '../../examples/users-file.js';
import { untilOutput } from '../helpers/processes.js';

const root = new URL('../..', import.meta.url).pathname;

/** Runs the hash command with `input` on its standard input. */
function hash(input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/authenticator-file.ts', 'hash'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('the users file hash command', () => {
  it.each([
    ['a typed line', 'correct horse battery\n'],
    ['a piped secret without a line end (printf, a secret store)', 'correct horse battery'],
  ])('honest: %s is hashed', async (_case, input) => {
    const result = await hash(input);
    expect(result.code).toBe(0);
    expect(await verifyPassword('correct horse battery', result.stdout.trim())).toBe(true);
  });

  it('refuses an empty standard input and an empty line (2), printing no hash', async () => {
    expect(await hash('')).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining('no password on standard input') });
    expect(await hash('\n')).toEqual({ code: 2, stdout: '', stderr: expect.stringContaining('the password must not be empty') });
  });
});

/** Runs the hash command in a pseudo-terminal (util-linux `script`), typing `keys` once it asks; what the terminal showed. */
async function hashOnTerminal(keys: string): Promise<{ code: number | null; shown: string }> {
  const child = spawn('script', ['-qefc', `exec ${process.execPath} --import tsx examples/authenticator-file.ts hash`, '/dev/null'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let shown = '';
  child.stdout.on('data', (d: Buffer) => (shown += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await untilOutput(() => shown, /password: /);
  child.stdin.write(keys);
  const code = await exited;
  return { code, shown };
}

describe('the users file hash command at a terminal', () => {
  it('attack: a password typed at a terminal is not shown on it (nor left in its scrollback); editing keys still work', async () => {
    // "x" then backspace: she mends a typo as she types.
    const { code, shown } = await hashOnTerminal('correct horse x\u007fbattery\r');
    const hashed = /scrypt:\S+/.exec(shown)?.[0] ?? '';
    expect({ code, typed: shown.includes('correct horse') }).toEqual({ code: 0, typed: false });
    expect(await verifyPassword('correct horse battery', hashed)).toBe(true);
  });
});

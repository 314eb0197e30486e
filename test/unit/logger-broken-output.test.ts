import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from '@jest/globals';

const root = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'svc-broken-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A process logging to its stdout: one warning, then, once told on stdin (or at once without stdin), a routine line and a
 * warning (each written at once) and an exit; what it reached is written to `done` (its stdout may be gone by then).
 */
const script = (done: string): string => `
  import { writeFileSync } from 'node:fs';
  import { createPinoLogger } from '${root}lib/index.ts';
  process.on('SIGHUP', () => undefined);
  const logger = createPinoLogger({ format: 'json' });
  logger.warn('first');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  logger.info('routine');
  logger.warn('after_output_gone');
  logger.error('again');
  writeFileSync(${JSON.stringify(done)}, 'logged');
  process.exit(0);
`;

const loader = `file://${root}node_modules/tsx/dist/loader.mjs`;

describe('a logger whose output went away', () => {
  it('attack: stdout a pipe whose reader left (a log shipper restarted, `serve | head`): the next warnings neither block the process nor crash it, and it exits 0', async () => {
    const done = join(dir, 'pipe.done');
    const child = spawn(process.execPath, ['--import', loader, '--input-type=module', '-e', script(done)], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '' } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      child.stdout.destroy();
      child.stdin.write('go\n');
      expect([await exited, stderr]).toEqual([0, '']);
      expect(readFileSync(done, 'utf8')).toBe('logged');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('attack: stdout a terminal that hung up (an SSH session closed under `npm start`): the next warnings neither block the process nor crash it', async () => {
    const done = join(dir, 'tty.done');
    const ready = join(dir, 'tty.ready');
    // The logger's process on the terminal of `script` (util-linux); killing `script` hangs the terminal up.
    const inner = script(done).replace("logger.warn('first');", `logger.warn('first'); (await import('node:fs')).writeFileSync(${JSON.stringify(ready)}, '');`).replace("await new Promise((resolve) => process.stdin.once('data', resolve));", `await new Promise((resolve) => { const alive = setInterval(() => undefined, 60_000); process.on('SIGUSR2', () => resolve(clearInterval(alive))); });`);
    const file = join(dir, 'tty.mjs');
    (await import('node:fs')).writeFileSync(file, inner);
    const terminal = spawn('script', ['-qefc', `exec ${process.execPath} --import ${loader} ${file}`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', TERM: 'xterm' } });
    terminal.stdout.resume();
    let pid = 0;
    try {
      while (!existsSync(ready)) await new Promise((resolve) => setTimeout(resolve, 50)); // a poll interval, not a bound
      pid = Number(readFileSync(`/proc/${String(terminal.pid)}/task/${String(terminal.pid)}/children`, 'utf8').trim().split(' ')[0]);
      terminal.kill('SIGKILL');
      await new Promise((resolve) => terminal.on('exit', resolve));
      process.kill(pid, 'SIGUSR2');
      while (!existsSync(done)) await new Promise((resolve) => setTimeout(resolve, 50)); // a poll interval, not a bound
      expect(readFileSync(done, 'utf8')).toBe('logged');
      // It exits too (its buffer written at exit to the terminal that hung up): nothing left waiting on it.
      while (existsSync(`/proc/${pid}`)) await new Promise((resolve) => setTimeout(resolve, 50)); // a poll interval, not a bound
    } finally {
      terminal.kill('SIGKILL');
      if (pid > 0 && existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
    }
  });
});

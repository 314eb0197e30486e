import { main } from '../../lib/cli.js';

/** What a run of the command line wrote, and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Calls of {@link runCli} under way, and whether one of them changed the working directory. */
const running = { calls: 0, moved: false };

/**
 * Runs `svc-connect …` in this process through `main(argv, io)` with exactly `env` (plus PATH and HOME), in the
 * working directory `cwd` when one is given (restored after), and collects what it wrote. A call with `cwd`
 * cannot overlap another call (the working directory is the process's): that throws.
 */
export async function runCli(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<CliRun> {
  if (running.moved || (cwd && running.calls > 0)) throw new Error('runCli: a call in a working directory of its own overlaps another call; await one before the next');
  let stdout = '';
  let stderr = '';
  const previous = process.cwd();
  running.calls += 1;
  if (cwd) {
    running.moved = true;
    process.chdir(cwd);
  }
  try {
    const code = await main(args, { out: (text) => void (stdout += text), err: (text) => void (stderr += text), env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
    return { code, stdout, stderr };
  } finally {
    running.calls -= 1;
    if (cwd) {
      process.chdir(previous);
      running.moved = false;
    }
  }
}

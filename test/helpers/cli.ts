import { main } from '../../lib/cli.js';

/** What a run of the command line wrote, and its exit code. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `svc-connect …` in this process through `main(argv, io)` with exactly `env` (plus PATH and HOME), in the
 * working directory `cwd` when one is given (restored after), and collects what it wrote.
 */
export async function runCli(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const previous = process.cwd();
  if (cwd) process.chdir(cwd);
  try {
    const code = await main(args, { out: (text) => void (stdout += text), err: (text) => void (stderr += text), env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
    return { code, stdout, stderr };
  } finally {
    process.chdir(previous);
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { TEST_STORE_TIMEOUT_MS } from './redis.js';

export { freePort } from '../free-port.js';

/** A child process of the example server with its collected output. */
export interface ServerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code once the process ends. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** Starts `examples/server.ts` under tsx with exactly `env` (plus PATH and HOME); with `user` (root only), as that user, as a service unit's `User=` runs it. */
export function startServerProcess(env: Record<string, string>, user?: { uid: number; gid: number }): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/server.ts'], {
    cwd: new URL('../..', import.meta.url).pathname,
    ...user,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SVC_REDIS_OPERATION_TIMEOUT_MS: String(TEST_STORE_TIMEOUT_MS), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    exited,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * How long a spawned process may take to answer, and a test that starts processes may run: a bound
 * for a busy machine (a test timeout, not a claim about start time; files that start processes call
 * `jest.setTimeout(PROCESS_MS)`).
 */
export const PROCESS_MS = 240_000;

/** Polls `url` until it answers 200 or `timeoutMs` passes. */
export async function waitFor(url: string, timeoutMs = PROCESS_MS): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.ok) return response;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Resolves with a process's output once it shows `pattern`: a log line may reach the test after the
 * server already answers (a pseudo-terminal relays it later), so a line is waited for, never assumed.
 */
export async function untilOutput(output: () => string, pattern: RegExp): Promise<string> {
  while (!pattern.test(output())) await new Promise((resolve) => setTimeout(resolve, 50));
  return output();
}

/**
 * Runs `svc-connect …` (lib/cli.ts under tsx) as its own process in `cwd` with exactly `env` (plus
 * PATH and HOME), for what only a real process shows: paths against its working directory, Node's
 * own module lookup, signals.
 */
export function spawnCli(cwd: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const root = new URL('../..', import.meta.url).pathname;
  return new Promise((resolve) => {
    // tsx as a loader, not its CLI, which would start a second Node process for each run.
    const child = spawn(process.execPath, ['--import', `file://${root}node_modules/tsx/dist/loader.mjs`, `${root}lib/cli.ts`, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

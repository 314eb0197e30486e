import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository's folder. */
export const root = new URL('../..', import.meta.url).pathname;
/**
 * The environment of every command: this machine's (npm needs its certificates and PATH), without
 * jest's NODE_OPTIONS and NODE_ENV and without any setting of svc-connect's.
 */
export const baseEnv = (): Record<string, string> =>
  Object.fromEntries(
    Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined && !/^(NODE_OPTIONS|NODE_ENV|PORT|REDIS_URL|SMTP_URL|AUTH_USERS_FILE|SVC_.*)$/.test(entry[0])),
  );

/** The markdown of `docs/<name>`. */
export const guide = (name: string): string => readFileSync(join(root, 'docs', name), 'utf8');

/** The ```lang blocks of a guide, in order. */
export function blocksOf(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1] as string);
}

/** The one block of `lang` containing every needle. */
export function blockWith(markdown: string, lang: string, ...needles: string[]): string {
  const found = blocksOf(markdown, lang).filter((b) => needles.every((n) => b.includes(n)));
  if (found.length !== 1) throw new Error(`expected one \`\`\`${lang} block with ${needles.join(', ')}, found ${found.length}`);
  return found[0] as string;
}

/** Runs a guide's shell block with bash in `cwd`, stopping at the first failing command. */
export function runShell(block: string, cwd: string): void {
  const run = spawnSync('bash', ['-e', '-x', '-c', block], { cwd, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 240_000 });
  if (run.status !== 0) throw new Error(`the guide's commands failed (${run.error?.message ?? `exit ${String(run.status)}`}):\n${run.stdout}\n${run.stderr}`);
}

/** A process started with `sh -c`, in a process group of its own (npx starts children). */
export interface Started {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts `command` in `cwd` with the machine's environment plus `env`; `stop` ends its whole process group. */
export function start(command: string, cwd: string, env: Record<string, string>): Started {
  const child = spawn('sh', ['-c', command], { cwd, env: { ...baseEnv(), ...env }, detached: true });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    child,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null && child.pid) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      await exited;
    },
  };
}

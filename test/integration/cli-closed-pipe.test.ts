import { spawn } from 'node:child_process';
import { createServer } from 'node:http';

import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';

import { freePort, PROCESS_MS, waitFor } from '../helpers/processes.js';

jest.setTimeout(PROCESS_MS);

const root = new URL('../..', import.meta.url).pathname;

/** `svc-connect …` (lib/cli.ts under tsx) as its own process, stdout a pipe this test reads. */
function spawnCli(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', `file://${root}node_modules/tsx/dist/loader.mjs`, `${root}lib/cli.ts`, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, stderr: () => stderr };
}

/** What the process wrote to stderr but the runtime's own warning (oidc-provider's on a Node release it does not support). */
const ours = (stderr: string): string => stderr.replace(/^oidc-provider WARNING: .*\n/m, '');

describe('a command whose reader closed the pipe', () => {
  // A listing of 20 000 clients (a table of some 1.5 MB, many pipe buffers).
  const listing = JSON.stringify({ clients: Array.from({ length: 20_000 }, (_, i) => ({ client_id: `client-${String(i).padStart(36, '0')}`, client_name: 'A relying party' })) });
  const provider = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end(listing);
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(provider.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => provider.close(() => resolve())));

  it('`clients list --all | head`: stops quietly, no stack trace, exit 141 as a shell reports for git or coreutils ended by SIGPIPE', async () => {
    const cli = spawnCli(['clients', 'list', '--all', '--url', url], { SVC_MANAGEMENT_PASSWORD: 'closed-pipe-password-1' });
    try {
      const first = await new Promise<string>((resolve) => cli.child.stdout.once('data', (d: Buffer) => resolve(d.toString())));
      expect(first).toMatch(/^CLIENT_ID {2,}STATE/);
      cli.child.stdout.destroy();
      expect(await cli.exited).toBe(141);
      expect(ours(cli.stderr())).toBe('');
    } finally {
      cli.child.kill('SIGKILL');
    }
  });

  it('honest: `serve` whose stdout went away keeps serving (its log lines are dropped) and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    // pretty: the server also writes its listening sentence to stdout itself, not only through the logger.
    const serve = spawnCli(['serve'], { PORT: String(port), SVC_LOG_FORMAT: 'pretty' });
    serve.child.stdout.destroy();
    try {
      const gone = serve.exited.then((code) => Promise.reject(new Error(`serve exited with ${String(code)}: ${serve.stderr()}`)));
      await Promise.race([waitFor(`http://127.0.0.1:${port}/oidc/v1/.well-known/openid-configuration`), gone]);
      // A request, and its log line, after the pipe is gone.
      expect((await fetch(`http://127.0.0.1:${port}/oidc/v1/no-such-path`)).status).toBe(404);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      expect(ours(serve.stderr())).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
    } finally {
      serve.child.kill('SIGKILL');
    }
  });
});

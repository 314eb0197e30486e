import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';

import { runCli } from '../helpers/cli.js';
import { PROCESS_MS, spawnCli } from '../helpers/processes.js';

jest.setTimeout(PROCESS_MS);

/*
 * The files the command line reads (register --body, --password-file) are its user's own input: a pipe or a terminal
 * is read as it comes (`--body <(jq …)`, `--password-file /dev/stdin`), and every one of them only up to its limit, so a
 * device named by mistake (/dev/zero, /dev/urandom) is refused instead of filling the memory.
 */
describe('the files the command line reads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-input-'));
  let n = 0;
  // Stands in for the provider: records what it is sent.
  const sent: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const recorder = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      sent.push({ headers: req.headers, body });
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_request"}');
    });
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(recorder.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => recorder.close(() => resolve())));

  it('honest: a registration body and a management password given through a pipe (as `<(…)` gives one) are read and sent', async () => {
    sent.length = 0;
    const body = '{"redirect_uris":["https://rp.example/cb"]}';
    /** A named pipe that a process of its own writes `text` into once the command opens it. */
    const pipe = (text: string): string => {
      const path = join(dir, `pipe-${(n += 1)}`);
      execFileSync('mkfifo', [path]);
      spawn('sh', ['-c', 'printf %s "$1" > "$2"', 'sh', text, path], { stdio: 'ignore' });
      return path;
    };
    await spawnCli(dir, ['register', '--url', url, '--body', pipe(body)], { SVC_INITIAL_ACCESS_TOKEN: 'an-initial-access-token' });
    await spawnCli(dir, ['clients', 'list', '--url', url, '--user', 'ops', '--password-file', pipe('a management password\n')]);
    expect(sent.map((s) => s.body)).toEqual([body, '']);
    expect(sent[1]?.headers.authorization).toBe(`Basic ${Buffer.from('ops:a management password').toString('base64')}`);
  });

  it('attack: a device named instead of a file (/dev/zero as the body, /dev/urandom as the password file) is refused after the limit (1 MiB, 64 KiB), nothing sent (exit 2)', async () => {
    sent.length = 0;
    const runs = [
      await runCli(['register', '--url', url, '--body', '/dev/zero'], { SVC_INITIAL_ACCESS_TOKEN: 'an-initial-access-token' }),
      await runCli(['clients', 'list', '--url', url, '--password-file', '/dev/urandom']),
    ];
    expect(runs).toEqual([
      { code: 2, stdout: '', stderr: 'svc-connect register: --body: /dev/zero holds more than 1 MiB, the most svc-connect reads from this file\n' },
      { code: 2, stdout: '', stderr: 'svc-connect clients: --password-file: /dev/urandom holds more than 64 KiB, the most svc-connect reads from this file\n' },
    ]);
    expect(sent).toEqual([]);
  });
});

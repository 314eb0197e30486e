import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';

import { describe, expect, it, jest } from '@jest/globals';

import { freePort, PROCESS_MS, startServerProcess, untilOutput, waitFor } from '../helpers/processes.js';
import { TEST_STORE_TIMEOUT_MS } from '../helpers/redis.js';

jest.setTimeout(PROCESS_MS);

const root = new URL('../..', import.meta.url).pathname;

/** Starts the example server inside a pseudo-terminal (util-linux `script`), as a person at a terminal would. */
function startOnTerminal(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null>; dispose: () => void } {
  // exec: the server itself is the terminal's foreground process, as when started from a shell.
  const command = `exec ${process.execPath} --import tsx examples/server.ts`;
  const child = spawn('script', ['-qefc', command, '/dev/null'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TERM: 'xterm', SVC_REDIS_OPERATION_TIMEOUT_MS: String(TEST_STORE_TIMEOUT_MS), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  /** Stops the server (by its pid, a child of this `script`) if a test left it running. */
  const dispose = (): void => {
    if (child.exitCode !== null || !child.pid) return;
    const pids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(child.pid)], { encoding: 'utf8' }).split('\n').map((p) => Number(p.trim())).filter((p) => p > 0);
    for (const pid of pids) process.kill(pid, 'SIGTERM');
  };
  return { child, output: () => out, exited, dispose };
}

// eslint-disable-next-line no-control-regex
const plain = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, '').replace(/\r/g, '');

describe('the bundled server starts, logs and stops for an operator', () => {
  it('writes JSON lines when its output is not a terminal: a start line (URL, store, warnings) and, on SIGTERM, stopping and stopped, exit 0', async () => {
    const port = await freePort();
    const server = startServerProcess({ PORT: String(port) });
    await waitFor(`http://localhost:${port}/healthz`);
    // JSON output is JSON only: no plain sentence among the lines.
    expect(server.output().split('\n').filter((line) => line && !line.startsWith('{'))).toEqual([]);
    expect(server.output()).toMatch(/"event":"listening".*"url":"http:\/\/localhost:\d+".*"store":"memory","keys":"ephemeral","warnings":\d+/);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(server.output()).toMatch(/"event":"stopping","signal":"SIGTERM"/);
    expect(server.output()).toMatch(/"event":"stopped","signal":"SIGTERM"/);
  });

  it.each<{ given: string; env: Record<string, string>; path: string; issuer: (port: number) => string }>([
    { given: 'unset', env: {}, path: '', issuer: (port: number): string => `http://localhost:${port}/oidc/v1` },
    { given: 'set', env: { SVC_BASE_URL: 'https://id.example.com/auth' }, path: '/auth', issuer: (): string => 'https://id.example.com/auth/oidc/v1' },
  ])('svc.port 0 (a port the system chooses), svc.base-url $given: the issuer names the port it chose, unless given', async ({ env, path, issuer }) => {
    const server = startServerProcess({ PORT: '0', ...env });
    try {
      const line = await untilOutput(() => server.output(), /"event":"listening".*\n/);
      const port = Number(/"event":"listening","port":(\d+)/.exec(line)?.[1]);
      const discovery = (await (await waitFor(`http://127.0.0.1:${port}${path}/oidc/v1/.well-known/openid-configuration`)).json()) as { issuer: string };
      expect([port > 0, discovery.issuer]).toEqual([true, issuer(port)]);
    } finally {
      await server.stop();
    }
  });

  it('writes readable lines on a terminal, and stops on Ctrl-C (SIGINT) with exit 0', async () => {
    const port = await freePort();
    const server = startOnTerminal({ PORT: String(port) });
    try {
    await waitFor(`http://localhost:${port}/healthz`);
    const text = await untilOutput(() => plain(server.output()), /INFO {2}listening/);
    expect(text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}unsafe_default property=svc\.redis\.url reason="/m);
    expect(text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}listening port=\d+ url=http:\/\/localhost:\d+ issuer=http:\/\/localhost:\d+\/oidc\/v1 store=memory keys=ephemeral warnings=\d+$/m);
    expect(text).not.toContain('"event"');
    expect(server.output()).toContain('\u001b[33mWARN \u001b[0m');
    server.child.stdin?.write('\u0003');
    expect(await server.exited).toBe(0);
    expect(plain(server.output())).toMatch(/INFO {2}stopping signal=SIGINT[\s\S]*INFO {2}stopped signal=SIGINT/);
    } finally {
      server.dispose();
    }
  });

  it('attack: the terminal it runs on hangs up (an SSH session closed): it stops (parent_gone) and frees its port, never blocked writing its lines to that terminal', async () => {
    const port = await freePort();
    const server = startOnTerminal({ PORT: String(port) });
    let pid = 0;
    try {
      await waitFor(`http://localhost:${port}/healthz`);
      pid = Number(execFileSync('ps', ['-o', 'pid=', '--ppid', String(server.child.pid)], { encoding: 'utf8' }).trim().split('\n')[0]);
      server.child.kill('SIGKILL');
      while (existsSync(`/proc/${pid}`)) await new Promise((resolve) => setTimeout(resolve, 100)); // a poll interval, not a bound
      await expect(fetch(`http://localhost:${port}/healthz`)).rejects.toThrow();
    } finally {
      if (pid > 0 && existsSync(`/proc/${pid}`)) process.kill(pid, 'SIGKILL');
    }
  });

  it('writes JSON on a terminal too when svc.log.format=json', async () => {
    const port = await freePort();
    const server = startOnTerminal({ PORT: String(port), SVC_LOG_FORMAT: 'json' });
    try {
      await waitFor(`http://localhost:${port}/healthz`);
      expect(await untilOutput(() => plain(server.output()), /"event":"listening"/)).toMatch(/^\{"level":"info","time":"[^"]+","event":"listening"/m);
      server.child.stdin?.write('\u0003');
      expect(await server.exited).toBe(0);
    } finally {
      server.dispose();
    }
  });

  it.each([
    { property: 'svc.port', env: (port: number): Record<string, string> => ({ PORT: String(port) }) },
    { property: 'svc.ops.port', env: (port: number): Record<string, string> => ({ SVC_OPS_PORT: String(port), SVC_OPS_HOST: '127.0.0.1' }) },
  ])('stops with one line naming $property when its port is taken, exit 1, no stack', async ({ property, env }) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const publicPort: Record<string, string> = property === 'svc.port' ? {} : { PORT: String(await freePort()) };
    try {
      const server = startServerProcess({ ...publicPort, ...env(port), SVC_LOG_LEVEL: 'silent' });
      expect(await server.exited).toBe(1);
      expect(server.output()).toBe(`svc-connect: cannot start: ${property} ${port} is in use by another process (EADDRINUSE)\n`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it.each([
    // TEST-NET-1 (RFC 5737): an address no machine of ours has.
    { host: '192.0.2.1', fault: 'is not an address of this machine \\(EADDRNOTAVAIL\\)' },
    // .invalid never resolves (RFC 2606); without DNS at all the lookup fails as temporary.
    { host: 'ops.invalid', fault: 'is a name that cannot be resolved \\((ENOTFOUND|EAI_AGAIN)\\)' },
  ])('a mistyped svc.ops.host ($host) stops the start with one line naming svc.ops.host, not svc.ops.port, exit 1', async ({ host, fault }) => {
    const server = startServerProcess({ PORT: String(await freePort()), SVC_OPS_PORT: String(await freePort()), SVC_OPS_HOST: host, SVC_LOG_LEVEL: 'silent' });
    expect(await server.exited).toBe(1);
    expect(server.output()).toMatch(new RegExp(`^svc-connect: cannot start: svc\\.ops\\.host ${host.replace(/\./g, '\\.')} ${fault}\\n$`));
  });
});

/** A token request on a kept-alive connection whose body is held back: under way at the server (it answered `100 Continue`) until {@link HeldRequest.finish}. */
interface HeldRequest {
  finish(): void;
  /** The answer's head, once the server ended the connection (never, while it keeps the connection open). */
  answer: Promise<{ head: string; closedByServer: boolean }>;
}

async function holdRequest(port: number): Promise<HeldRequest> {
  const body = 'grant_type=authorization_code&code=not-a-real-code&redirect_uri=x';
  const socket: Socket = connect(port, '127.0.0.1');
  let received = '';
  const continued = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      if (received.startsWith('HTTP/1.1 100')) resolve();
    });
  });
  const answer = new Promise<{ head: string; closedByServer: boolean }>((resolve) => {
    socket.on('end', () => resolve({ head: received.replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, '').split('\r\n\r\n')[0] ?? '', closedByServer: true }));
  });
  socket.write(`POST /oidc/v1/token HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\nExpect: 100-continue\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`);
  await continued;
  return { finish: () => void socket.write(body), answer };
}

describe('the bundled server stops for an operator: drain, second signal', () => {
  it('attack: a request under way at SIGTERM on a kept-alive connection (a proxy\'s pooled connection) is answered with Connection: close and its connection ended, so the stop completes (stopped, exit 0) instead of the connection serving on until stop_timeout', async () => {
    const port = await freePort();
    const server = startServerProcess({ PORT: String(port) });
    try {
      await waitFor(`http://localhost:${port}/healthz`);
      const held = await holdRequest(port);
      server.child.kill('SIGTERM');
      await untilOutput(() => server.output(), /"event":"stopping"/);
      held.finish();
      const { head, closedByServer } = await held.answer;
      expect([head.split('\r\n')[0], /^connection: (.*)$/im.exec(head)?.[1], closedByServer]).toEqual(['HTTP/1.1 400 Bad Request', 'close', true]);
      expect(await server.exited).toBe(0);
      expect(server.output()).toMatch(/"event":"stopped","signal":"SIGTERM"/);
      expect(server.output()).not.toContain('stop_timeout');
    } finally {
      await server.stop();
    }
  });

  it('honest: many requests under way at SIGTERM, each on its own connection, are all answered before the process exits 0', async () => {
    const port = await freePort();
    const server = startServerProcess({ PORT: String(port) });
    try {
      await waitFor(`http://localhost:${port}/healthz`);
      const held = await Promise.all(Array.from({ length: 5 }, () => holdRequest(port)));
      server.child.kill('SIGTERM');
      await untilOutput(() => server.output(), /"event":"stopping"/);
      for (const request of held) request.finish();
      const answers = await Promise.all(held.map(async (request) => (await request.answer).head.split('\r\n')[0]));
      expect(answers).toEqual(Array(5).fill('HTTP/1.1 400 Bad Request'));
      expect(await server.exited).toBe(0);
      expect(server.output()).toMatch(/"event":"stopped","signal":"SIGTERM"/);
    } finally {
      await server.stop();
    }
  });

  it('honest: a stop with no request under way closes the idle kept-alive connections at once and exits 0 with stopped', async () => {
    const port = await freePort();
    const server = startServerProcess({ PORT: String(port) });
    try {
      await waitFor(`http://localhost:${port}/healthz`);
      const idle = connect(port, '127.0.0.1');
      const closed = new Promise<void>((resolve) => idle.on('close', () => resolve()));
      await new Promise<void>((resolve) => idle.write('GET /readyz HTTP/1.1\r\nHost: localhost\r\n\r\n', () => resolve()));
      await new Promise<void>((resolve) => idle.once('data', () => resolve()));
      server.child.kill('SIGTERM');
      await closed;
      expect(await server.exited).toBe(0);
      expect(server.output()).toMatch(/"event":"stopped","signal":"SIGTERM"/);
    } finally {
      await server.stop();
    }
  });

  it.each([
    { first: 'SIGTERM', second: 'SIGTERM', code: 143 },
    { first: 'SIGTERM', second: 'SIGINT', code: 130 },
    { first: 'SIGINT', second: 'SIGINT', code: 130 },
  ] as const)('a second signal while a request drains ($first, then $second) stops at once: stop_forced, the lines before it written, exit $code', async ({ first, second, code }) => {
    const port = await freePort();
    const server = startServerProcess({ PORT: String(port) });
    try {
      await waitFor(`http://localhost:${port}/healthz`);
      const answered = await holdRequest(port);
      await holdRequest(port);
      server.child.kill(first);
      await untilOutput(() => server.output(), /"event":"stopping"/);
      answered.finish();
      await answered.answer;
      server.child.kill(second);
      expect(await server.exited).toBe(code);
      expect(server.output()).toMatch(new RegExp(`"event":"stopping","signal":"${first}"[\\s\\S]*"route":"/oidc/v1/token","status":400[\\s\\S]*"event":"stop_forced","signal":"${second}"`));
      expect(server.output()).not.toContain('stop_timeout');
    } finally {
      await server.stop();
    }
  });
});

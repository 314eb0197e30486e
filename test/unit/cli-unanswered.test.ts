import { createServer, type IncomingMessage } from 'node:http';
import { createServer as createTcpServer, type Server } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { call } from '../../lib/cli/common.js';
import { runCli } from '../helpers/cli.js';

const listening = async <S extends Server>(server: S): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
};
const failure = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => '',
    (err: unknown) => (err as Error).message,
  );
const CHECK = 'it may be done, or still under way on the server; check before repeating it (with the matching list or show command, or the management_audit line in the provider\'s log)';
const env = { SVC_MANAGEMENT_PASSWORD: 'unanswered-password-1' };

/**
 * A request the server took but did not answer in time (a revoke scanning every session and grant of a large store) is not
 * a server that cannot be reached: told "cannot reach", the operator would take the action for undone and start it again.
 */
describe('what the command line says when no answer comes', () => {
  const heard: IncomingMessage[] = [];
  const arrived: ((req: IncomingMessage) => void)[] = [];
  // Takes every request and never answers it.
  const silent = createServer((req) => {
    heard.push(req);
    arrived.shift()?.(req);
  });
  // Reads a request, then closes the connection without an answer.
  const hangingUp = createTcpServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
  const nextRequest = (): Promise<IncomingMessage> => new Promise((resolve) => arrived.push(resolve));
  let silentUrl = '';
  let hangingUpUrl = '';
  let closedUrl = '';
  beforeAll(async () => {
    silentUrl = await listening(silent);
    hangingUpUrl = await listening(hangingUp);
    const closed = createTcpServer();
    closedUrl = await listening(closed);
    await new Promise((resolve) => closed.close(resolve));
  });
  afterAll(async () => {
    silent.closeAllConnections();
    await Promise.all([new Promise((resolve) => silent.close(resolve)), new Promise((resolve) => hangingUp.close(resolve))]);
  });

  it('attack on the operator: an action sent and not answered within the wait is told as sent, maybe done or under way, never as unreachable', async () => {
    for (const method of ['POST', 'DELETE']) {
      const request = nextRequest();
      const message = await failure(call(`${silentUrl}/oidc/v1/management/subjects/revoke`, { method, headers: {}, body: method === 'POST' ? 'sub=her-sub' : undefined, wait: 50 }));
      expect(message).toBe(`sent the request to ${silentUrl}, but no answer came within 0.05 s: ${CHECK}`);
      expect((await request).method).toBe(method);
    }
  });

  it('honest: a read sent and not answered says so, without asking to check an action', async () => {
    const message = await failure(call(`${silentUrl}/oidc/v1/management/clients`, { method: 'GET', headers: {}, wait: 50 }));
    expect(message).toBe(`sent the request to ${silentUrl}, but no answer came within 0.05 s`);
  });

  it('a connection closed after the request went out is no unreachable server either: the action may be done', async () => {
    const message = await failure(call(`${hangingUpUrl}/oidc/v1/management/clients/rp-1`, { method: 'DELETE', headers: {} }));
    expect(message).toBe(`sent the request to ${hangingUpUrl}, but the connection closed without an answer (ECONNRESET): ${CHECK}`);
  });

  it('honest: a server refusing the connection (nothing listening) still cannot be reached, for reads and actions', async () => {
    for (const method of ['GET', 'POST']) expect(await failure(call(`${closedUrl}/oidc/v1/management/clients`, { method, headers: {}, wait: 50 }))).toBe(`cannot reach ${closedUrl} (ECONNREFUSED)`);
  });

  it('subjects revoke and clients delete with a --wait the server outlasts exit 1, saying the action may be under way; refused, they cannot reach it', async () => {
    for (const args of [['subjects', 'revoke', 'her-sub'], ['clients', 'delete', 'rp-1']]) {
      const request = nextRequest();
      const run = await runCli([...args, '--url', silentUrl, '--wait', '0.05'], env);
      expect(run).toEqual({ code: 1, stdout: '', stderr: `svc-connect ${args[0] ?? ''}: sent the request to ${silentUrl}, but no answer came within 0.05 s: ${CHECK}\n` });
      await request;
      expect(await runCli([...args, '--url', closedUrl], env)).toEqual({ code: 1, stdout: '', stderr: `svc-connect ${args[0] ?? ''}: cannot reach ${closedUrl} (ECONNREFUSED)\n` });
    }
  });

  it('attack: a --wait that is no positive number of seconds up to a day (a timer beyond it would fire at once) is a usage error, and nothing is sent', async () => {
    const before = heard.length;
    for (const wait of ['0', '-1', 'soon', '86401', '1e9', '0x10', 'Infinity']) {
      const run = await runCli(['subjects', 'revoke', 'her-sub', '--url', silentUrl, `--wait=${wait}`], env);
      expect({ wait, code: run.code }).toEqual({ wait, code: 2 });
      expect(run.stderr).toContain(`--wait: "${wait}" is not a number of seconds more than 0 and at most 86400`);
    }
    expect(heard.length).toBe(before);
  });
});

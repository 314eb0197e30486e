import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import Koa from 'koa';

import { startApp, type RunningApp } from '../helpers/app.js';
import { freePort, PROCESS_MS, startServerProcess, untilOutput, waitFor } from '../helpers/processes.js';

jest.setTimeout(PROCESS_MS);

const OPERATIONAL = ['/healthz', '/readyz', '/metrics'];

describe('svc.ops.port: health and metrics on an operations listener of their own', () => {
  let running: RunningApp;
  let ops: Server;
  let opsUrl: string;

  beforeAll(async () => {
    running = await startApp({ properties: { 'svc.ops.port': 9000, 'svc.metrics.enabled': true } });
    const koa = new Koa().use(running.app.svc.operations);
    const handle = koa.callback();
    ops = createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => ops.listen(0, '127.0.0.1', resolve));
    opsUrl = `http://127.0.0.1:${(ops.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    ops.close();
    await running.close();
  });

  it.each(OPERATIONAL.flatMap((path) => [path, path.toUpperCase(), `${path}/`, `/oidc/v1${path}`]))('answers 404 for %s on the public listener, GET and HEAD', async (path) => {
    for (const method of ['GET', 'HEAD']) expect([method, (await fetch(`${running.baseUrl}${path}`, { method })).status]).toEqual([method, 404]);
  });

  it('serves them on the operations listener', async () => {
    const health = await fetch(`${opsUrl}/healthz`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    expect((await fetch(`${opsUrl}/readyz`)).status).toBe(200);
    const metrics = await fetch(`${opsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('# TYPE');
  });

  it('keeps the provider and the operator API on the public listener, and nothing else on the operations one', async () => {
    expect((await fetch(`${running.issuer}/.well-known/openid-configuration`)).status).toBe(200);
    expect((await fetch(`${running.issuer}/management/clients`)).status).toBe(401);
    expect((await fetch(`${opsUrl}/oidc/v1/.well-known/openid-configuration`)).status).toBe(404);
  });
});

describe('the bundled server with svc.ops.port', () => {
  it('listens on both, answers health only on the operations port, and closes both on SIGTERM', async () => {
    const [port, opsPort] = [await freePort(), await freePort()];
    const server = startServerProcess({ PORT: String(port), SVC_OPS_PORT: String(opsPort) });
    try {
      await waitFor(`http://127.0.0.1:${opsPort}/healthz`);
      await waitFor(`http://127.0.0.1:${port}/oidc/v1/.well-known/openid-configuration`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(404);
      expect(await untilOutput(() => server.output(), /"event":"operations_listening"/)).toMatch(/"event":"operations_listening","host":"127.0.0.1","port":\d+/);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      await expect(fetch(`http://127.0.0.1:${opsPort}/healthz`)).rejects.toThrow();
    } finally {
      await server.stop();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import type { Logger } from '../../lib/index.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';

describe('an embedder logger that throws (a full disk, a broken transport)', () => {
  const client = confidentialClient({ subject_type: 'public' });
  const thrown: string[] = [];
  let failing = false;
  const fail = (event: string): void => {
    if (!failing) return;
    thrown.push(event);
    throw new Error(`log write failed: ${event}`);
  };
  const logger: Logger = { info: fail, warn: fail, error: fail };
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ clients: [client], logger });
    failing = true;
  });
  afterAll(async () => {
    failing = false;
    await running.close();
  });

  it('loses its lines, never the answers: health, an unknown path, a refused token request, a whole code flow', async () => {
    expect((await fetch(`${running.baseUrl}/healthz`)).status).toBe(200);
    const unknown = await fetch(`${running.baseUrl}/no-such-page`);
    expect([unknown.status, ((await unknown.json()) as { error: string }).error]).toEqual([404, 'not_found']);
    const token = await fetch(`${running.issuer}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=x' });
    expect([token.status, ((await token.json()) as { error: string }).error]).toEqual([400, 'invalid_request']);
    expect((await runCodeFlow(running.issuer, client)).claims.sub).toBe('demo-0001');
    expect(thrown).toEqual(expect.arrayContaining(['request']));
    expect((await fetch(`${running.baseUrl}/healthz`)).status).toBe(200);
  });
});

describe('an embedder logger whose methods are async (a network transport) and reject', () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown): void => void unhandled.push(reason);
  let rejecting = false;
  const lost: string[] = [];
  const write = async (event: string): Promise<void> => {
    if (!rejecting) return;
    lost.push(event);
    throw new Error(`transport down: ${event}`);
  };
  // An async function fits Logger's void methods, so an embedder's TypeScript accepts it.
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the embedder's logger under test
  const logger: Logger = { info: write, warn: write, error: write };
  let running: RunningApp;

  beforeAll(async () => {
    process.on('unhandledRejection', record);
    running = await startApp({ logger });
    rejecting = true;
  });
  afterAll(async () => {
    rejecting = false;
    await running.close();
    process.off('unhandledRejection', record);
  });

  it('loses its lines, never the process: no rejection is left unhandled (Node ends the process on one)', async () => {
    expect((await fetch(`${running.baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${running.baseUrl}/no-such-page`)).status).toBe(404);
    // Lets the rejections of the turn be judged handled or not.
    await new Promise((resolve) => setImmediate(resolve));
    expect(lost).toEqual(expect.arrayContaining(['request']));
    expect(unhandled).toEqual([]);
  });
});

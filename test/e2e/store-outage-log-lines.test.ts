import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';

import { REPEATS_SUMMARISED_MS } from '../../lib/observability/repeated-failures.js';
import { clockAhead } from '../helpers/clock.js';
import { codeFlowUrl } from '../helpers/flow.js';

import { capturingLogger } from '../helpers/logs.js';
import { confidentialClient, startApp } from '../helpers/app.js';
import { startOwnRedis } from '../helpers/redis.js';
import { tokenAttempt } from '../helpers/redis-fault-app.js';

/** The lines a failed request writes besides its `request` line: what an outage repeats for every request. */
const FAILURE_EVENTS = new Set(['server_error', 'request_failed', 'request_refused']);

describe('Redis away: the log lines a flood of failing requests writes', () => {
  it('attack: 40 token requests and 10 /readyz polls while Redis is down write each kind of failure once and then its count, not a line each; honest: the first of each kind is written whole, with its request id, and every failed request is counted', async () => {
    const redis = await startOwnRedis();
    const { logger, lines } = capturingLogger();
    const running = await startApp({ logger, clients: [confidentialClient()], properties: { 'svc.redis.url': redis.url } });
    try {
      expect(await tokenAttempt(running.issuer)).toMatchObject({ status: 400 });
      lines.length = 0;
      redis.stop();
      // A flood: side by side, as many clients send them.
      const tokens = await Promise.all(Array.from({ length: 40 }, () => tokenAttempt(running.issuer)));
      expect(tokens.map(({ status, error }) => `${status} ${error}`)).toEqual(Array(40).fill('503 server_error'));
      const polls = await Promise.all(Array.from({ length: 10 }, async () => (await fetch(`${running.baseUrl}/readyz`)).status));
      expect(polls).toEqual(Array(10).fill(503));
      redis.start();
      // Polled until the store answers; only the test's timeout bounds the wait.
      while ((await fetch(`${running.baseUrl}/readyz`)).status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await running.close();
      redis.dispose();
    }
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const failed = parsed.filter((l) => l.e === 'request' && l.status === 503).length;
    const failures = parsed.filter((l) => FAILURE_EVENTS.has(String(l.e)) && !(l.e === 'request_refused' && Number(l.status) < 500));
    const kindOf = (l: Record<string, unknown>): string => JSON.stringify({ ...l, request_id: undefined, repeated: undefined });
    const kinds = new Set(failures.map(kindOf));
    const recoveries = parsed.filter((l) => l.e === 'store_recovered').length;
    // Every failed request is accounted for: a line of its own, or counted in a later line of its kind.
    expect(failures.reduce((sum, l) => sum + (typeof l.repeated === 'number' ? l.repeated : 1), 0)).toBe(failed);
    expect(failed).toBeGreaterThanOrEqual(50);
    // Each kind: its first line whole (with the request's id), then at most one count per outage (at its end or at close).
    for (const kind of kinds) {
      const ofKind = failures.filter((l) => kindOf(l) === kind);
      expect({ kind, first: ofKind[0]?.request_id !== undefined && ofKind[0]?.repeated === undefined }).toEqual({ kind, first: true });
      expect({ kind, lines: ofKind.length <= 2 * (recoveries + 1) }).toEqual({ kind, lines: true });
    }
  });

  it('honest: failures that end without store_recovered (a Redis demoted to a replica, answering READONLY while up) have their count written a minute later at the next line of any kind, not held until the app closes', async () => {
    const redis = await startOwnRedis();
    const { logger, lines } = capturingLogger();
    const client = confidentialClient();
    const running = await startApp({ logger, clients: [client], properties: { 'svc.redis.url': redis.url } });
    const admin = new Redis(redis.url);
    const parsed = (): Record<string, unknown>[] => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    let clock: { restore(): void } | undefined;
    try {
      // A failover demotes it: it answers every write with READONLY, its connection up.
      await admin.call('REPLICAOF', '127.0.0.1', '1');
      const sent = await Promise.all(Array.from({ length: 5 }, async () => (await fetch(codeFlowUrl(running.issuer, client), { redirect: 'manual' })).status));
      expect(sent).toEqual(Array(5).fill(503));
      await admin.call('REPLICAOF', 'NO', 'ONE');
      expect((await fetch(codeFlowUrl(running.issuer, client), { redirect: 'manual' })).status).toBe(303);
      clock = clockAhead(REPEATS_SUMMARISED_MS);
      expect((await fetch(`${running.baseUrl}/healthz`)).status).toBe(200);
      const failures = parsed().filter((l) => l.e === 'request_failed');
      expect(failures.map((l) => [l.cause_code, l.request_id === undefined ? 'count' : 'whole', l.repeated])).toEqual([['READONLY', 'whole', undefined], ['READONLY', 'count', 4]]);
      expect(parsed().filter((l) => l.e === 'store_recovered')).toEqual([]);
    } finally {
      clock?.restore();
      admin.disconnect();
      await running.close();
      redis.dispose();
    }
  });
});

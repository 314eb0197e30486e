import { describe, expect, it } from '@jest/globals';

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
});

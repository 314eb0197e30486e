import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { authorizationUrl, FormBrowser, pkcePair, redeemCode } from '../helpers/flow.js';
import { startOwnCluster, startOwnRedis, type OwnCluster, type OwnRedis } from '../helpers/redis.js';

const client = confidentialClient();
const REDIRECT = (client.redirect_uris as string[])[0] as string;

interface Sample {
  at: number;
  ms: number;
  status: number;
  what: string;
  /** The OAuth error of a redirect back to the client, if any. */
  error?: string;
}

/** A clean "store unavailable" answer: 503 JSON/page, or `server_error` redirected to the client. */
const storeDown = (s: Sample): boolean => s.status === 503 || s.error === 'server_error';

/** Steady load: complete flows by 4 workers, every HTTP request timed; a flow that fails just ends. */
function steadyLoad(running: RunningApp): { samples: Sample[]; flowsOkAfter(t: number): number; stop(): Promise<void> } {
  const samples: Sample[] = [];
  const completed: number[] = [];
  let stopped = false;
  const timed = async (what: string, call: () => Promise<Response>): Promise<Response> => {
    const at = Date.now();
    const response = await call();
    samples.push({ at, ms: Date.now() - at, status: response.status, what });
    return response;
  };
  const flow = async (): Promise<void> => {
    const browser = new FormBrowser();
    const { verifier, challenge } = pkcePair();
    let url = authorizationUrl(running.issuer, { client_id: client.client_id, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' });
    let init: RequestInit | undefined;
    for (let hop = 0; hop < 12; hop += 1) {
      const response = await timed('authorization', () => browser.request(url, init));
      const location = response.headers.get('location');
      if (location?.startsWith(REDIRECT)) {
        const back = new URL(location).searchParams;
        const last = samples[samples.length - 1];
        if (last && back.get('error')) last.error = back.get('error') ?? undefined;
        const code = back.get('code');
        if (!code) return;
        const tokenAt = Date.now();
        const token = await redeemCode(running.issuer, client, code, verifier);
        samples.push({ at: tokenAt, ms: Date.now() - tokenAt, status: token.status, what: 'token' });
        if (token.status !== 200) return;
        const info = await timed('userinfo', () => fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${String(token.body.access_token)}` } }));
        if (info.status === 200) completed.push(Date.now());
        await info.arrayBuffer();
        return;
      }
      if (location) {
        await response.arrayBuffer();
        url = new URL(location, url).href;
        init = undefined;
        continue;
      }
      const html = await response.text();
      const form = /<form[^>]*id="(login-form|consent-allow)"[^>]*action="([^"]+)"/.exec(html);
      if (response.status !== 200 || !form?.[2]) return;
      url = new URL(form[2], url).href;
      init = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form[1] === 'login-form' ? 'login=demo&password=demo' : '' };
    }
  };
  const workers = Array.from({ length: 4 }, async () => {
    while (!stopped) {
      try {
        await flow();
      } catch (err) {
        samples.push({ at: Date.now(), ms: 0, status: 0, what: `thrown ${err instanceof Error ? err.message : String(err)}` });
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  });
  return {
    samples,
    flowsOkAfter: (t) => completed.filter((c) => c > t).length,
    async stop() {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

/**
 * The load signs in as one name from one address, four at a time. A reservation whose answer was
 * lost in the outage (sent as the node went away, or from ioredis's queue when it came back) stays
 * counted by design, and the default threshold of 5 cannot hold four sign-ins in flight plus one
 * or two of those; 20 leaves room for them, so a 429 here means the outage was counted as guesses
 * at large. The exact accounting under faults (what is given back, what stays, nothing twice) is
 * asserted in test/integration/login-throttle-faults.test.ts.
 */
const LOAD_THROTTLE = { 'svc.login.lockout-threshold': 20 };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) return Number.POSITIVE_INFINITY;
    await sleep(50);
  }
  return Date.now() - started;
}

/** The answers given since `t`, counted by what, status and error, with the first time each was seen. */
function answersSince(samples: Sample[], t: number): Record<string, string> {
  const seen: Record<string, string> = {};
  for (const s of samples.filter((sample) => sample.at >= t)) {
    const key = `${s.what} ${String(s.status)}${s.error ? ` ${s.error}` : ''}`;
    seen[key] ??= `first at +${String(s.at - t)} ms`;
  }
  return seen;
}

function expectOnlyFastCleanAnswers(samples: Sample[]): void {
  const slow = samples.filter((s) => s.ms >= 3000);
  const broken = samples.filter((s) => s.status >= 500 && s.status !== 503);
  // An outage is not a wrong password: no sign-in may be throttled because of it.
  const throttled = samples.filter((s) => s.status === 429);
  expect({ requests: samples.length > 50, slow: slow.slice(0, 3), broken: broken.slice(0, 3), throttled: throttled.slice(0, 3) }).toEqual({ requests: true, slow: [], broken: [], throttled: [] });
}

describe('store faults under a steady load of flows', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };
  beforeAll(() => {
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  describe('Redis standalone stopped and started again', () => {
    let redis: OwnRedis;
    let running: RunningApp;
    beforeAll(async () => {
      redis = await startOwnRedis();
      running = await startApp({ clients: [client], properties: { 'svc.redis.url': redis.url, 'svc.redis.operation-timeout-ms': 800, ...LOAD_THROTTLE } });
    });
    afterAll(async () => {
      await running.close();
      redis.dispose();
    });

    it('answers every request within 3 s (503 while down), and flows succeed again within 5 s of the restart', async () => {
      const load = steadyLoad(running);
      await sleep(1500);
      expect(load.flowsOkAfter(0)).toBeGreaterThan(0);
      redis.stop();
      const down = Date.now();
      await sleep(4000);
      expect(load.samples.filter((s) => s.at > down + 500 && storeDown(s)).length).toBeGreaterThan(0);
      redis.start();
      const back = Date.now();
      const recovery = await waitUntil(() => load.flowsOkAfter(back) > 0, 10_000);
      await load.stop();
      expect(recovery).toBeLessThan(5000);
      expectOnlyFastCleanAnswers(load.samples);
      expect((await fetch(`${running.baseUrl}/readyz`)).status).toBe(200);
      expect(unhandled).toEqual([]);
    }, 60_000);
  });

  describe('a Redis Cluster master stopped and started again', () => {
    let cluster: OwnCluster;
    let running: RunningApp;
    beforeAll(async () => {
      cluster = await startOwnCluster();
      running = await startApp({ clients: [client], properties: { 'svc.redis.cluster-nodes': cluster.nodes.map((n) => `${n.host}:${n.port}`).join(','), 'svc.redis.operation-timeout-ms': 800, ...LOAD_THROTTLE } });
    }, 30_000);
    afterAll(async () => {
      await running.close();
      cluster.dispose();
    });

    it('answers every request within 3 s while a master is away, and flows succeed again within 5 s of its return', async () => {
      const load = steadyLoad(running);
      await sleep(1500);
      expect(load.flowsOkAfter(0)).toBeGreaterThan(0);
      cluster.stopNode(1);
      const down = Date.now();
      await sleep(4000);
      expect(load.samples.filter((s) => s.at > down + 500 && storeDown(s)).length).toBeGreaterThan(0);
      cluster.startNode(1);
      const back = Date.now();
      const recovery = await waitUntil(() => load.flowsOkAfter(back) > 0, 15_000);
      const cluster_ = cluster.describe();
      await load.stop();
      // On a failure, say what the flows answered after the return and how each node saw the cluster.
      expect({ recovery: recovery < 5000 ? 'within 5 s' : recovery, ...(recovery < 5000 ? {} : { cluster: cluster_, answers: answersSince(load.samples, back) }) }).toEqual({ recovery: 'within 5 s' });
      expectOnlyFastCleanAnswers(load.samples);
      expect(unhandled).toEqual([]);
    }, 90_000);
  });

  describe('a Redis Cluster master failing over to its replica', () => {
    let cluster: OwnCluster;
    let running: RunningApp;
    beforeAll(async () => {
      cluster = await startOwnCluster({ replicas: true });
      running = await startApp({ clients: [client], properties: { 'svc.redis.cluster-nodes': cluster.nodes.map((n) => `${n.host}:${n.port}`).join(','), 'svc.redis.operation-timeout-ms': 800, ...LOAD_THROTTLE } });
    }, 60_000);
    afterAll(async () => {
      await running.close();
      cluster.dispose();
    });

    // Nothing whose connection closed is sent again (retryDelayOnFailover 0): the store still finds the promoted replica
    // by itself, without a restart.
    it('answers every request within 3 s while the replica takes over, flows succeed again within 5 s of its promotion, and keep succeeding without a restart', async () => {
      const load = steadyLoad(running);
      await sleep(1500);
      expect(load.flowsOkAfter(0)).toBeGreaterThan(0);
      cluster.stopNode(1);
      const promotion = await waitUntil(() => cluster.roleOf(4) === 'master', 20_000);
      const promoted = Date.now();
      const recovery = await waitUntil(() => load.flowsOkAfter(promoted) > 0, 15_000);
      // Settled: once flows succeed again, a while of load in which none fails for the store.
      await sleep(1000);
      const settled = Date.now();
      await sleep(3000);
      const cluster_ = cluster.describe();
      await load.stop();
      const failedSettled = load.samples.filter((s) => s.at >= settled && storeDown(s)).length;
      expect({ promotion: promotion < 20_000, recovery: recovery < 5000 ? 'within 5 s' : recovery, failedSettled, ...(recovery < 5000 ? {} : { cluster: cluster_, answers: answersSince(load.samples, promoted) }) }).toEqual({ promotion: true, recovery: 'within 5 s', failedSettled: 0 });
      expectOnlyFastCleanAnswers(load.samples);
      expect((await fetch(`${running.baseUrl}/readyz`)).status).toBe(200);
      expect(unhandled).toEqual([]);
    }, 120_000);
  });
});

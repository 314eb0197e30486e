import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';

import { REPEATS_SUMMARISED_MS, summariseRepeatedFailures } from '../../lib/observability/repeated-failures.js';
import { clockAt } from '../helpers/clock.js';
import { capturingLogger } from '../helpers/logs.js';

const STORE_DOWN = { name: 'StoreUnavailableError', code: 'SVC_STORE_UNAVAILABLE', cause_code: 'ECONNREFUSED', cause: 'connect ECONNREFUSED 127.0.0.1:6379', host: '127.0.0.1', port: 6379 };

describe('summariseRepeatedFailures: a failure repeated by every request is written once, then counted', () => {
  const T0 = Date.UTC(2026, 0, 1);
  let clock: ReturnType<typeof clockAt>;
  beforeEach(() => void (clock = clockAt(T0)));
  afterEach(() => clock.restore());

  const setUp = () => {
    const { logger, lines } = capturingLogger();
    return { logger: summariseRepeatedFailures(logger), lines: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
  };

  it('attack: 1000 requests failing alike write the first whole and one count a minute, not 1000 lines; honest: every one is counted', () => {
    const { logger, lines } = setUp();
    for (let i = 0; i < 1000; i += 1) {
      logger.error('server_error', { request_id: `r${i}`, ...STORE_DOWN });
      // 200 requests a minute.
      clock.set(T0 + ((i + 1) * REPEATS_SUMMARISED_MS) / 200);
    }
    logger.flush?.();
    const written = lines();
    expect(written[0]).toEqual({ e: 'server_error', request_id: 'r0', ...STORE_DOWN });
    expect(written.length).toBe(6);
    expect(written.slice(1).every((l) => l.request_id === undefined && typeof l.repeated === 'number')).toBe(true);
    expect(written.reduce((sum, l) => sum + ((l.repeated as number | undefined) ?? 1), 0)).toBe(1000);
  });

  it('honest: a new kind of store failure (another cause, host, event) is written whole at once, between repeats of another; any other failure, a line a request', () => {
    const { logger, lines } = setUp();
    logger.error('server_error', { request_id: 'a', ...STORE_DOWN });
    logger.error('server_error', { request_id: 'b', ...STORE_DOWN });
    logger.error('server_error', { request_id: 'c', ...STORE_DOWN, cause_code: undefined, cause: 'store operation timed out' });
    logger.error('server_error', { request_id: 'd', ...STORE_DOWN, host: '10.0.0.2' });
    logger.error('request_failed', { request_id: 'e', status: 503, ...STORE_DOWN });
    logger.warn('request_refused', { request_id: 'f', status: 503, error: 'store_unavailable' });
    for (const id of ['g', 'h']) logger.error('server_error', { request_id: id, name: 'ClaimModuleError', code: 'SVC_CLAIM_MODULE_FAILED', plugin: 'hr', cause_name: 'Error' });
    expect(lines().map((l) => l.request_id)).toEqual(['a', 'c', 'd', 'e', 'f', 'g', 'h']);
  });

  it('honest: the store recovering writes the counts and forgets: the next outage is written whole again', () => {
    const { logger, lines } = setUp();
    for (const id of ['a', 'b', 'c']) logger.error('server_error', { request_id: id, ...STORE_DOWN });
    logger.warn('request_refused', { request_id: 'p', status: 503, error: 'store_unavailable' });
    logger.info('store_recovered', { store: 'redis' });
    logger.error('server_error', { request_id: 'z', ...STORE_DOWN });
    expect(lines()).toEqual([
      { e: 'server_error', request_id: 'a', ...STORE_DOWN },
      { e: 'request_refused', request_id: 'p', status: 503, error: 'store_unavailable' },
      { e: 'store_recovered', store: 'redis' },
      { e: 'server_error', ...STORE_DOWN, repeated: 2 },
      { e: 'server_error', request_id: 'z', ...STORE_DOWN },
    ]);
  });

  it('honest: a kind quiet for a minute is written whole again, with its request id; other lines pass as they are', () => {
    const { logger, lines } = setUp();
    logger.error('server_error', { request_id: 'a', ...STORE_DOWN });
    clock.set(T0 + REPEATS_SUMMARISED_MS);
    logger.error('server_error', { request_id: 'b', ...STORE_DOWN });
    for (const id of ['x', 'y']) logger.warn('login_throttled', { request_id: id, locked: 'name', retry_after: 60 });
    for (const id of ['m', 'n']) logger.info('request_refused', { request_id: id, status: 404, error: 'not_found' });
    expect(lines().map((l) => `${String(l.e)} ${String(l.request_id)}`)).toEqual(['server_error a', 'server_error b', 'login_throttled x', 'login_throttled y', 'request_refused m', 'request_refused n']);
  });

  it('attack: failures of ever new kinds are never hidden: beyond the kinds followed each is written whole', () => {
    const { logger, lines } = setUp();
    for (let i = 0; i < 200; i += 1) logger.error('server_error', { request_id: `r${i}`, ...STORE_DOWN, port: i });
    expect(lines().length).toBe(200);
  });
});

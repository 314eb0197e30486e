import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';

import { unfailingLogger, type Logger } from '../../lib/logger.js';

describe('unfailingLogger: a line the embedder logger fails on is lost, never the process', () => {
  const unhandled: unknown[] = [];
  const record = (reason: unknown): void => void unhandled.push(reason);
  beforeEach(() => {
    unhandled.length = 0;
    process.on('unhandledRejection', record);
  });
  afterEach(() => {
    process.off('unhandledRejection', record);
    jest.restoreAllMocks();
  });
  /** Lets the rejections of a turn be judged handled or not. */
  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

  it('attack: a logger whose methods are async (a network transport) and reject does not leave an unhandled rejection, which ends the process', async () => {
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const reject = async (): Promise<void> => Promise.reject(new Error('transport down'));
    // An async function fits Logger's void methods, so an embedder's TypeScript accepts it (the lint rule is ours, not theirs).
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the embedder's logger under test
    const asyncLogger: Logger = { info: reject, warn: reject, error: reject, flush: reject };
    const logger = unfailingLogger(asyncLogger);
    logger.info('request', { status: 200 });
    logger.warn('unsafe_default');
    logger.error('server_error');
    logger.flush?.();
    await settle();
    expect(unhandled).toEqual([]);
    expect(stderr.mock.calls.map(([line]) => line)).toEqual(['log line lost: request\n', 'log line lost: unsafe_default\n', 'log line lost: server_error\n', 'log line lost: flush\n']);
  });

  it('honest: a logger that writes passes each line on once, fields as given', () => {
    const lines: unknown[] = [];
    const logger = unfailingLogger({ info: (e, f) => void lines.push(['info', e, f]), warn: (e, f) => void lines.push(['warn', e, f]), error: (e, f) => void lines.push(['error', e, f]) });
    logger.info('a', { n: 1 });
    logger.warn('b');
    logger.error('c', { x: 'y' });
    expect(lines).toEqual([['info', 'a', { n: 1 }], ['warn', 'b', undefined], ['error', 'c', { x: 'y' }]]);
    expect('flush' in logger).toBe(false);
  });
});

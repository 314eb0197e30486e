import { pino, type Logger as Pino, type Level } from 'pino';

import type { LogFields, Logger } from '../logger.js';

/** Log levels accepted by `svc.log.level`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * A {@link Logger} on pino: one JSON line per event (`{"level","time","event",…fields,"msg"}`),
 * written to `destination` (default stdout) at `level` and above. Writes are asynchronous and
 * buffered (pino's default; `sync: true` writes each line at once); `flush()` writes what is buffered.
 */
export function createPinoLogger(
  options: { level?: (typeof LOG_LEVELS)[number]; destination?: number | string; sync?: boolean } = {},
): Logger & { pino: Pino } {
  const destination = pino.destination({ dest: options.destination ?? 1, sync: options.sync ?? false, minLength: options.sync ? 0 : 4096 });
  const instance = pino(
    { level: options.level ?? 'info', base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
    destination,
  );
  const flush = (): void => {
    try {
      destination.flushSync();
    } catch {
      // not open yet: nothing buffered
    }
  };
  const at = (level: Level, urgent: boolean) => (event: string, fields?: LogFields) => {
    instance[level]({ event, ...fields }, event);
    // Warnings and errors are rare and must be seen at once; request lines may wait in the buffer.
    if (urgent) flush();
  };
  // An exiting process writes what is still buffered.
  process.once('exit', flush);
  return { pino: instance, info: at('info', false), warn: at('warn', true), error: at('error', true), flush };
}

import { pino, type Logger as Pino, type Level } from 'pino';

import type { LogFields, Logger } from '../logger.js';

/** Log levels accepted by `svc.log.level`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * A {@link Logger} on pino: one JSON line per event (`{"level","time","event",…fields,"msg"}`),
 * written synchronously to `destination` (default stdout) at `level` and above.
 */
export function createPinoLogger(options: { level?: (typeof LOG_LEVELS)[number]; destination?: number | string } = {}): Logger & { pino: Pino } {
  const instance = pino(
    { level: options.level ?? 'info', base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
    pino.destination({ dest: options.destination ?? 1, sync: true }),
  );
  const at = (level: Level) => (event: string, fields?: LogFields) => instance[level]({ event, ...fields }, event);
  return { pino: instance, info: at('info'), warn: at('warn'), error: at('error') };
}

/** Fields of a log line. Never put a token, secret or user claim value here. */
export type LogFields = Record<string, string | number | boolean | undefined>;

/**
 * The logging contract of svc-connect: one structured line per event. Embedders pass their own
 * (pino, winston, …) through the factory options; the default writes JSON lines to stderr.
 */
export interface Logger {
  /** Routine events (listening, registrations). */
  info(event: string, fields?: LogFields): void;
  /** Unsafe configuration and recoverable faults. */
  warn(event: string, fields?: LogFields): void;
  /** Faults that failed a request. */
  error(event: string, fields?: LogFields): void;
  /** Writes out buffered lines (called when the app closes). */
  flush?(): void;
}

/** A logger that drops everything (tests that assert on logs pass a capturing one instead). */
export const silentLogger: Logger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** Log levels accepted by `svc.log.level`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** A log level of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

import { isatty } from 'node:tty';

import { pino, type Logger as Pino, type Level } from 'pino';

import type { LogFields, Logger, LogLevel } from '../logger.js';
import { terminalText } from '../terminal-text.js';
import { prettyLine } from './pretty.js';

/** Log line formats accepted by `svc.log.format`. */
export type LogFormat = 'pretty' | 'json';

type Destination = ReturnType<typeof pino.destination>;

/** The buffered destinations of this thread's loggers, written by one exit listener; a logger nobody holds is let go. */
const buffered = new Set<WeakRef<Destination>>();
const letGo = new FinalizationRegistry<WeakRef<Destination>>((ref) => buffered.delete(ref));
let listening = false;

function writeAtExit(destination: Destination): void {
  if (!listening) process.once('exit', () => buffered.forEach((ref) => ref.deref()?.flush()));
  listening = true;
  const ref = new WeakRef(destination);
  buffered.add(ref);
  letGo.register(destination, ref);
}

/**
 * A {@link Logger} on pino: one JSON line per event, or with `format: "pretty"` one readable line, written
 * to `destination` (default stdout) at `level` and above; buffered unless `sync`, written
 * within a second, warnings at once, the rest at exit, `flush()` writes the buffer. A destination that fails (a pipe
 * whose reader left, a terminal that hung up) gets no more lines: neither the process blocks on it nor it crashes.
 */
export function createPinoLogger(
  options: { level?: LogLevel; destination?: number | string; sync?: boolean; format?: LogFormat } = {},
): Logger & { pino: Pino } {
  const dest = options.destination ?? 1;
  const sync = options.sync ?? false;
  // Routine lines wait for 4 KiB of company, at most a second: a quiet server's audit line still reaches the journal.
  // Each write is a write(2) that reports its failure; sonic-boom's asynchronous mode would need flushSync() for a
  // warning and at exit, which retries a failed write for ever (a closed pipe: EPIPE, a hung-up terminal: EIO).
  const destination = pino.destination({ dest, sync: true, minLength: sync ? 0 : 4096, periodicFlush: sync ? 0 : 1000 });
  let failed = false;
  destination.on('error', () => void (failed = true));
  if (!sync) writeAtExit(destination);
  const colour = typeof dest === 'number' && isatty(dest);
  // JSON lines too reach terminals (docker logs, journalctl, tail): what JSON leaves raw is written \uXXXX, the same value.
  const stream = { write: (line: string) => void (failed || destination.write(options.format === 'pretty' ? prettyLine(line, colour) : terminalText(line, '\n'))) };
  const instance = pino(
    { level: options.level ?? 'info', base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label) => ({ level: label }) } },
    stream,
  );
  const flush = (): void => {
    if (!failed) destination.flush();
  };
  const at = (level: Level, urgent: boolean) => (event: string, fields?: LogFields) => {
    instance[level]({ event, ...fields }, event);
    // Warnings and errors are rare and must be seen at once; request lines may wait in the buffer.
    if (urgent) flush();
  };
  return { pino: instance, info: at('info', false), warn: at('warn', true), error: at('error', true), flush };
}

/** The log format when `svc.log.format` is unset: `pretty` on a terminal outside production, else `json`. */
export function defaultLogFormat(production: boolean, fd = 1): LogFormat {
  return !production && isatty(fd) ? 'pretty' : 'json';
}

/** `svc.log.level` and `svc.log.format`. */
export interface LogSettings {
  level: LogLevel;
  format?: LogFormat;
}

/**
 * The logger `svc.log.*` asks for on stdout; an unset format is {@link defaultLogFormat}'s.
 * @throws TypeError when given the whole Settings instead of `settings.log`.
 */
export function createSettingsLogger(log: LogSettings, production: boolean): Logger & { pino: Pino } {
  if ('log' in log) throw new TypeError('createSettingsLogger takes settings.log and settings.production, not the whole Settings');
  return createPinoLogger({ level: log.level, format: log.format ?? defaultLogFormat(production) });
}

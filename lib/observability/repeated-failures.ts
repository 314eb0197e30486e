import { StoreUnavailableError } from '../errors.js';
import type { LogFields, Logger } from '../logger.js';

/** The warnings and errors a failed request writes besides its `request` line. */
const PER_REQUEST_FAILURES: ReadonlySet<string> = new Set(['server_error', 'request_failed', 'request_refused']);

/** A per-request failure line saying the store did not answer: while it is away, every request repeats it. */
const storeAway = (event: string, fields?: LogFields): boolean =>
  PER_REQUEST_FAILURES.has(event) && (fields?.code === StoreUnavailableError.code || fields?.error === 'store_unavailable');

/** How long a kind of failure's repeats are only counted before a line carries their count. */
export const REPEATS_SUMMARISED_MS = 60_000;

/** Kinds followed at once; beyond them a failure is written whole (never hidden). */
const KINDS_FOLLOWED = 64;

interface Kind {
  level: 'warn' | 'error';
  event: string;
  fields: LogFields;
  /** Repeats not written since the kind's last line. */
  repeats: number;
  lineAt: number;
}

/**
 * `logger` writing a per-request failure line of the store being away ({@link storeAway}) once per kind (every field
 * alike but the `request_id`: another cause, host or event is another kind, written whole at once). Its repeats are
 * counted, and the count written as the kind's line with `repeated` (no `request_id`) at the first line of any event
 * {@link REPEATS_SUMMARISED_MS} after the kind's last line (a Redis answering READONLY while up ends its failures with no
 * `store_recovered`), when the store recovers (`store_recovered`, which also forgets every kind) and at `flush`. No
 * timer: nothing keeps the process alive.
 */
export function summariseRepeatedFailures(logger: Logger): Logger {
  const kinds = new Map<string, Kind>();
  const due = (kind: Kind): boolean => Date.now() - kind.lineAt >= REPEATS_SUMMARISED_MS;
  const summarise = (kind: Kind): void => {
    if (kind.repeats > 0) logger[kind.level](kind.event, { ...kind.fields, repeated: kind.repeats });
    kind.repeats = 0;
    kind.lineAt = Date.now();
  };
  const summariseAll = (): void => {
    kinds.forEach(summarise);
    kinds.clear();
  };
  // A kind due with no repeat is let go: quiet since its last line, it is written whole again.
  const summariseDue = (): void => kinds.forEach((kind, key) => void (due(kind) && (kind.repeats > 0 ? summarise(kind) : kinds.delete(key))));
  const failure = (level: Kind['level']) => (event: string, fields?: LogFields): void => {
    summariseDue();
    if (!storeAway(event, fields)) return logger[level](event, fields);
    const { request_id: _id, ...alike } = fields ?? {};
    const key = JSON.stringify([event, alike]);
    const kind = kinds.get(key);
    if (kind) return void (kind.repeats += 1);
    logger[level](event, fields);
    // Kinds with no repeat pending owe no line: they are let go first.
    if (kinds.size >= KINDS_FOLLOWED) kinds.forEach((k, at) => k.repeats === 0 && kinds.delete(at));
    if (kinds.size < KINDS_FOLLOWED) kinds.set(key, { level, event, fields: alike, repeats: 0, lineAt: Date.now() });
  };
  return {
    info: (event, fields) => {
      summariseDue();
      logger.info(event, fields);
      if (event === 'store_recovered') summariseAll();
    },
    warn: failure('warn'),
    error: failure('error'),
    flush: () => {
      summariseAll();
      logger.flush?.();
    },
  };
}

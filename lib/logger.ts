import { clip } from './terminal-text.js';

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

/**
 * `logger` whose lines never throw (nor reject, if its methods are async): a line it fails to write is lost (its event name, no field, goes to stderr),
 * never the request it describes, nor the process (Koa's `error` listener logs too).
 */
export function unfailingLogger(logger: Logger): Logger {
  const lost = (event: string): void => void process.stderr.write(`log line lost: ${event}\n`);
  // An async method fits Logger's `void` too: its rejection, left alone, would end the process.
  const attempt = (event: string, write: () => unknown): void => {
    try {
      const written = write();
      if (typeof (written as PromiseLike<unknown> | undefined)?.then === 'function') Promise.resolve(written).catch(() => lost(event));
    } catch {
      lost(event);
    }
  };
  return {
    info: (event, fields) => attempt(event, () => logger.info(event, fields)),
    warn: (event, fields) => attempt(event, () => logger.warn(event, fields)),
    error: (event, fields) => attempt(event, () => logger.error(event, fields)),
    ...(logger.flush ? { flush: () => attempt('flush', () => logger.flush?.()) } : {}),
  };
}

/** Log levels accepted by `svc.log.level`. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** A log level of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Query parameters whose values are credentials wherever they appear in a URL. */
const SECRET_QUERY_PARAMETERS = /^(pass(word)?|pwd|secret|client_secret|token|access_token|api[-_]?key|key|auth|authorization|sig|signature)$/i;

/**
 * A URL with the password of its userinfo (`redis://:***@host:6379`) and the values of secret
 * query parameters (`?password=***`) replaced by `***`; anything else unchanged.
 */
export function redactUrlCredentials(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  if (!url.host) return text;
  const user = url.username ? `${url.username}${url.password ? ':***' : ''}@` : url.password ? ':***@' : '';
  const query = [...url.searchParams].map(([k, v]) => `${encodeURIComponent(k)}=${SECRET_QUERY_PARAMETERS.test(k) ? '***' : encodeURIComponent(v)}`).join('&');
  return `${url.protocol}//${user}${url.host}${url.pathname === '/' && !text.replace(/[?#].*$/, '').endsWith('/') ? '' : url.pathname}${query ? `?${query}` : ''}${url.hash}`;
}

/**
 * An e-mail address anywhere in a text (SMTP replies echo the recipient: `<erika@example.com>: rejected`): a local
 * part of any character an address may hold (an apostrophe too), a domain of one label or more, in Unicode too (a
 * server may echo an IDN domain decoded).
 */
const EMAIL_ADDRESS = /[^\s<>()[\]",;:@]+@([\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)*)/giu;

/** Every e-mail address in `text` reduced to its domain (`erika@example.com` → `*@example.com`). */
export function reduceEmailAddresses(text: string): string {
  return text.replace(EMAIL_ADDRESS, '*@$1');
}

/** A URL anywhere in a text, up to the next space or quote. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi;

/**
 * The message of a Redis or SMTP error as it may be logged: its first line, URL credentials and
 * e-mail addresses reduced, Redis's echo of command arguments cut off, at most 300 characters.
 */
export function safeCauseMessage(message: string): string {
  const line = (message.split('\n')[0] ?? '').replace(/,?\s*with args beginning with:.*$/i, '');
  // Addresses are reduced outside URLs only: a URL's userinfo is not an address.
  let text = '';
  let from = 0;
  for (const match of line.matchAll(URL_IN_TEXT)) {
    text += reduceEmailAddresses(line.slice(from, match.index)) + redactUrlCredentials(match[0]);
    from = match.index + match[0].length;
  }
  text += reduceEmailAddresses(line.slice(from));
  return clip(text, 300);
}

type CauseLike = Partial<Record<'message' | 'code' | 'responseCode' | 'address' | 'port' | 'errors' | 'cause' | 'lastNodeError', unknown>>;

/**
 * The log fields saying why a connection to Redis or an SMTP server failed: `cause_code`
 * (`ECONNREFUSED`, `WRONGPASS`, …), `smtp_status`, `cause` ({@link safeCauseMessage}) and
 * `host`/`port` (the error's address, else `at`), of the innermost `cause` (the first of an
 * `AggregateError`). Nothing else of the error is read: ioredis keeps the command's arguments on it.
 */
export function describeFailure(err: unknown, at?: { host?: string; port?: number }): LogFields {
  let inner = err as CauseLike | undefined;
  for (let depth = 0; depth < 5 && inner && typeof inner === 'object'; depth++) {
    // ioredis's ClusterAllFailedError keeps the last node's error apart from `cause`.
    const next = inner.cause ?? inner.lastNodeError ?? (Array.isArray(inner.errors) && !inner.message ? (inner.errors as unknown[])[0] : undefined);
    if (!next || typeof next !== 'object') break;
    inner = next;
  }
  const code = typeof inner?.code === 'string' ? inner.code : typeof inner?.message === 'string' ? /^([A-Z][A-Z_]+) /.exec(inner.message)?.[1] : undefined;
  const message = typeof inner?.message === 'string' && inner.message ? safeCauseMessage(inner.message) : inner && typeof inner !== 'object' ? safeCauseMessage(String(inner)) : undefined;
  return {
    cause_code: code,
    ...(typeof inner?.responseCode === 'number' ? { smtp_status: inner.responseCode } : {}),
    cause: message,
    host: typeof inner?.address === 'string' ? inner.address : at?.host,
    port: typeof inner?.port === 'number' && typeof inner.address === 'string' ? inner.port : at?.port,
  };
}

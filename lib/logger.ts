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

/** Query parameters whose values are credentials wherever they appear in a URL. */
const SECRET_QUERY_PARAMETERS = /^(pass(word)?|pwd|secret|client_secret|token|access_token|api[-_]?key|key|auth|authorization|sig|signature)$/i;

/**
 * A URL-shaped text with its credentials replaced by `***`: the password of its userinfo part
 * (`redis://:***@host:6379`, `smtp://user:***@host`) and the values of secret query parameters
 * (`?password=***`). Anything that is not an absolute URL is returned unchanged. For every value
 * that is printed or logged and may be a connection URL (`config check`, Redis and SMTP errors).
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

import { CliError } from '../errors.js';
import { readFileBytes } from '../user-files.js';
import { clip, terminalText } from '../terminal-text.js';
import { basicAuthorization } from '../web/basic-auth.js';
import { baseUrlFrom, call, expectAnswer, MAX_ANSWER_BYTES, failOnError, parseFlags, usageError, type AnswerShape, type CliIo, type FlagOptions, type ParsedFlags } from './common.js';

/** The flags every toolbox command takes to reach the management API. */
const CONNECTION_FLAGS = { url: { type: 'string' }, user: { type: 'string' }, 'password-file': { type: 'string' }, wait: { type: 'string' } } as const;

/** How to reach the management API, for usage texts. */
export const CONNECTION_HELP = `Connection: --url BASE_URL (default SVC_BASE_URL or http://localhost:3000), --user USER
(default SVC_MANAGEMENT_USER or admin); the password comes from --password-file FILE or
SVC_MANAGEMENT_PASSWORD, never from a flag (so it stays out of shell history). An http URL
is refused unless it names localhost or a loopback address: the password would travel in clear text.
--wait SECONDS: how long an answer is waited for once the request is sent (default 10 for a read,
300 for an action: a revoke or delete walks every session and grant). An action unanswered in time
may be done or still under way on the server: check before repeating it.`;

/** Parses a toolbox command: its `options` and the connection flags, with positionals. */
export function parseCommand<O extends FlagOptions>(argv: string[], options: O, usage: string): ParsedFlags<typeof CONNECTION_FLAGS & O> {
  return parseFlags(argv, { ...CONNECTION_FLAGS, ...options }, usage, true);
}

/** What a listing command takes (`--limit`, `--cursor`, `--all`, `--json`). */
const LIST_FLAGS = { limit: { type: 'string' }, cursor: { type: 'string' }, all: { type: 'boolean' }, json: { type: 'boolean' } } as const;

/** Parses `<sub> [ID]` with the listing flags: at most one ID, none for `list` (`idName` names it in the messages). */
export function parseListCommand(argv: string[], usage: string, idName: string) {
  const { values, positionals } = parseCommand(argv, LIST_FLAGS, usage);
  const [sub, id, ...extra] = positionals;
  if (extra.length > 0) throw usageError(`unexpected arguments: ${extra.join(' ')}`, usage);
  if (sub === 'list' && id) throw usageError(`list takes no ${idName}`, usage);
  return { values, sub, id };
}

/** A connection to the management API of one provider. */
export interface ManagementConnection {
  /** `{base}/oidc/v1/management` */
  root: string;
  authorization: string;
  /** The management user the credentials name (shown when they are refused). */
  user: string;
  /** Milliseconds an answer is waited for (`--wait`); unset, the default for the method. */
  wait?: number;
}

/** The longest `--wait` in seconds, a day (Node fires a timer of more than 24.8 days at once). */
const MOST_WAIT = 86_400;

/** The connection from `--url`, `--user`, `--password-file` and the environment. */
export function connect(values: { url?: string; user?: string; 'password-file'?: string; wait?: string }, io: CliIo): ManagementConnection {
  const { 'password-file': file, wait } = values;
  const seconds = wait !== undefined && /^\d+(\.\d+)?$/.test(wait) ? Number(wait) : 0;
  if (wait !== undefined && !(seconds > 0 && seconds <= MOST_WAIT)) throw new CliError(`--wait: "${wait}" is not a number of seconds more than 0 and at most ${MOST_WAIT}`, 2);
  let password: string | undefined;
  if (file !== undefined) {
    password = readFileBytes(file, (reason) => new CliError(`--password-file: ${reason}`, 2), { maxBytes: 2 ** 16, streams: true }).toString('utf8');
  } else password = io.env.SVC_MANAGEMENT_PASSWORD;
  // Trimmed, as the server reads svc.management.password and svc.management.user from the same variables or a file.
  password = password?.trim();
  if (!password) throw new CliError('set SVC_MANAGEMENT_PASSWORD (or --password-file) to the management password', 2);
  const user = (values.user ?? io.env.SVC_MANAGEMENT_USER ?? 'admin').trim();
  return {
    root: `${baseUrlFrom(values.url, io.env)}/oidc/v1/management`,
    authorization: basicAuthorization(user, password),
    user,
    ...(wait ? { wait: seconds * 1000 } : {}),
  };
}

/**
 * One management API call; an error answer, or a success whose body is not of `shape`, becomes a CliError naming
 * what failed (exit 1). `budget`: the bytes a listing's pages share ({@link pages}).
 */
export async function request(
  connection: ManagementConnection,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  what: string,
  shape: AnswerShape,
  { form, budget }: { form?: Record<string, string>; budget?: { left: number } | undefined } = {},
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { authorization: connection.authorization, accept: 'application/json' };
  if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
  const body = form ? new URLSearchParams(form).toString() : undefined;
  const result = await call(`${connection.root}${path}`, { method, headers, body, ...(budget ? { budget } : {}), ...(connection.wait ? { wait: connection.wait } : {}) });
  failOnError(result, what, { user: connection.user });
  return expectAnswer(result.body, what, shape);
}

/** The most pages `--all` asks for: a server naming a next page every time is not asked for ever. */
const MAX_PAGES = 1000;
/** The largest page the provider gives (`limit`), which `--all` asks for unless given `--limit`. */
const LARGEST_PAGE = '500';

/**
 * Every page of a listing (`--all`: at most {@link MAX_PAGES}, of {@link MAX_ANSWER_BYTES} in all), or one page from
 * `--cursor` (and `--limit`); `key` names the list in the answer, each of whose entries must be of `entry`.
 */
export async function pages(
  connection: ManagementConnection,
  path: string,
  key: string,
  entry: AnswerShape,
  values: { limit?: string; cursor?: string; all?: boolean },
): Promise<{ items: Record<string, unknown>[]; first: Record<string, unknown>; next?: string }> {
  const what = `${key} listing`;
  const items: Record<string, unknown>[] = [];
  let cursor = values.cursor;
  let first: Record<string, unknown> | undefined;
  const followed = new Set<string>();
  const limit = values.limit ?? (values.all ? LARGEST_PAGE : undefined);
  const budget = values.all ? { left: MAX_ANSWER_BYTES } : undefined;
  for (let page = 1; ; page += 1) {
    const query = new URLSearchParams({ ...(limit ? { limit } : {}), ...(cursor ? { cursor } : {}) }).toString();
    const body = await request(connection, 'GET', `${path}${query ? `?${query}` : ''}`, what, { [key]: 'list', next_cursor: 'string?' }, { budget });
    first ??= body;
    (body[key] as unknown[]).forEach((item, i) => items.push(expectAnswer(item, what, entry, `${key}[${i}]`)));
    cursor = body.next_cursor as string | undefined;
    if (values.all !== true || !cursor) return { items, first, ...(cursor ? { next: cursor } : {}) };
    // A listing that comes back to a page it gave would be asked for ever.
    if (followed.has(cursor)) throw new CliError(`${what} failed: the answer gave the cursor ${clip(cursor, 80)} a second time`);
    if (page === MAX_PAGES) throw new CliError(`${what} failed: --all stops after ${MAX_PAGES} pages; list them page by page with --cursor`);
    followed.add(cursor);
  }
}

/** Prints rows as aligned columns under a header; a cell's line feed or tab is escaped too, so each row stays one line. */
export function table(io: CliIo, header: string[], rows: string[][]): void {
  rows = rows.map((row) => row.map((cell) => terminalText(cell)));
  const widths = header.map((h, i) => rows.reduce((widest, r) => Math.max(widest, (r[i] ?? '').length), h.length));
  const line = (cells: string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  io.out(`${[header, ...rows].map(line).join('\n')}\n`);
}

/** An epoch-seconds value as an ISO date-time (or `-`, also for a number beyond any date a server may answer). */
export function when(value: unknown): string {
  const date = new Date(typeof value === 'number' ? value * 1000 : Number.NaN);
  return Number.isNaN(date.getTime()) ? '-' : date.toISOString().replace(/\.000Z$/, 'Z');
}

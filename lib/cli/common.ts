import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

import { CliError } from '../errors.js';
import { fileErrorMessage } from '../user-files.js';
import { redactUrlCredentials } from '../logger.js';
import { isLoopbackHost, LOCALHOST_NAME } from '../net/addresses.js';
import { quoted } from '../settings/parse.js';

/** One sub-command. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(argv: string[], io: CliIo): Promise<void>;
}

/** Where a command writes (tests capture these). */
export interface CliIo {
  /** Results (stdout): what scripts read. */
  out(text: string): void;
  /** Notes for the person at the terminal (stderr); default: dropped. */
  err?(text: string): void;
  env: NodeJS.ProcessEnv;
}

/** The flags a command takes, as `parseArgs` describes them. */
export type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/** The flags of `O` as parsed, and the positionals. */
export type ParsedFlags<O extends FlagOptions> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: boolean }>>;

/** A wrong command line (exit 2): `message`, then the command's usage. */
export function usageError(message: string, usage: string): CliError {
  return new CliError(`${message}\n\n${usage}`, 2);
}

/** Thrown by {@link parseFlags} for `-h` or `--help` read as a flag: the command's help is shown, exit 0, nothing done. */
export class HelpWanted extends Error {}

/**
 * Parses flags (and, when allowed, positionals) strictly: unknown flags, missing or empty values (an unset shell variable:
 * `--out ""` would otherwise print a private key) and a single-value flag given twice are usage errors (exit 2).
 * `-h` or `--help` as a flag (after one that takes no value, `--all --help`) throws {@link HelpWanted}; as a flag's
 * value (`--client -h`) it is refused as ambiguous.
 */
export function parseFlags<O extends FlagOptions>(argv: string[], options: O, usage: string, allowPositionals = false): ParsedFlags<O> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals, tokens: true });
  } catch (err) {
    throw usageError((err as Error).message, usage);
  }
  if ((parsed.values as { help?: boolean }).help === true) throw new HelpWanted();
  const seen = new Set<string>();
  for (const token of parsed.tokens) {
    if (token.kind !== 'option' || token.value === undefined) continue;
    if (token.value === '') throw usageError(`--${token.name} is given an empty value`, usage);
    if (seen.has(token.name) && !options[token.name]?.multiple) throw usageError(`--${token.name} is given more than once`, usage);
    seen.add(token.name);
  }
  return parsed;
}

/**
 * Writes a secret file readable by its owner only; returns its absolute path. The content goes into a new file of
 * its own (mode 0600, created exclusively beside `path`) that is then renamed over `path`: a file already there
 * keeps neither its content nor its wider mode, and a symbolic link there is replaced, never followed, so a link
 * planted in a shared folder cannot route the key into a file someone else can read.
 * @throws {@link CliError} naming the absolute path and the cause (a missing folder, no permission).
 */
export function writeSecretFile(path: string, content: string): string {
  const absolute = resolve(path);
  const temporary = join(dirname(absolute), `.${basename(absolute)}.${randomBytes(6).toString('hex')}.tmp`);
  let created = false;
  try {
    writeFileSync(temporary, content, { mode: 0o600, flag: 'wx' });
    created = true;
    renameSync(temporary, absolute);
  } catch (err) {
    // Not when the exclusive create failed: a name taken already is someone else's file.
    if (created || (err as NodeJS.ErrnoException).code !== 'EEXIST') rmSync(temporary, { force: true });
    throw new CliError(fileErrorMessage('write', path, err));
  }
  return absolute;
}

/**
 * The provider's base URL from `--url` or `SVC_BASE_URL`, without a trailing slash. Every command that uses it sends a
 * credential (the management password, an initial access token), so `http` is refused off the loopback interface, and
 * any other scheme (2).
 */
export function baseUrlFrom(url: string | undefined, env: NodeJS.ProcessEnv): string {
  const value = url ?? env.SVC_BASE_URL ?? 'http://localhost:3000';
  if (!URL.canParse(value)) throw new CliError(`--url: ${quoted(value)} is not an absolute URL`, 2);
  const parsed = new URL(value);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new CliError(`--url: ${redactUrlCredentials(value)} is not an https URL`, 2);
  if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) {
    throw new CliError(`--url: ${parsed.origin} would carry the credentials in clear text; use https (http only to localhost or a loopback address)`, 2);
  }
  return parsed.href.replace(/\/+$/, '');
}

/** An HTTP answer as the commands read it: status, JSON body, and `Retry-After` when given. */
export interface CallResult {
  status: number;
  /** The answer's JSON object; for any other body, an `unexpected_response` error saying what came instead. */
  body: Record<string, unknown>;
  retryAfter?: string;
  /** The body was not a JSON object (a proxy's page, another site): never a success, whatever the status. */
  foreign?: true;
}

/** The most of an answer read, and of the pages of one `--all` listing in all: a page of 500 clients of the largest registration fits many times over. */
export const MAX_ANSWER_BYTES = 64 * 2 ** 20;

/** What a command sends. */
export interface CallInit {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** The bytes the answers of one `--all` listing may still bring, shared by its pages; otherwise one answer's own. */
  budget?: { left: number };
  /** Milliseconds the answer is waited for once the request is sent; default 10 s for a GET, 5 minutes for an action (a revoke walks every session and grant). */
  wait?: number;
}

/** How long a connection may take to open (and the request to go out). */
const CONNECT_MS = 10_000;

/**
 * Looks a name under `localhost` up as `localhost` itself (RFC 6761 6.3), which the hosts file answers: DNS, which the
 * system asks for the others, could answer with a host off the machine, and {@link baseUrlFrom} lets the credentials go
 * there in clear text. The URL, and so the `Host` header a local reverse proxy routes by, stays as given.
 */
const loopbackLookup: LookupFunction = (_hostname, options, callback) => lookup('localhost', options, callback);

/**
 * One request by node's own client (fetch cannot choose how a name is looked up); a redirect is never followed. An
 * answer beyond {@link MAX_ANSWER_BYTES}, or beyond what the `budget` of its listing has left, is cut off and refused.
 */
function send(url: URL, init: CallInit, signal: AbortSignal, onSent: () => void): Promise<{ status: number; text: string; retryAfter: string | undefined }> {
  const local = url.protocol === 'http:' && LOCALHOST_NAME.test(url.hostname);
  return new Promise((resolve, reject) => {
    const options = { method: init.method, headers: init.headers, signal, ...(local ? { lookup: loopbackLookup } : {}) };
    const sent = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, (response) => {
      const chunks: Buffer[] = [];
      const budget = init.budget ?? { left: MAX_ANSWER_BYTES };
      response.on('data', (chunk: Buffer) => {
        budget.left -= chunk.length;
        if (budget.left >= 0) return void chunks.push(chunk);
        sent.destroy();
        const most = `${MAX_ANSWER_BYTES / 2 ** 20} MiB`;
        reject(new CliError(init.budget ? `the pages of ${url.origin} come to more than ${most}; list them page by page with --cursor` : `the answer of ${url.origin} is larger than ${most}; is --url the base URL of the provider?`));
      });
      response.on('error', reject);
      response.on('end', () => {
        const retryAfter = response.headers['retry-after'];
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter });
      });
    });
    sent.on('error', reject).on('finish', onSent);
    sent.end(init.body);
  });
}

/**
 * A request with a clear error when no answer comes: "cannot reach" only when the request never went out; once sent, an
 * action (not a GET) may be done or still under way on the server, and the operator is told to check before repeating it.
 */
export async function call(url: string, init: CallInit): Promise<CallResult> {
  let answer: Awaited<ReturnType<typeof send>>;
  const { origin } = new URL(url);
  const controller = new AbortController();
  // Unreferenced: a request whose answer came before it was all sent leaves no timer holding the process.
  const abortIn = (ms: number): NodeJS.Timeout => setTimeout(() => controller.abort(), ms).unref();
  let sent = false;
  let timer = abortIn(CONNECT_MS);
  const wait = init.wait ?? (init.method === 'GET' ? 10_000 : 300_000);
  try {
    // Not followed: a redirect would carry the body (an address, a registration) wherever it points, http included.
    answer = await send(new URL(url), init, controller.signal, () => {
      sent = true;
      clearTimeout(timer);
      timer = abortIn(wait);
    });
  } catch (err) {
    if (err instanceof CliError) throw err;
    const cause = (err as NodeJS.ErrnoException).code ?? (err as Error).name;
    if (!sent) throw new CliError(`cannot reach ${origin} (${controller.signal.aborted ? `no connection within ${CONNECT_MS / 1000} s` : cause})`);
    const what = `sent the request to ${origin}, but ${controller.signal.aborted ? `no answer came within ${wait / 1000} s` : `the connection closed without an answer (${cause})`}`;
    throw new CliError(init.method === 'GET' ? what : `${what}: it may be done, or still under way on the server; check before repeating it (with the matching list or show command, or the management_audit line in the provider's log)`);
  } finally {
    clearTimeout(timer);
  }
  const retryAfter = answer.retryAfter !== undefined ? { retryAfter: answer.retryAfter } : {};
  const body = jsonObject(answer.text);
  if (body) return { status: answer.status, body, ...retryAfter };
  const came = answer.text ? 'a body that is not a JSON object' : 'no body';
  return { status: answer.status, body: { error: 'unexpected_response', error_description: `HTTP ${answer.status} with ${came}` }, foreign: true, ...retryAfter };
}

/** The JSON object `text` holds; undefined for anything else (not JSON, `null`, a list, a string). */
function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Seconds from a `Retry-After` value (delay-seconds or an IMF-fixdate, RFC 9110 10.2.3), rounded up; undefined when unreadable. */
export function retryAfterSeconds(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value.trim()) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** What an answer that is no answer of svc-connect is told by. */
const NOT_SVC_CONNECT = ' (not an answer of svc-connect: is --url the base URL of the provider?)';

type Kind = 'string' | 'number' | 'boolean' | 'list' | 'object';
/** What each named member of an answer must be: of a kind (with `?`: or absent), or exactly `true` or `false`. */
export type AnswerShape = Record<string, Kind | `${Kind}?` | boolean>;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const KINDS: Record<Kind, [string, (value: unknown) => boolean]> = {
  string: ['a string', (value) => typeof value === 'string'],
  number: ['a number', (value) => typeof value === 'number'],
  boolean: ['true or false', (value) => typeof value === 'boolean'],
  list: ['a list', Array.isArray],
  object: ['an object', isObject],
};

/**
 * `value` when it is an object holding each member of `shape` as `shape` says; else a CliError (exit 1) naming the
 * first member missing or of another kind: a `200 {}` (a proxy, a broken or hostile server) is never read as done.
 * `where` names the value in the message (`clients[3]`; default `the answer`).
 */
export function expectAnswer(value: unknown, what: string, shape: AnswerShape, where = 'the answer'): Record<string, unknown> {
  const fail = (fault: string): never => {
    throw new CliError(`${what} failed: ${fault}${NOT_SVC_CONNECT}`);
  };
  if (!isObject(value)) return fail(`${where} is not an object`);
  for (const [name, expected] of Object.entries(shape)) {
    const member = Object.hasOwn(value, name) ? value[name] : undefined;
    if (member === undefined && typeof expected === 'string' && expected.endsWith('?')) continue;
    if (member === undefined) fail(`${where} holds no ${name}`);
    const [described, fits] = typeof expected === 'string' ? KINDS[expected.replace('?', '') as Kind] : [String(expected), (v: unknown) => v === expected];
    if (!fits(member)) fail(`${where}'s ${name} is not ${described}`);
  }
  return value;
}

/** Throws a CliError for an OAuth error answer or a success that is not svc-connect's JSON, naming the user a management 401 tried, or how long a 429 waits. */
export function failOnError(result: CallResult, what: string, management?: { user: string }): void {
  if (result.status < 300 && !result.foreign) return;
  const error = typeof result.body.error === 'string' ? result.body.error : '';
  const description = typeof result.body.error_description === 'string' ? result.body.error_description : '';
  let hint = '';
  if (result.status < 300) {
    hint = NOT_SVC_CONNECT;
  } else if (result.status < 400) {
    hint = ' (a redirect, not followed: give the URL it points to as --url)';
  } else if (result.status === 401 && management) {
    hint = ` (tried the management user "${management.user}", from --user, SVC_MANAGEMENT_USER or the default admin; the password comes from SVC_MANAGEMENT_PASSWORD or --password-file)`;
  } else if (result.status === 504) {
    hint = " (a gateway's timeout: the provider may have done it, or still be at it; check before repeating it)";
  } else if (result.status === 429) {
    const seconds = retryAfterSeconds(result.retryAfter);
    hint = seconds === undefined ? ' (wait before trying again)' : ` (wait ${seconds} second${seconds === 1 ? '' : 's'} before trying again; every failed try counts towards the lockout)`;
  }
  throw new CliError(`${what} failed: HTTP ${result.status} ${error}${description ? `: ${description}` : ''}${hint}`);
}

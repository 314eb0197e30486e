import { closeSync, constants, existsSync, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** What the file system's error codes mean, in words. */
const FILE_ERROR_WORDS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of the path is not a folder',
  EEXIST: 'it exists already',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'the name is too long',
};

/**
 * One line for a failed operation on a file the user named, never a stack:
 * `cannot write /etc/svc/keys.json: the folder /etc/svc does not exist (ENOENT)`.
 */
export function fileErrorMessage(action: 'read' | 'write' | 'create' | 'replace', path: string, err: unknown): string {
  const absolute = resolve(path);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const words = code === 'ENOENT' && action !== 'read' && !existsSync(dirname(absolute)) ? `the folder ${dirname(absolute)} does not exist` : (code && FILE_ERROR_WORDS[code]) ?? (err instanceof Error ? err.message.split('\n')[0] : 'failed');
  return `cannot ${action} ${absolute}: ${words}${code ? ` (${code})` : ''}`;
}

/**
 * The UTF-8 text of a file the user named (the configuration file, the JSON files settings name) without a byte order
 * mark at its start; fails naming the first line that is not UTF-8 (a Latin-1 file), never its bytes: decoded
 * leniently, a password or client secret would change without a word.
 */
export function utf8Text(bytes: Buffer): string {
  // A fatal decoder throws on the first byte that is not UTF-8, and drops a byte order mark at the start.
  const decode = (part: Uint8Array): string => new TextDecoder('utf-8', { fatal: true }).decode(part);
  try {
    return decode(bytes);
  } catch {
    // A line feed byte is never part of a longer UTF-8 sequence: each line decodes on its own.
    let line = 1;
    for (let start = 0; start <= bytes.length; line += 1) {
      const end = bytes.indexOf(0x0a, start);
      const stop = end < 0 ? bytes.length : end;
      try {
        decode(bytes.subarray(start, stop));
      } catch {
        break;
      }
      start = stop + 1;
    }
    throw new Error(`line ${line} is not UTF-8 text: save the file as UTF-8 (or write each character beyond ASCII as \\uXXXX)`);
  }
}

/** How a file the user named is read ({@link readFileBytes}): the most it may hold, and whether a pipe or a terminal may be read. */
export interface FileLimit {
  maxBytes: number;
  /** A command line's own input, read as it comes: a pipe (`--body <(jq …)`), a terminal, `/dev/stdin`. */
  streams?: boolean;
}

/** The limit of a file the user named unless its reader sets another: 1 MiB, where a configuration or keys file takes a few kB. */
const FILE_LIMIT: FileLimit = { maxBytes: 2 ** 20 };

const sizeText = (bytes: number): string => (bytes >= 2 ** 20 ? `${bytes / 2 ** 20} MiB` : `${bytes / 2 ** 10} KiB`);

/**
 * The bytes of a file the user named, refused unread when it is no regular file, as it is named and as it was opened (the
 * name may lead elsewhere a moment later): a pipe nobody writes would hold the process for ever (a server reloading on
 * SIGHUP stops answering), a device such as /dev/zero fill its memory; refused after `limit.maxBytes` (a /proc file that
 * says it is empty may never end). With `limit.streams`, a pipe or a terminal is read as it comes, to the same limit.
 * A failure is thrown as `fail(reason)`, naming the file, never its content.
 */
export function readFileBytes(path: string, fail: (reason: string) => Error, limit: FileLimit = FILE_LIMIT): Buffer {
  const { maxBytes, streams = false } = limit;
  const regular = (kind: Stats): boolean => kind.isFile() || kind.isDirectory();
  const notRegular = `${resolve(path)} is not a regular file (a pipe or a device); name the file itself`;
  // One buffer, read into 64 KiB at a time (as Node reads a file; /proc/self/pagemap refuses reads of other sizes): a
  // pipe or a terminal gives a line or a byte a read, each of which would otherwise hold a 64 KiB buffer of its own.
  const bytes = Buffer.allocUnsafe(maxBytes + 2 ** 16);
  let length = 0;
  let refusal: string | undefined;
  let fd: number | undefined;
  try {
    // Unopened: opening some devices acts (a watchdog arms). Swapped meanwhile, a pipe must not be waited on for a writer,
    // nor a terminal become the process's.
    if (!streams && !regular(statSync(path))) refusal = notRegular;
    else {
      fd = openSync(path, constants.O_RDONLY | constants.O_NOCTTY | (streams ? 0 : constants.O_NONBLOCK));
      if (!streams && !regular(fstatSync(fd))) refusal = notRegular;
      for (let read = -1; refusal === undefined && read !== 0 && length <= maxBytes; length += read) read = readSync(fd, bytes, length, 2 ** 16, null);
    }
  } catch (err) {
    refusal = fileErrorMessage('read', path, err);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (refusal === undefined && length > maxBytes) refusal = `${resolve(path)} holds more than ${sizeText(maxBytes)}, the most svc-connect reads from this file`;
  if (refusal !== undefined) throw fail(refusal);
  return bytes.subarray(0, length);
}

/**
 * The JSON value of a file the user named ({@link readFileBytes}, to `limit`), a byte order mark at its start skipped
 * (Windows editors write one). A failure is thrown as `fail(reason)`: what {@link readFileBytes} says, `/abs/path line N
 * is not UTF-8 text` (a Latin-1 file, whose client secret would otherwise change without a word), or `/abs/path is not
 * valid JSON` (never the parser's message, which quotes the content).
 */
export function readJsonFile(path: string, fail: (reason: string) => Error, limit: FileLimit = FILE_LIMIT): unknown {
  return jsonOfFile(readFileBytes(path, fail, limit), path, fail);
}

/** The JSON value of `bytes`, read from the file at `path`, judged and worded as {@link readJsonFile} does. */
function jsonOfFile(bytes: Buffer, path: string, fail: (reason: string) => Error): unknown {
  let text: string;
  try {
    text = utf8Text(bytes);
  } catch (err) {
    throw fail(`${resolve(path)} ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw fail(`${resolve(path)} is not valid JSON`);
  }
}

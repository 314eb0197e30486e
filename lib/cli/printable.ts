import type { CliIo } from './common.js';

/** What may not reach an operator's terminal as is: C0 and C1 controls, DEL, line separators and bidi overrides. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * One value (a table cell, a name in a note) with every character of {@link UNSAFE} written as
 * `\uXXXX`, so a client's `client_name` cannot recolour, hide, reorder or forge rows.
 */
export function printable(value: string): string {
  return value.replace(UNSAFE, escape);
}

/**
 * A whole piece of command output: as {@link printable}, but line feeds and tabs stay. JSON output
 * still parses to the same values: what is left to escape stands inside strings, where `\uXXXX` is JSON's escape.
 */
export function printableOutput(text: string): string {
  return text.replace(UNSAFE, (c) => (c === '\n' || c === '\t' ? c : escape(c)));
}

/** `io` with everything written to stdout and stderr passed through {@link printableOutput}. */
export function printableIo(io: CliIo): CliIo {
  return {
    env: io.env,
    out: (text) => io.out(printableOutput(text)),
    ...(io.err ? { err: (text: string) => io.err?.(printableOutput(text)) } : {}),
  };
}

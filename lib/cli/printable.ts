import type { CliIo } from './common.js';

/**
 * What may not reach an operator's terminal as is: C0 controls (escape sequences, carriage return,
 * backspace and line breaks among them), DEL, C1 controls (U+0080–U+009F, CSI included), the Unicode
 * line and paragraph separators, and the bidirectional formatting characters (U+061C, U+200E,
 * U+200F, U+202A–U+202E, U+2066–U+2069) that reorder what is shown.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The same, with the line feed and tab the command line writes itself (line ends, indentation) allowed. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_IN_OUTPUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * One value (a table cell, a name in a note) as it may reach the terminal: every character of
 * {@link UNSAFE}, line breaks included, written as `\uXXXX`, so a client's own metadata (its
 * `client_name`) cannot recolour, hide, reorder or forge rows, or talk to the terminal.
 */
export function printable(value: string): string {
  return value.replace(UNSAFE, escape);
}

/**
 * A whole piece of command output: as {@link printable}, but the line feeds and tabs between lines
 * stay. In JSON output (`JSON.stringify` escapes C0 controls itself) what is left to escape can only
 * stand inside a string, where `\uXXXX` is JSON's own escape: the output still parses to the same
 * values.
 */
export function printableOutput(text: string): string {
  return text.replace(UNSAFE_IN_OUTPUT, escape);
}

/** `io` with everything written to stdout and stderr passed through {@link printableOutput}. */
export function printableIo(io: CliIo): CliIo {
  return {
    env: io.env,
    out: (text) => io.out(printableOutput(text)),
    ...(io.err ? { err: (text: string) => io.err?.(printableOutput(text)) } : {}),
  };
}

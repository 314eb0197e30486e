import { terminalText } from '../terminal-text.js';
import type { CliIo } from './common.js';

/**
 * One value (a table cell, a name in a note) with every control, line separator and bidi override written as
 * `\uXXXX` ({@link terminalText}), so a client's `client_name` cannot recolour, hide, reorder or forge rows.
 */
export function printable(value: string): string {
  return terminalText(value);
}

/**
 * A whole piece of command output: as {@link printable}, but line feeds and tabs stay. JSON output
 * still parses to the same values: what is left to escape stands inside strings, where `\uXXXX` is JSON's escape.
 */
export function printableOutput(text: string): string {
  return terminalText(text, '\n\t');
}

/** `io` with everything written to stdout and stderr passed through {@link printableOutput}. */
export function printableIo(io: CliIo): CliIo {
  return {
    env: io.env,
    out: (text) => io.out(printableOutput(text)),
    ...(io.err ? { err: (text: string) => io.err?.(printableOutput(text)) } : {}),
  };
}

import { terminalText } from '../terminal-text.js';
import type { CliIo } from './common.js';

/**
 * `io` with everything written to stdout and stderr passed through {@link terminalText}, line feeds and tabs kept, so
 * a client's `client_name` cannot recolour, hide, reorder or forge lines. JSON output still parses to the same
 * values: what is left to escape stands inside strings, where `\uXXXX` is JSON's escape.
 */
export function printableIo(io: CliIo): CliIo {
  const printable = (text: string): string => terminalText(text, '\n\t');
  return {
    env: io.env,
    out: (text) => io.out(printable(text)),
    ...(io.err ? { err: (text: string) => io.err?.(printable(text)) } : {}),
  };
}

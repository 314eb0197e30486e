import type { Logger } from '../../lib/index.js';

/** A logger that keeps every line as JSON (`{"e": event, ...fields}`), for asserting on events. */
export function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const write = (e: string, f?: Record<string, unknown>): void => {
    lines.push(JSON.stringify({ e, ...f }));
  };
  return { lines, logger: { info: write, warn: write, error: write } };
}

import { terminalText } from '../terminal-text.js';

/** ANSI colours of the level names (only when writing to a terminal). */
const COLOURS: Record<string, string> = { trace: '90', debug: '90', info: '32', warn: '33', error: '31', fatal: '35' };

/**
 * A field value as it reads best on one line: bare when it is a plain word, else JSON-quoted, with the controls,
 * line separators and bidi overrides JSON leaves as they are escaped too (a client's `kid` in a refused key's rule
 * cannot drive the terminal).
 */
function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /^[\w.:/@+=,-]+$/.test(value) ? value : terminalText(JSON.stringify(value));
  return typeof value === 'object' && value !== null ? terminalText(JSON.stringify(value)) : terminalText(String(value));
}

/**
 * One JSON log line as a line for a person at a terminal (`10:42:01.123 INFO  listening port=3000`);
 * a line that is not such JSON passes unchanged.
 */
export function prettyLine(json: string, colour: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const { level, time, event, msg, ...fields } = record;
  const label = typeof level === 'string' ? level : 'info';
  const date = typeof time === 'string' ? new Date(time) : new Date();
  const clock = Number.isNaN(date.getTime()) ? String(time) : `${date.toTimeString().slice(0, 8)}.${String(date.getMilliseconds()).padStart(3, '0')}`;
  const padded = label.toUpperCase().padEnd(5);
  const shown = colour && COLOURS[label] ? `\u001b[${COLOURS[label]}m${padded}\u001b[0m` : padded;
  const rest = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${fieldValue(value)}`);
  const title = typeof event === 'string' ? event : typeof msg === 'string' ? msg : '';
  return `${[clock, shown, title, ...rest].join(' ')}\n`;
}

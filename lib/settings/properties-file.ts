/**
 * Parses Java-style `.properties` text: `key=value`, `key: value` or `key value`; `#` and `!`
 * comments; backslash line continuations; `\t \n \r \f \\ \uXXXX` escapes. A key given again must have the same value.
 * Throws an `Error` naming the line for malformed input and the lines of a key given two values (never a value).
 */
export function parseProperties(text: string): Map<string, string> {
  const result = new Map<string, string>();
  const lineOf = new Map<string, number>();
  const physical = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < physical.length; i += 1) {
    const startLine = i + 1;
    let line = (physical[i] ?? '').replace(/^[ \t\f]+/, '');
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    while (endsWithOddBackslashes(line) && i + 1 < physical.length) {
      i += 1;
      line = line.slice(0, -1) + (physical[i] ?? '').replace(/^[ \t\f]+/, '');
    }
    const { key, value } = splitKeyValue(line);
    if (!key) throw new Error(`line ${startLine}: missing property name`);
    const [name, text] = [unescape(key, startLine), unescape(value, startLine)];
    if (result.has(name) && result.get(name) !== text) throw new Error(`${name} is given two values, on lines ${lineOf.get(name)} and ${startLine}`);
    result.set(name, text);
    lineOf.set(name, startLine);
  }
  return result;
}

function endsWithOddBackslashes(line: string): boolean {
  const match = /\\+$/.exec(line);
  return match !== null && match[0].length % 2 === 1;
}

function splitKeyValue(line: string): { key: string; value: string } {
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === '=' || c === ':' || c === ' ' || c === '\t' || c === '\f') break;
    i += 1;
  }
  const key = line.slice(0, i);
  let rest = line.slice(i).replace(/^[ \t\f]+/, '');
  if (rest.startsWith('=') || rest.startsWith(':')) rest = rest.slice(1).replace(/^[ \t\f]+/, '');
  return { key, value: rest };
}

const ESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', f: '\f' };

function unescape(text: string, line: number): string {
  return text.replace(/\\(u[0-9a-fA-F]{4}|u.{0,4}|.)/g, (_m, esc: string) => {
    if (esc.startsWith('u') && esc.length > 1) {
      if (!/^u[0-9a-fA-F]{4}$/.test(esc)) throw new Error(`line ${line}: malformed \\u escape`);
      return String.fromCharCode(parseInt(esc.slice(1), 16));
    }
    return ESCAPES[esc] ?? esc;
  });
}

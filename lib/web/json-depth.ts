/**
 * How deeply the JSON of a request may nest arrays and objects: far above what an honest request needs (a
 * `claims` request with a value of the deepest allowed kind nests 21), far below the few thousand levels at
 * which the recursive `JSON.stringify` and `structuredClone` that oidc-provider runs on request objects,
 * client assertions and registration metadata overflow the stack (a 500 anyone could cause with a link).
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);

/** True when the JSON text `text` nests deeper than `limit`: a scan of its brackets outside strings, which neither parses nor recurses. */
export function nestsDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i += 1;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (OPENERS.has(c)) {
      depth += 1;
      if (depth > limit) return true;
    } else if (CLOSERS.has(c)) depth -= 1;
  }
  return false;
}

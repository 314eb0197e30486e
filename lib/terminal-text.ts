/**
 * What may not reach a terminal as is: C0 and C1 controls, DEL, line separators and bidi overrides. A C1 control
 * (U+009B is CSI) starts an escape sequence in terminals that read them in UTF-8; a bidi override reorders what follows.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE_FOR_TERMINALS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** One character of {@link UNSAFE_FOR_TERMINALS} as `\uXXXX` (JSON's escape, so JSON text stays JSON). */
const escapeForTerminal = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with every character of {@link UNSAFE_FOR_TERMINALS} but those in `keep` written as `\uXXXX`. */
export function terminalText(text: string, keep = ''): string {
  return text.replace(UNSAFE_FOR_TERMINALS, (c) => (keep.includes(c) ? c : escapeForTerminal(c)));
}

/**
 * `text` cut to its first `max` characters and `…` when longer; by code points, so no surrogate pair is split. Reads no
 * further than the cut: a kid or claim of half a megabyte (a client's JWK Set) costs no more than a short one.
 */
export function clip(text: string, max: number): string {
  // No more code points than UTF-16 units: a text no longer than max in units is kept without counting.
  if (text.length <= max) return text;
  let kept = '';
  let count = 0;
  for (const c of text) {
    if (count === max) return `${kept}…`;
    kept += c;
    count += 1;
  }
  return text;
}

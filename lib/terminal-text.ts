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

/** `text` cut to its first `max` characters and `…` when longer; by code points, so no surrogate pair is split. */
export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : text;
}

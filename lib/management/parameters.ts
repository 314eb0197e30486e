import type { Context } from 'koa';

import { FORM_BODY_LIMIT, readBodyText } from '../web/form-body.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const ESCAPE = /^%[0-9A-Fa-f]{2}$/;

/** `+` as a space, then percent-decoded (WHATWG URL, `application/x-www-form-urlencoded`) as UTF-8; `undefined` when not UTF-8. */
function decoded(part: string): string | undefined {
  const pieces = part.replace(/\+/g, ' ').split(/(%[0-9A-Fa-f]{2})/);
  try {
    return UTF8.decode(Buffer.concat(pieces.map((piece) => (ESCAPE.test(piece) ? Buffer.from([parseInt(piece.slice(1), 16)]) : Buffer.from(piece, 'utf8')))));
  } catch {
    return undefined;
  }
}

/** The name-value pairs of a query or form body, each decoded by {@link decoded}. */
function pairsOf(text: string): [string | undefined, string | undefined][] {
  return text.split('&').filter(Boolean).map((pair) => {
    const at = pair.indexOf('=');
    return at < 0 ? [decoded(pair), ''] : [decoded(pair.slice(0, at)), decoded(pair.slice(at + 1))];
  });
}

/**
 * Named parameters of a management request, from the query or (POST) an
 * `application/x-www-form-urlencoded` body of at most {@link FORM_BODY_LIMIT} bytes. One given twice
 * (query and form, or repeated), or whose value is not UTF-8 → 400 (never acted on as another value); another body
 * type or a content-coded body → 415; too large → 413. A missing parameter is the empty string (the action says what it needs).
 */
export async function singleParameters(ctx: Context, names: readonly string[]): Promise<{ values: Record<string, string> } | { error: string; status: number }> {
  let form: ReturnType<typeof pairsOf> = [];
  if (ctx.method === 'POST' && (ctx.request.length ?? 0) + (ctx.get('transfer-encoding') ? 1 : 0) > 0) {
    if (ctx.is('application/x-www-form-urlencoded') !== 'application/x-www-form-urlencoded') {
      return { status: 415, error: `send the ${names.join(' and ')} parameter${names.length > 1 ? 's' : ''} in the query or as an application/x-www-form-urlencoded body` };
    }
    if (!['', 'identity'].includes(ctx.get('content-encoding').trim().toLowerCase())) return { status: 415, error: 'send the body without a content coding (Content-Encoding)' };
    let text: string | undefined;
    try {
      text = await readBodyText(ctx, FORM_BODY_LIMIT, 'utf-8', { fatal: true });
    } catch {
      return { status: 400, error: 'the request body is not UTF-8' };
    }
    if (text === undefined) return { status: 413, error: `request body larger than ${FORM_BODY_LIMIT} bytes` };
    form = pairsOf(text);
  }
  const given = [...pairsOf(ctx.querystring), ...form];
  const values: Record<string, string> = {};
  for (const name of names) {
    const all = given.filter(([n]) => n === name).map(([, value]) => value);
    if (all.includes(undefined)) return { status: 400, error: `the ${name} parameter is not UTF-8 (percent-encode its UTF-8 bytes)` };
    if (all.length > 1) return { status: 400, error: `give the ${name} parameter once` };
    values[name] = all[0] ?? '';
  }
  return { values };
}

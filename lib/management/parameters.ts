import type { Context } from 'koa';

import { FORM_BODY_LIMIT, readBodyText } from '../web/form-body.js';

/**
 * Named parameters of a management request, from the query or (POST) an
 * `application/x-www-form-urlencoded` body of at most {@link FORM_BODY_LIMIT} bytes. One given twice
 * (query and form, or repeated) → 400; another body type → 415; too large → 413. A missing
 * parameter is the empty string (the action says what it needs).
 */
export async function singleParameters(ctx: Context, names: readonly string[]): Promise<{ values: Record<string, string> } | { error: string; status: number }> {
  let form: URLSearchParams | undefined;
  if (ctx.method === 'POST' && (ctx.request.length ?? 0) + (ctx.get('transfer-encoding') ? 1 : 0) > 0) {
    if (ctx.is('application/x-www-form-urlencoded') !== 'application/x-www-form-urlencoded') {
      return { status: 415, error: `send the ${names.join(' and ')} parameter${names.length > 1 ? 's' : ''} in the query or as an application/x-www-form-urlencoded body` };
    }
    const text = await readBodyText(ctx, FORM_BODY_LIMIT);
    if (text === undefined) return { status: 413, error: `request body larger than ${FORM_BODY_LIMIT} bytes` };
    form = new URLSearchParams(text);
  }
  const values: Record<string, string> = {};
  for (const name of names) {
    const fromQuery = ctx.query[name];
    const all = [...(Array.isArray(fromQuery) ? fromQuery : fromQuery === undefined ? [] : [fromQuery]), ...(form?.getAll(name) ?? [])];
    if (all.length > 1) return { status: 400, error: `give the ${name} parameter once` };
    values[name] = all[0] ?? '';
  }
  return { values };
}

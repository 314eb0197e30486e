import type { Context } from 'koa';

/** Largest form body accepted by our own pages, in bytes. */
export const FORM_BODY_LIMIT = 16 * 1024;

/**
 * Reads the raw request body as UTF-8 text, at most `limit` bytes (declared or streamed).
 * @returns the text, or `undefined` when the body is larger than `limit`.
 */
export async function readBodyText(ctx: Context, limit: number): Promise<string | undefined> {
  if (Number(ctx.get('content-length') || '0') > limit) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Reads an `application/x-www-form-urlencoded` body (at most {@link FORM_BODY_LIMIT} bytes).
 * @throws a Koa HTTP error 415 for another content type, 413 when too large.
 */
export async function readFormBody(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    ctx.throw(415, 'expected application/x-www-form-urlencoded');
  }
  const text = await readBodyText(ctx, FORM_BODY_LIMIT);
  if (text === undefined) ctx.throw(413, 'form body too large');
  return new URLSearchParams(text);
}

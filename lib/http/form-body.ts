import type { Context } from 'koa';

/** Largest form body accepted by our own pages, in bytes. */
export const FORM_BODY_LIMIT = 16 * 1024;

/**
 * Reads an `application/x-www-form-urlencoded` body (at most {@link FORM_BODY_LIMIT} bytes).
 * @throws a Koa HTTP error 415 for another content type, 413 when too large.
 */
export async function readFormBody(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) {
    ctx.throw(415, 'expected application/x-www-form-urlencoded');
  }
  const declared = Number(ctx.get('content-length') || '0');
  if (declared > FORM_BODY_LIMIT) ctx.throw(413, 'form body too large');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > FORM_BODY_LIMIT) ctx.throw(413, 'form body too large');
    chunks.push(buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

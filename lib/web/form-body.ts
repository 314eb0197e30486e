import type { Context } from 'koa';
import { errors } from 'oidc-provider';

/** Largest form body accepted by our own pages, in bytes. */
export const FORM_BODY_LIMIT = 16 * 1024;

/**
 * Reads the request body as text in `charset`; `undefined` when larger than `limit` bytes.
 * @throws `invalid_request` for a charset this runtime cannot decode; with `fatal`, a `TypeError` for bytes that are not `charset`.
 */
export async function readBodyText(ctx: Context, limit: number, charset = 'utf-8', options: { fatal?: boolean } = {}): Promise<string | undefined> {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: options.fatal === true });
  } catch {
    throw new errors.InvalidRequest('failed to parse the request body (unsupported charset)');
  }
  if (Number(ctx.get('content-length') || '0') > limit) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limit) return undefined;
    chunks.push(buffer);
  }
  return decoder.decode(Buffer.concat(chunks));
}

/** The JSON object `text` holds (`JSON.parse`), or undefined when it is not JSON or not a plain object. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
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

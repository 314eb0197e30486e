import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';

import type { Context } from 'koa';

/**
 * Puts `body` in place of the request body a middleware has read, as a fresh stream (or `body` itself, a stream
 * with the original's length) with the original's headers (new `content-length`), socket, method and URL, for
 * parsers further down to read.
 */
export function replaceRequestBody(ctx: Context, body: Buffer | Readable, contentType?: string): void {
  const original = ctx.req;
  const headers = { ...original.headers };
  if (body instanceof Buffer) {
    headers['content-length'] = String(body.length);
    delete headers['transfer-encoding'];
  }
  if (contentType) headers['content-type'] = contentType;
  const stream = body instanceof Buffer ? Readable.from([body], { objectMode: false }) : body;
  // A Readable standing in for the IncomingMessage: readers of a request use these members.
  const replacement = Object.assign(stream, {
    headers,
    rawHeaders: original.rawHeaders,
    method: original.method,
    url: original.url,
    httpVersion: original.httpVersion,
    httpVersionMajor: original.httpVersionMajor,
    httpVersionMinor: original.httpVersionMinor,
    socket: original.socket,
    connection: original.socket,
    complete: true,
    aborted: false,
    trailers: {},
    rawTrailers: [],
  }) as unknown as IncomingMessage;
  ctx.req = replacement;
  ctx.request.req = replacement;
  ctx.response.req = replacement;
}

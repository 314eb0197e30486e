import { Readable } from 'node:stream';

import type { Middleware } from 'koa';

import type { Logger } from '../logger.js';
import { requestIdOf } from './error-response.js';
import { replaceRequestBody } from './replace-request-body.js';

/**
 * A request body a host app's parser read before `svc.middleware`: put back from the text it kept
 * (`ctx.request.rawBody`, as koa-bodyparser keeps it) for our pages and the provider to read; without that
 * text, a stream that fails when our pages or the provider read it (`server_error`, logged with the fix),
 * never an empty body. A host route after `svc.middleware` keeps what its parser made of the body.
 */
export function hostParsedBody(logger: Logger): Middleware {
  return (ctx, next) => {
    if (!ctx.req.readableEnded) return next();
    const raw = (ctx.request as { rawBody?: unknown }).rawBody;
    if (typeof raw === 'string') {
      replaceRequestBody(ctx, Buffer.from(raw, 'utf8'), ctx.request.type ? `${ctx.request.type}; charset=utf-8` : undefined);
      return next();
    }
    const headers = ctx.req.headers;
    if (headers['transfer-encoding'] === undefined && !(Number(headers['content-length']) > 0)) return next();
    const unread = new Readable({
      read() {
        logger.error('request_body_already_read', { request_id: requestIdOf(ctx), fix: 'app.use(svc.middleware) before your body parser, or have it keep the raw text as ctx.request.rawBody' });
        this.destroy(new Error('the request body was read before svc.middleware'));
      },
    });
    replaceRequestBody(ctx, unread);
    return next();
  };
}

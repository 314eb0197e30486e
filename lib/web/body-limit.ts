import type { Middleware } from 'koa';

import { sendError } from './error-response.js';

/** Largest request body accepted anywhere, in bytes (oidc-provider itself stops at 56 KiB). */
const MAX_BODY_BYTES = 64 * 1024;

/** Refuses a request whose declared body is larger than {@link MAX_BODY_BYTES} with 413 before anything reads it. */
export function bodyLimit(): Middleware {
  return (ctx, next) => {
    const declared = Number(ctx.req.headers['content-length'] || '0');
    if (!(declared > MAX_BODY_BYTES)) return next();
    ctx.set('Connection', 'close');
    sendError(ctx, 413, 'invalid_request', `request body larger than ${MAX_BODY_BYTES} bytes`);
    return Promise.resolve();
  };
}

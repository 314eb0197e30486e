import type { Middleware } from 'koa';

import type { SvcStore } from '../../adapters/store.js';
import { StoreUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import { answerError } from '../pages/error-page.js';
import { giveBackConsumedCode } from '../registration/give-back-code.js';
import { failureCauseFields, logCaughtError, oauthErrorBody, requestIdOf } from '../web/error-response.js';
import { setSecurityHeaders } from '../web/security-headers.js';
import { giveBackPushedRequest } from './pushed-requests.js';

/**
 * Runs each request as one unit of store work (joining one already open), its writes sent together
 * before the response goes out. When they fail, the prepared response is replaced by a 503
 * `server_error`, so nobody is sent a code, token or cookie whose records were not stored. A token
 * request answered with a server error (that 503, or a failure while it was served) gives back the
 * code it consumed ({@link giveBackConsumedCode}), so the client's retry redeems it; an authorization
 * request or its resume what it spent of a pushed request ({@link giveBackPushedRequest}), so her reload is served.
 */
export function storeBatch(store: Pick<SvcStore, 'batch' | 'unconsume'>, logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await (store.batch ? store.batch(next) : next());
    } catch (caught) {
      if (!(caught instanceof StoreUnavailableError)) throw caught;
      const out = oauthErrorBody(caught);
      logCaughtError(logger, ctx, caught, out);
      // Nothing of the prepared answer goes out: no redirect, no cookie.
      const requestId = ctx.res.getHeader('x-request-id');
      for (const name of ctx.res.getHeaderNames()) ctx.res.removeHeader(name);
      setSecurityHeaders(ctx);
      if (typeof requestId === 'string') ctx.res.setHeader('X-Request-Id', requestId);
      await answerError(ctx, out);
    }
    if (ctx.status < 500) return;
    for (const [what, giveBack] of [['release AuthorizationCode', giveBackConsumedCode], ['release PushedAuthorizationRequest', giveBackPushedRequest]] as const) {
      await giveBack(ctx, store).catch((err: unknown) => {
        const { code, name } = err as { code?: string; name?: string };
        logger.error('token_cleanup_failed', { request_id: requestIdOf(ctx), what, code, name, ...failureCauseFields(err) });
      });
    }
  };
}

import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

import { refOf } from '../../adapters/inventory.js';
import { issueInitialAccessToken } from '../registration/initial-access-tokens.js';
import { noStore } from '../web/error-response.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { allowMethods } from './guard.js';
import { invitationId } from './toolbox.js';

/** What the initial access token route needs. */
export interface InitialAccessTokenRouteOptions {
  provider: Provider;
  logger: Logger;
  metrics?: Metrics;
}

/**
 * `POST /initial-access-tokens` on the management router, behind `guard` (cross-site 403, shared
 * lockout 429, HTTP Basic 401) after its method check (405): issues the same initial access token an
 * invitation mails (two days, single use, every registration policy) and answers 201
 * `{"initial_access_token","expires_at"}` — the only time the token is shown. Logged as
 * `initial_access_token_issued` with the user and the invitation id (`inv_…`, a hash), never the token.
 */
export function addInitialAccessTokenRoute(router: Router, guard: Middleware, options: InitialAccessTokenRouteOptions): void {
  const { provider, logger } = options;
  router.all('/initial-access-tokens', allowMethods(['POST']), guard, async (ctx) => {
    const { token, expiresAt } = await issueInitialAccessToken(provider);
    logger.info('initial_access_token_issued', {
      request_id: ctx.state.requestId as string | undefined,
      user: ctx.state.managementUser as string | undefined,
      invitation: invitationId(refOf(token)),
      expires_at: expiresAt,
    });
    options.metrics?.securityEvents.inc({ event: 'initial_access_token_issued' });
    ctx.status = 201;
    noStore(ctx);
    ctx.body = { initial_access_token: token, expires_at: expiresAt };
  });
}

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

/**
 * `POST /initial-access-tokens` behind `guard`, after its method check: issues the token an
 * invitation mails (two days, single use) and answers 201 `{"initial_access_token","expires_at"}`,
 * the only time it is shown. Logged with the user and the invitation id (`inv_…`), never the token.
 */
export function addInitialAccessTokenRoute(router: Router, guard: Middleware, options: { provider: Provider; logger: Logger; metrics?: Metrics }) {
  router.all('/initial-access-tokens', allowMethods(['POST']), guard, async (ctx) => {
    const { token, expiresAt } = await issueInitialAccessToken(options.provider);
    const { requestId, managementUser } = ctx.state as { requestId?: string; managementUser?: string };
    const invitation = invitationId(refOf(token));
    options.logger.info('initial_access_token_issued', { request_id: requestId, user: managementUser, invitation, expires_at: expiresAt });
    options.metrics?.securityEvents.inc({ event: 'initial_access_token_issued' });
    ctx.status = 201;
    noStore(ctx);
    ctx.body = { initial_access_token: token, expires_at: expiresAt };
  });
}

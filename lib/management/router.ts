import Router from '@koa/router';
import type Provider from 'oidc-provider';

import { refOf } from '../../adapters/inventory.js';
import { InvalidInvitationAddressError, MailDeliveryError } from '../errors.js';
import { failureCauseFields, noStore, requestIdOf, sendError } from '../web/error-response.js';
import { PROVIDER_PATH, ROUTES } from '../settings/paths.js';
import { managementUserOf } from './audit.js';
import { allowMethods, managementGuard, type GuardOptions } from './guard.js';
import { issueInitialAccessToken } from '../registration/initial-access-tokens.js';
import { inviteClient } from './invite.js';
import type { Mailer } from './mailer.js';
import { singleParameters } from './parameters.js';
import { addToolboxRoutes, type ToolboxOptions } from './toolbox-routes.js';
import { invitationId } from './toolbox.js';

/** What the management router needs: the guard's options, and what the invitations need. */
export interface ManagementOptions extends GuardOptions {
  provider: Provider;
  mailer: Mailer;
  /** The sender of invitation mails (`svc.mail.from`). */
  from: string;
  /** Absolute URL of the registration endpoint, named in the mail. */
  registrationEndpoint: string;
  /** The operator toolbox (clients, invitations, subjects); without it only `invite_client` is served. */
  toolbox?: ToolboxOptions;
}

/**
 * `GET` or `POST /oidc/v1/management/invite_client` with `email` (C7), behind the {@link managementGuard} (cross-site
 * 403, shared lockout 429, HTTP Basic 401): mails a two-day, single-use initial access token and answers 202
 * `{"invited","expires_at","invitation","mail"}` without the token (`invitation`: its `inv_…` id, to revoke it; `mail`
 * says where the mail went: the SMTP server or the outbox file); 400 for a bad address, 502 when the mail fails (the
 * token is destroyed), 405 for other methods (`HEAD` included).
 * `POST /initial-access-tokens` issues the same token unmailed and answers 201 `{"initial_access_token","expires_at"}`,
 * the only time it is shown; it is logged with the user and the invitation id, never the token.
 * With `options.toolbox`, {@link addToolboxRoutes} sit behind the same guard.
 * The routes are matched by the router inside; every spelling it accepts runs every check.
 */
export function createManagementRouter(options: ManagementOptions): Router {
  const { provider, mailer, logger } = options;
  const router = new Router({ prefix: `${PROVIDER_PATH}/management` });
  const guard = managementGuard(options);

  router.all('/invite_client', allowMethods(['GET', 'POST'], { headAsGet: false }), guard, async (ctx) => {
    const acted = { request_id: requestIdOf(ctx), user: managementUserOf(ctx) };
    const parameters = await singleParameters(ctx, ['email']);
    if ('error' in parameters) return sendError(ctx, parameters.status, 'invalid_request', parameters.error);
    try {
      const { invited, expiresAt, invitation, mail } = await inviteClient({
        provider,
        mailer,
        from: options.from,
        email: parameters.values.email ?? '',
        registrationEndpoint: options.registrationEndpoint,
      });
      logger.info('invitation_sent', {
        ...acted,
        domain: invited.slice(invited.lastIndexOf('@') + 1),
        invitation,
        expires_at: expiresAt,
        transport: mailer.kind,
        ...(mail?.transport === 'outbox' ? { file: mail.file } : {}),
      });
      options.metrics?.securityEvents.inc({ event: 'invitation_sent' });
      ctx.status = 202;
      noStore(ctx);
      ctx.body = { invited, expires_at: expiresAt, invitation, ...(mail ? { mail } : {}) };
    } catch (err) {
      if (err instanceof InvalidInvitationAddressError) return sendError(ctx, 400, 'invalid_request', err.message);
      if (err instanceof MailDeliveryError) {
        logger.error('invitation_mail_failed', { ...acted, code: err.code, transport: mailer.kind, ...failureCauseFields(err) });
        return sendError(ctx, 502, 'mail_delivery_failed', 'the invitation mail could not be sent; no invitation was issued (the invitation_mail_failed log line names the cause; svc-connect config check --connect tests the mail server)');
      }
      throw err;
    }
  });
  router.all('/initial-access-tokens', allowMethods(['POST']), guard, async (ctx) => {
    const { token, expiresAt } = await issueInitialAccessToken(provider);
    const invitation = invitationId(refOf(token));
    logger.info('initial_access_token_issued', { request_id: requestIdOf(ctx), user: managementUserOf(ctx), invitation, expires_at: expiresAt });
    options.metrics?.securityEvents.inc({ event: 'initial_access_token_issued' });
    ctx.status = 201;
    noStore(ctx);
    ctx.body = { initial_access_token: token, expires_at: expiresAt };
  });
  if (options.toolbox) addToolboxRoutes(router, guard, options.toolbox);
  return router;
}

/** The registration endpoint URL of an issuer. */
export function registrationEndpointOf(issuer: string): string {
  return `${issuer}${ROUTES.registration}`;
}

import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';

import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { PROVIDER_PATH, ROUTES } from '../provider/paths.js';
import type { Settings } from '../settings/types.js';
import { checkBasicAuth } from './basic-auth.js';
import { InvalidInvitationAddressError, inviteClient, MailDeliveryError } from './invite.js';
import { createLockout } from './lockout.js';
import type { Mailer } from './mailer.js';

/** The role an authenticated management user has (spec 5). */
export const MANAGEMENT_ROLE = 'MANAGEMENT';

const REALM = 'Basic realm="svc-connect management", charset="UTF-8"';

function fail(ctx: Context, status: number, error: string, description: string): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error, error_description: description };
}

/** What the management router needs. */
export interface ManagementOptions {
  provider: Provider;
  mailer: Mailer;
  settings: Settings;
  logger: Logger;
  /** Counts invitations and failed logins, when metrics are on. */
  metrics?: Metrics;
  /** Absolute URL of the registration endpoint, named in the mail. */
  registrationEndpoint: string;
}

/**
 * `GET /oidc/v1/management/invite_client?email=…` (C7): HTTP Basic against
 * `svc.management.user`/`password` (constant time) granting role MANAGEMENT; repeated failures from
 * one client → 429 with `Retry-After`; mails a two-day, single-use initial access token and answers
 * 202 `{"invited","expires_at"}` without the token; 400 for a bad address, 502 when the mail fails
 * (the token is destroyed), 405 for other methods.
 */
export function createManagementRouter(options: ManagementOptions): Router {
  const { provider, mailer, settings, logger } = options;
  const lockout = createLockout({ threshold: settings.management.lockoutThreshold, coolDownSeconds: settings.management.lockoutSeconds });
  const router = new Router({ prefix: `${PROVIDER_PATH}/management` });

  router.all('/invite_client', async (ctx) => {
    if (ctx.method !== 'GET') {
      ctx.set('Allow', 'GET');
      return fail(ctx, 405, 'method_not_allowed', 'use GET');
    }
    const retryAfter = lockout.retryAfter(ctx.ip);
    if (retryAfter > 0) {
      ctx.set('Retry-After', String(retryAfter));
      return fail(ctx, 429, 'too_many_requests', 'too many failed logins from this client; try again later');
    }
    const auth = checkBasicAuth(ctx.get('authorization') || undefined, settings.management.user, settings.management.password);
    if (auth !== 'ok') {
      const locked = auth === 'missing' ? 0 : lockout.failure(ctx.ip);
      logger.warn('management_login_failed', { request_id: ctx.state.requestId as string | undefined, reason: auth, ip: ctx.ip, locked_for: locked || undefined });
      options.metrics?.securityEvents.inc({ event: 'management_login_failed' });
      ctx.set('WWW-Authenticate', REALM);
      return fail(ctx, 401, 'unauthorized', auth === 'missing' ? 'management credentials are required (HTTP Basic)' : 'the management credentials are not valid');
    }
    lockout.success(ctx.ip);
    ctx.state.role = MANAGEMENT_ROLE;
    if (Array.isArray(ctx.query.email)) return fail(ctx, 400, 'invalid_request', 'give the email query parameter once');
    try {
      const { invited, expiresAt } = await inviteClient({
        provider,
        mailer,
        from: settings.mail.from,
        email: String(ctx.query.email ?? ''),
        registrationEndpoint: options.registrationEndpoint,
      });
      logger.info('invitation_sent', {
        request_id: ctx.state.requestId as string | undefined,
        domain: invited.slice(invited.lastIndexOf('@') + 1),
        expires_at: expiresAt,
        transport: mailer.kind,
      });
      options.metrics?.securityEvents.inc({ event: 'invitation_sent' });
      ctx.status = 202;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { invited, expires_at: expiresAt };
    } catch (err) {
      if (err instanceof InvalidInvitationAddressError) return fail(ctx, 400, 'invalid_request', err.message);
      if (err instanceof MailDeliveryError) {
        logger.error('invitation_mail_failed', { request_id: ctx.state.requestId as string | undefined, code: err.code, transport: mailer.kind });
        return fail(ctx, 502, 'mail_delivery_failed', 'the invitation mail could not be sent; no invitation was issued');
      }
      throw err;
    }
  });
  return router;
}

/** The registration endpoint URL of an issuer. */
export function registrationEndpointOf(issuer: string): string {
  return `${issuer}${ROUTES.registration}`;
}

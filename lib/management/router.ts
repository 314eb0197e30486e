import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';

import type { AttemptCounter, AttemptRule } from '../../adapters/store.js';
import { clientAddress, throttleAddressKey } from '../http/client-address.js';
import { FORM_BODY_LIMIT, readBodyText } from '../http/form-body.js';
import { isCrossSite } from '../http/same-origin.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import { PROVIDER_PATH, ROUTES } from '../provider/paths.js';
import type { Settings } from '../settings/types.js';
import { checkBasicAuth } from './basic-auth.js';
import { InvalidInvitationAddressError, inviteClient, MailDeliveryError } from './invite.js';
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
  /** The shared store's attempt counters (the lockout). */
  attempts: AttemptCounter;
  /** Absolute URL of the registration endpoint, named in the mail. */
  registrationEndpoint: string;
}

/** How the management lockout counts: `threshold` failures per window, then the cool-down (C7). */
function lockoutRule(settings: Settings): AttemptRule {
  const coolDown = settings.management.lockoutSeconds;
  return { limit: settings.management.lockoutThreshold, windowSeconds: Math.max(coolDown, 900), coolDownSeconds: coolDown, maxCoolDownSeconds: Math.max(coolDown, 3600) };
}

/** The `email` parameter, from the query or (POST) a form body; a string, or an error description. */
async function emailParameter(ctx: Context): Promise<{ email: string } | { error: string; status: number }> {
  const fromQuery = ctx.query.email;
  let fromForm: string[] = [];
  if (ctx.method === 'POST' && (ctx.request.length ?? 0) + (ctx.get('transfer-encoding') ? 1 : 0) > 0) {
    if (ctx.is('application/x-www-form-urlencoded') !== 'application/x-www-form-urlencoded') {
      return { status: 415, error: 'send the email parameter in the query or as an application/x-www-form-urlencoded body' };
    }
    const text = await readBodyText(ctx, FORM_BODY_LIMIT);
    if (text === undefined) return { status: 413, error: `request body larger than ${FORM_BODY_LIMIT} bytes` };
    fromForm = new URLSearchParams(text).getAll('email');
  }
  const all = [...(Array.isArray(fromQuery) ? fromQuery : fromQuery === undefined ? [] : [fromQuery]), ...fromForm];
  if (all.length > 1) return { status: 400, error: 'give the email parameter once' };
  return { email: all[0] ?? '' };
}

/**
 * `GET` or `POST /oidc/v1/management/invite_client` with `email` (C7): cross-site requests are
 * refused with 403 before anything else; HTTP Basic against `svc.management.user`/`password`
 * (constant time) grants role MANAGEMENT; failures are counted per client address (the
 * `X-Forwarded-For` entry `svc.proxy.hops` from the right behind a proxy) in the shared store, so
 * every process sees one count, and repeated failures → 429 with `Retry-After`; mails a two-day,
 * single-use initial access token and answers 202 `{"invited","expires_at"}` without the token; 400
 * for a bad address, 502 when the mail fails (the token is destroyed), 405 for other methods.
 *
 * The route is matched by the router inside; every spelling it accepts runs every check.
 */
export function createManagementRouter(options: ManagementOptions): Router {
  const { provider, mailer, settings, logger, attempts } = options;
  const origin = new URL(settings.baseUrl).origin;
  const rule = lockoutRule(settings);
  const router = new Router({ prefix: `${PROVIDER_PATH}/management` });

  router.all('/invite_client', async (ctx) => {
    if (ctx.method !== 'GET' && ctx.method !== 'POST') {
      ctx.set('Allow', 'GET, POST');
      return fail(ctx, 405, 'method_not_allowed', 'use GET or POST');
    }
    if (isCrossSite(ctx, origin)) {
      logger.warn('management_cross_site_refused', { request_id: ctx.state.requestId as string | undefined });
      options.metrics?.securityEvents.inc({ event: 'management_cross_site_refused' });
      return fail(ctx, 403, 'cross_site_request', 'management requests cannot be sent from another site');
    }
    const address = clientAddress(ctx, { proxy: settings.proxy, hops: settings.proxyHops });
    const key = `management:${throttleAddressKey(address)}`;
    // The attempt is reserved before the credentials are judged: concurrent guesses cannot all
    // slip in before the lockout is recorded.
    const waitMs = await attempts.take(key, rule);
    if (waitMs > 0) {
      ctx.set('Retry-After', String(Math.ceil(waitMs / 1000)));
      return fail(ctx, 429, 'too_many_requests', 'too many failed logins from this client; try again later');
    }
    const auth = checkBasicAuth(ctx.get('authorization') || undefined, settings.management.user, settings.management.password);
    if (auth !== 'ok') {
      if (auth === 'missing') await attempts.giveBack(key);
      logger.warn('management_login_failed', { request_id: ctx.state.requestId as string | undefined, reason: auth, ip: address });
      options.metrics?.securityEvents.inc({ event: 'management_login_failed' });
      ctx.set('WWW-Authenticate', REALM);
      return fail(ctx, 401, 'unauthorized', auth === 'missing' ? 'management credentials are required (HTTP Basic)' : 'the management credentials are not valid');
    }
    await attempts.reset(key);
    ctx.state.role = MANAGEMENT_ROLE;
    const parameter = await emailParameter(ctx);
    if ('error' in parameter) return fail(ctx, parameter.status, 'invalid_request', parameter.error);
    try {
      const { invited, expiresAt } = await inviteClient({
        provider,
        mailer,
        from: settings.mail.from,
        email: parameter.email,
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

import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { StoreUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';
import { failureCauseFields, noteStoreFailure, requestIdOf } from '../web/error-response.js';
import { PROVIDER_EVENTS } from '../seams.js';
import type { Metrics } from './metrics.js';

/** Logs oidc-provider's security-relevant events, ids and error codes only, and counts them in the metrics. */
export function observeProvider(provider: Provider, logger: Logger, metrics?: Metrics): void {
  const registration = (event: string, metricEvent: string) => (ctx: KoaContextWithOIDC, client: { clientId: string }) => {
    logger.info(event, { request_id: requestIdOf(ctx), client_id: client.clientId });
    metrics?.registrations.inc({ event: metricEvent });
  };
  provider.on(PROVIDER_EVENTS.registrationCreated, registration('client_registered', 'created'));
  provider.on(PROVIDER_EVENTS.registrationUpdated, registration('client_updated', 'updated'));
  provider.on(PROVIDER_EVENTS.registrationDeleted, registration('client_deleted', 'deleted'));
  provider.on(PROVIDER_EVENTS.grantSucceeded, (ctx: KoaContextWithOIDC) => {
    logger.info('tokens_issued', { request_id: requestIdOf(ctx), client_id: ctx.oidc.client?.clientId, grant_type: typeof ctx.oidc.params?.grant_type === 'string' ? ctx.oidc.params.grant_type : '' });
    metrics?.flows.inc();
  });
  const failure = (event: string) => (ctx: KoaContextWithOIDC, err: { error?: string }) => {
    logger.warn(event, { request_id: requestIdOf(ctx), error: err.error, client_id: ctx?.oidc?.client?.clientId });
  };
  provider.on(PROVIDER_EVENTS.authorizationFailed, failure('authorization_error'));
  provider.on(PROVIDER_EVENTS.grantFailed, failure('grant_error'));
  provider.on(PROVIDER_EVENTS.registrationCreateFailed, failure('registration_create_error'));
  provider.on(PROVIDER_EVENTS.registrationUpdateFailed, failure('registration_update_error'));
  provider.on(PROVIDER_EVENTS.userinfoFailed, failure('userinfo_error'));
  provider.on(PROVIDER_EVENTS.endSessionFailed, failure('end_session_error'));
  provider.on(PROVIDER_EVENTS.serverError, (ctx: KoaContextWithOIDC, err: Error & { code?: string }) => {
    logger.error('server_error', { request_id: requestIdOf(ctx), name: err.name, code: err.code, ...failureCauseFields(err) });
    if (err.code === StoreUnavailableError.code) noteStoreFailure(ctx);
  });
}

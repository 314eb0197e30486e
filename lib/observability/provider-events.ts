import type Provider from 'oidc-provider';
import type { KoaContextWithOIDC } from 'oidc-provider';

import type { Logger } from '../logger.js';
import type { Metrics } from './metrics.js';

const requestId = (ctx: KoaContextWithOIDC | undefined): string | undefined => (ctx?.state as { requestId?: string } | undefined)?.requestId;

/**
 * Logs oidc-provider's security-relevant events as one line each (ids and error codes only; never a
 * token, secret or claim value) and counts them in the metrics.
 */
export function observeProvider(provider: Provider, logger: Logger, metrics?: Metrics): void {
  const registration = (event: string, metricEvent: string) => (ctx: KoaContextWithOIDC, client: { clientId: string }) => {
    logger.info(event, { request_id: requestId(ctx), client_id: client.clientId });
    metrics?.registrations.inc({ event: metricEvent });
  };
  provider.on('registration_create.success', registration('client_registered', 'created'));
  provider.on('registration_update.success', registration('client_updated', 'updated'));
  provider.on('registration_delete.success', registration('client_deleted', 'deleted'));
  provider.on('grant.success', (ctx: KoaContextWithOIDC) => {
    logger.info('tokens_issued', { request_id: requestId(ctx), client_id: ctx.oidc.client?.clientId, grant_type: String(ctx.oidc.params?.grant_type ?? '') });
    metrics?.flows.inc();
  });
  const failure = (event: string) => (ctx: KoaContextWithOIDC, err: { error?: string }) => {
    logger.warn(event, { request_id: requestId(ctx), error: err.error, client_id: ctx?.oidc?.client?.clientId });
  };
  provider.on('authorization.error', failure('authorization_error'));
  provider.on('grant.error', failure('grant_error'));
  provider.on('registration_create.error', failure('registration_create_error'));
  provider.on('registration_update.error', failure('registration_update_error'));
  provider.on('userinfo.error', failure('userinfo_error'));
  provider.on('server_error', (ctx: KoaContextWithOIDC, err: Error & { code?: string }) => {
    logger.error('server_error', { request_id: requestId(ctx), name: err.name, code: err.code });
    if (err.code === 'SVC_STORE_UNAVAILABLE') metrics?.storeErrors.inc();
  });
}

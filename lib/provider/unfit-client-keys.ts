import type { Context, Next } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { encryptionKeyFamily } from '../../policies/jwk-rules.js';
import type { Logger } from '../logger.js';
import { encryptionKeysFor, ROUTE_NAMES } from '../seams.js';
import { requestIdOf } from '../web/error-response.js';
import { jwksFailedDuring } from './vetted-jwks-fetch.js';

/** The metadata field whose algorithm each route encrypts to the client with. */
const ENCRYPTED_AT: Readonly<Record<string, string>> = {
  [ROUTE_NAMES.token]: 'id_token_encrypted_response_alg',
  [ROUTE_NAMES.userinfo]: 'userinfo_encrypted_response_alg',
};

/**
 * `provider.use` middleware: a token or UserInfo answer refused because no key of the client fits its
 * `*_encrypted_response_alg` (a `jwks_uri` set changed after it was vetted, though no key broke a rule) names the
 * field, the algorithm and the kind of key it needs, and is logged once as `client_keys_unfit`. Told by
 * oidc-provider's own key selection, never by its message; a request whose keys were refused is explained by
 * `client_keys_refused` instead, and one whose `jwks_uri` could not be fetched by the failed refresh alone.
 */
export function explainUnfitClientKeys(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    await next();
    const { oidc } = ctx as KoaContextWithOIDC;
    const field = ENCRYPTED_AT[oidc?.route ?? ''];
    const client = oidc?.client;
    const body = ctx.body as { error?: unknown; error_description?: unknown } | undefined;
    if (!field || !client || body?.error !== 'invalid_client_metadata' || typeof body.error_description !== 'string' || jwksFailedDuring(ctx)) return;
    const alg = client.metadata()[field];
    if (typeof alg !== 'string' || encryptionKeysFor(client, alg).length > 0) return;
    const where = client.jwksUri ? `jwks_uri ${client.jwksUri}` : 'jwks';
    body.error_description = `${body.error_description}: ${where} holds no key for ${field} ${alg}: it needs an ${encryptionKeyFamily(alg)} public key with use "enc" or key_ops containing "encrypt", and no alg other than ${alg}`;
    logger.warn('client_keys_unfit', { request_id: requestIdOf(ctx), client_id: client.clientId, field, alg });
  };
}

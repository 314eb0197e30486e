import { errors, type ClientMetadata } from 'oidc-provider';

import { withServedMetadata } from '../../policies/served-metadata.js';
import { withJudgedInlineKeys } from '../../policies/client-keys.js';
import { judgeRedirectUris } from '../../policies/redirect-uris.js';
import { SettingsError } from '../errors.js';

/**
 * A static client with its redirect URIs, `default_acr_values`, `scope` and inline keys judged as registration at the
 * provider on `baseUrl` judges them ({@link judgeRedirectUris}, {@link withServedMetadata}, {@link withJudgedInlineKeys}),
 * held as registration stores them; a refusal stops the start with a {@link SettingsError} naming `source`, the client
 * and the rule.
 */
export function judgedStaticClient(client: ClientMetadata, baseUrl: string, source: string, properties: string[] = []): ClientMetadata {
  try {
    judgeRedirectUris(client, baseUrl.startsWith('https:'));
    return withJudgedInlineKeys(withServedMetadata(client));
  } catch (err) {
    if (!(err instanceof errors.InvalidClientMetadata)) throw err;
    throw new SettingsError(`${source}: client ${JSON.stringify(client.client_id)}: ${String(err.error_description)}`, properties);
  }
}

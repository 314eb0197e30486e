import { errors, type ClientMetadata } from 'oidc-provider';

import { withJudgedInlineKeys } from '../../policies/client-keys.js';
import { SettingsError } from '../errors.js';

/**
 * A static client with its inline keys judged as at registration ({@link withJudgedInlineKeys}), held as registration
 * stores them; a refused key stops the start with a {@link SettingsError} naming `source`, the client and the rule.
 */
export function judgedStaticClient(client: ClientMetadata, source: string, properties: string[] = []): ClientMetadata {
  try {
    return withJudgedInlineKeys(client);
  } catch (err) {
    if (!(err instanceof errors.InvalidClientMetadata)) throw err;
    throw new SettingsError(`${source}: client ${JSON.stringify(client.client_id)}: ${String(err.error_description)}`, properties);
  }
}

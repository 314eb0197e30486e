import type { JWK } from 'jose';

import { decryptedWithKeys, headerOf } from './nested-json.js';

/**
 * An `id_token_hint` outside an authorization request (where it is dropped) that is a JWE:
 * - encrypted to the provider's own key, as OpenID Connect Core 3.1.2.1 lets a client re-encrypt it: replaced by the
 *   signed ID token it holds, which oidc-provider then validates as any hint (it decodes signed hints only);
 * - one it cannot decrypt (encrypted to the client, as the client received it) whose protected header carries `iss`,
 *   this `issuer`, and a string `aud`, as oidc-provider writes them: read as that bare `client_id`, the hint dropped.
 *   Anyone can write such a header, so it proves no more than the `client_id` parameter, which needs no proof; beside
 *   another `client_id` it is left, as any other, for oidc-provider to refuse.
 * True when `fields` changed.
 */
export async function openEncryptedHint(fields: Record<string, unknown>, keys: readonly JWK[], issuer: string): Promise<boolean> {
  const hint = fields.id_token_hint;
  if (fields.response_type !== undefined || typeof hint !== 'string' || hint.split('.').length !== 5) return false;
  const inner = await decryptedWithKeys(hint, keys);
  if (inner !== undefined) {
    if (inner.split('.').length !== 3) return false;
    fields.id_token_hint = inner;
    return true;
  }
  const { header } = headerOf(hint);
  const named = header?.iss === issuer && typeof header.aud === 'string' ? header.aud : undefined;
  if (named === undefined || (fields.client_id !== undefined && fields.client_id !== named)) return false;
  delete fields.id_token_hint;
  fields.client_id = named;
  return true;
}

import type { JWK } from 'jose';

import { decryptedWithKeys } from './nested-json.js';

/**
 * An `id_token_hint` outside an authorization request (where it is dropped), encrypted to the provider's own key as
 * OpenID Connect Core 3.1.2.1 lets a client re-encrypt it: replaced by the signed ID token it holds, which
 * oidc-provider then validates as any hint (it decodes signed hints only). One it cannot decrypt (encrypted to the
 * client, as the client received it) is left for oidc-provider to refuse. True when `fields` changed.
 */
export async function openEncryptedHint(fields: Record<string, unknown>, keys: readonly JWK[]): Promise<boolean> {
  const hint = fields.id_token_hint;
  if (fields.response_type !== undefined || typeof hint !== 'string' || hint.split('.').length !== 5) return false;
  const inner = await decryptedWithKeys(hint, keys);
  if (inner === undefined || inner.split('.').length !== 3) return false;
  fields.id_token_hint = inner;
  return true;
}

import type { AdapterPayload, ClientMetadata } from 'oidc-provider';

/** Members of a public JWK the toolbox shows; anything else (private parts, `k`) is left out. */
const PUBLIC_JWK_MEMBERS = new Set(['kty', 'kid', 'use', 'key_ops', 'alg', 'crv', 'x', 'y', 'n', 'e', 'x5c', 'x5t', 'x5t#S256', 'x5u']);

/** True for a metadata member the toolbox never shows: the secret (or its hash) and any other secret or token. */
function isSecretMember(name: string): boolean {
  if (name === 'client_secret_expires_at') return false;
  return /secret|password|registration_access_token|private/i.test(name);
}

function publicJwks(value: unknown): unknown {
  const keys = (value as { keys?: unknown } | undefined)?.keys;
  if (!Array.isArray(keys)) return undefined;
  return {
    keys: keys.map((key) => (key && typeof key === 'object' ? Object.fromEntries(Object.entries(key as Record<string, unknown>).filter(([name]) => PUBLIC_JWK_MEMBERS.has(name))) : {})),
  };
}

/**
 * A client's metadata as the operator sees it: everything but its secret (stored as a hash, shown
 * as neither), registration access tokens or anything else named as a secret; `jwks` keeps only
 * public key members.
 */
export function clientView(metadata: AdapterPayload | ClientMetadata): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(metadata)) {
    if (isSecretMember(name) || name === 'jti' || name === 'consumed') continue;
    view[name] = name === 'jwks' ? publicJwks(value) : value;
  }
  return view;
}

/** The one-line summary of a client in a listing. */
export function clientSummary(metadata: AdapterPayload | ClientMetadata): Record<string, unknown> {
  const pick = (name: string): unknown => (metadata as Record<string, unknown>)[name];
  return {
    client_id: pick('client_id'),
    client_name: pick('client_name'),
    application_type: pick('application_type'),
    redirect_uris: pick('redirect_uris'),
    token_endpoint_auth_method: pick('token_endpoint_auth_method'),
    client_id_issued_at: pick('client_id_issued_at'),
    id_token_encrypted_response_alg: pick('id_token_encrypted_response_alg'),
    userinfo_encrypted_response_alg: pick('userinfo_encrypted_response_alg'),
  };
}

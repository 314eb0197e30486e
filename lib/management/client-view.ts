import type { AdapterPayload, ClientMetadata } from 'oidc-provider';

/** Members of a public JWK the toolbox shows; anything else (private parts, `k`) is left out. */
const PUBLIC_JWK_MEMBERS = new Set(['kty', 'kid', 'use', 'key_ops', 'alg', 'crv', 'x', 'y', 'n', 'e', 'x5c', 'x5t', 'x5t#S256', 'x5u']);

/** Members never shown: the secret (or its hash), any other secret or token, and record bookkeeping. */
const hidden = (name: string): boolean =>
  name !== 'client_secret_expires_at' && (/secret|password|registration_access_token|private/i.test(name) || name === 'jti' || name === 'consumed');

function publicJwks(value: unknown): unknown {
  const keys = (value as { keys?: unknown } | undefined)?.keys;
  if (!Array.isArray(keys)) return undefined;
  const members = (key: unknown): [string, unknown][] => Object.entries(key && typeof key === 'object' ? key : {});
  return { keys: keys.map((key) => Object.fromEntries(members(key).filter(([name]) => PUBLIC_JWK_MEMBERS.has(name)))) };
}

/** A client's metadata as the operator sees it: no secret of any kind; `jwks` with public key members only. */
export function clientView(metadata: AdapterPayload | ClientMetadata): Record<string, unknown> {
  const shown = Object.entries(metadata).filter(([name]) => !hidden(name));
  return Object.fromEntries(shown.map(([name, value]) => [name, name === 'jwks' ? publicJwks(value) : value]));
}

const SUMMARY = ['client_id', 'client_name', 'application_type', 'redirect_uris', 'token_endpoint_auth_method', 'client_id_issued_at'];
const SUMMARY_ENCRYPTION = ['id_token_encrypted_response_alg', 'userinfo_encrypted_response_alg'];

/** The one-line summary of a client in a listing. */
export function clientSummary(metadata: AdapterPayload | ClientMetadata): Record<string, unknown> {
  return Object.fromEntries([...SUMMARY, ...SUMMARY_ENCRYPTION].map((name) => [name, (metadata as Record<string, unknown>)[name]]));
}

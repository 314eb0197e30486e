import { createHash, randomBytes } from 'node:crypto';

import type { ClientMetadata } from 'oidc-provider';

/** A PKCE pair (S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Builds an authorization URL from raw parameters (undefined values are left out). */
export function authorizationUrl(issuer: string, params: Record<string, string | undefined>): string {
  const url = new URL(`${issuer}/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/** Reads `error`/`state`/`code` from a redirect Location (query or fragment). */
export function redirectParams(location: string): URLSearchParams {
  const url = new URL(location);
  return url.hash ? new URLSearchParams(url.hash.slice(1)) : url.searchParams;
}

/** Redeems an authorization code at the token endpoint with client_secret_basic. */
export async function redeemCode(
  issuer: string,
  client: ClientMetadata,
  code: string,
  verifier: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const basic = Buffer.from(`${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret as string)}`).toString('base64');
  const response = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: (client.redirect_uris as string[])[0] as string,
    }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

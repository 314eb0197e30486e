import type Provider from 'oidc-provider';

import { POLICY_NAMES } from '../../policies/index.js';

/** Initial access token lifetime: two days (C6). */
export const INITIAL_ACCESS_TOKEN_TTL = 172_800;

/** A freshly issued initial access token. Hand the value to the invitee only; never log it. */
export interface IssuedInitialAccessToken {
  token: string;
  /** Expiry, epoch seconds. */
  expiresAt: number;
}

/**
 * Issues an initial access token: valid `expiresIn` seconds (default 172800, two days), consumed by
 * the first registration that succeeds with it, carrying every svc-connect registration policy.
 */
export async function issueInitialAccessToken(provider: Provider, options: { expiresIn?: number } = {}): Promise<IssuedInitialAccessToken> {
  const expiresIn = options.expiresIn ?? INITIAL_ACCESS_TOKEN_TTL;
  if (!Number.isInteger(expiresIn) || expiresIn <= 0) throw new TypeError('options.expiresIn must be a positive whole number of seconds');
  // Fixed before the save, so the caller is told what the store holds even across a second boundary.
  const issuedAt = Math.floor(Date.now() / 1000);
  const iat = new provider.InitialAccessToken({ expiresIn, policies: [...POLICY_NAMES], iat: issuedAt, exp: issuedAt + expiresIn });
  const token = await iat.save();
  return { token, expiresAt: issuedAt + expiresIn };
}

/** Destroys an initial access token (e.g. when its invitation mail could not be sent). */
export async function revokeInitialAccessToken(provider: Provider, token: string): Promise<void> {
  const iat = await provider.InitialAccessToken.find(token);
  await iat?.destroy();
}

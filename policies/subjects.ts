import { createHmac } from 'node:crypto';

import type { ClientMetadata } from 'oidc-provider';

/** The subject types svc-connect offers (discovery `subject_types_supported`). */
export const SUBJECT_TYPES = ['public', 'pairwise'] as const;

/** A subject type: the account id as it is, or a value derived per sector (OpenID Connect Core 8). */
export type SubjectType = (typeof SUBJECT_TYPES)[number];

/** The metadata that decides a client's subject type and sector. */
type SubjectMetadata = Pick<ClientMetadata, 'subject_type' | 'sector_identifier_uri' | 'redirect_uris'>;

/**
 * The host of a URL (with port), or for a URL without one (a native app's private-use scheme,
 * `com.example.app:/cb`) its scheme: such apps would otherwise all share the empty sector.
 */
function hostOf(uri: unknown): string | undefined {
  if (typeof uri !== 'string') return undefined;
  try {
    const url = new URL(uri);
    return url.host || url.protocol;
  } catch {
    return undefined;
  }
}

/** The distinct hosts (with port) of a client's redirect URIs; unparsable ones are left to the schema. */
function redirectHosts(metadata: SubjectMetadata): Set<string> {
  const uris = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris : [];
  return new Set(uris.map(hostOf).filter((h): h is string => h !== undefined));
}

/**
 * The subject type a client registered without one gets: `defaultType`, except `public` for a
 * client whose redirect URIs span several hosts and that names no `sector_identifier_uri` (it has
 * no one sector, and OpenID Connect Registration 5 would otherwise refuse it). An explicit type is kept.
 */
export function subjectTypeFor(metadata: SubjectMetadata, defaultType: SubjectType): SubjectType | undefined {
  if (metadata.subject_type !== undefined) return metadata.subject_type;
  if (defaultType === 'pairwise' && metadata.sector_identifier_uri === undefined && redirectHosts(metadata).size > 1) return 'public';
  return defaultType;
}

/**
 * The sector identifier of a pairwise client as oidc-provider computes it (its
 * helpers/sector_identifier.js): the host of `sector_identifier_uri`, else of the first redirect URI;
 * for a redirect URI without a host, its scheme.
 */
export function sectorOf(metadata: SubjectMetadata): string | undefined {
  const fromUri = hostOf(metadata.sector_identifier_uri);
  if (fromUri !== undefined) return fromUri;
  return hostOf(Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris[0] : undefined);
}

/**
 * The pairwise `sub` of an account in a sector: HMAC-SHA-256 under the pairwise key
 * (`svc.subject.pairwise-key`) of the sector and the account id, base64url (43 characters). The
 * two inputs are length-prefixed, so no pair of (sector, account) collides with another by concatenation.
 */
export function pairwiseSub(key: string, sector: string, accountId: string): string {
  return createHmac('sha256', key).update(`${sector.length}:${sector}|${accountId}`).digest('base64url');
}

/**
 * Static clients get the registration default too ({@link subjectTypeFor}); their
 * `sector_identifier_uri` is checked by oidc-provider when first loaded (through our fetch).
 */
export function withSubjectDefaults(clients: readonly ClientMetadata[], defaultType: SubjectType): ClientMetadata[] {
  return clients.map((client) => ({ ...client, subject_type: subjectTypeFor(client, defaultType) }));
}

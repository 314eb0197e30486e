import { createHmac } from 'node:crypto';

import type { ClientMetadata } from 'oidc-provider';

import { isLoopbackHost } from '../lib/net/addresses.js';

/** The subject types svc-connect offers (discovery `subject_types_supported`). */
export const SUBJECT_TYPES = ['public', 'pairwise'] as const;

/** A subject type: the account id as it is, or a value derived per sector (OpenID Connect Core 8). */
export type SubjectType = (typeof SUBJECT_TYPES)[number];

/** The metadata that decides a client's subject type and sector. */
type SubjectMetadata = Pick<ClientMetadata, 'subject_type' | 'sector_identifier_uri' | 'redirect_uris'> & { client_id?: unknown };

/** The host of a URL (with port), or its scheme when it has none (`com.example.app:/cb`), so such apps do not share a sector. */
function hostOf(uri: unknown): string | undefined {
  if (typeof uri !== 'string') return undefined;
  try {
    const url = new URL(uri);
    return url.host || url.protocol;
  } catch {
    return undefined;
  }
}

/**
 * A `sector_identifier_uri` as the sector: the document's URL (without fragment), not only its host as OpenID Connect
 * Core 8.1 names it, so whoever can publish on a shared host (raw.githubusercontent.com, a bucket) cannot join the
 * sector of a relying party that keeps its document there. Clients naming one document share one sector.
 */
function documentOf(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || !URL.canParse(uri)) return undefined;
  const url = new URL(uri);
  url.hash = '';
  return url.href;
}

/**
 * The subject type a client registered without one gets: `defaultType`, except `public` for a
 * client whose redirect URIs span several hosts and that names no `sector_identifier_uri` (it has
 * no one sector, and OpenID Connect Registration 5 would otherwise refuse it). An explicit type is kept.
 */
export function subjectTypeFor(metadata: SubjectMetadata, defaultType: SubjectType): SubjectType | undefined {
  if (metadata.subject_type !== undefined) return metadata.subject_type;
  const uris = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris : [];
  const hosts = new Set(uris.map(hostOf).filter((h) => h !== undefined));
  if (defaultType === 'pairwise' && metadata.sector_identifier_uri === undefined && hosts.size > 1) return 'public';
  return defaultType;
}

/**
 * True for a redirect URI that names no relying party: one on the loopback interface ({@link isLoopbackHost}), where
 * every native app redirects (RFC 8252 7.3), or in a private-use scheme (RFC 8252 7.1, `com.example.app:/cb`), which
 * any app may register and whose authority (`myapp://callback`) is no host.
 */
export function isUnowned(uri: unknown): boolean {
  if (typeof uri !== 'string' || !URL.canParse(uri)) return false;
  const { hostname, protocol } = new URL(uri);
  if (protocol !== 'http:' && protocol !== 'https:') return true;
  return isLoopbackHost(hostname);
}

/**
 * The sector identifier of a pairwise client: its `sector_identifier_uri` ({@link documentOf}), else the host of
 * the first redirect URI (as oidc-provider's helpers/sector_identifier.js), except for a client, native app or web
 * client alike, with a redirect URI that names no relying party ({@link isUnowned}: the loopback interface, a
 * private-use scheme): the client is a sector of its own (a value with a space, which no host has; worded as when only
 * native apps had one, so theirs keep their `sub`s). Any of its redirect URIs, not only the first: a code goes to each,
 * and `com.any.app://rp.example/cb` shares the host of `https://rp.example/cb`.
 */
export function sectorOf(metadata: SubjectMetadata): string | undefined {
  const uris: unknown[] = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris : [];
  const ownSector = metadata.sector_identifier_uri === undefined && uris.some(isUnowned) && typeof metadata.client_id === 'string';
  if (ownSector) return `native client ${String(metadata.client_id)}`;
  return documentOf(metadata.sector_identifier_uri) ?? hostOf(uris[0]);
}

/**
 * The pairwise `sub` of an account in a sector: HMAC-SHA-256 under `svc.subject.pairwise-key`,
 * base64url. The sector is length-prefixed, so no two (sector, account) pairs concatenate alike.
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

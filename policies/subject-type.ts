import type { ClientMetadata } from 'oidc-provider';

import { ROUTE_NAMES } from '../lib/seams.js';
import { isUnowned, sectorOf, subjectTypeFor, SUBJECT_TYPES, type SubjectType } from './subjects.js';
import { budgetedFetch } from './fetch-budget.js';
import { fetchJson, reject, type PolicyDependencies, type RegistrationPolicy } from './types.js';

/**
 * Policy `svc/subject-type` (OpenID Connect Core 8, Registration 2 and 5):
 * - a client registered without `subject_type` gets one ({@link subjectTypeFor}; RFC 7591 3.2.1
 *   lets the server substitute metadata);
 * - a `sector_identifier_uri` is fetched (C11, in the request's one fetch budget) and must list every `redirect_uri` (Registration 5); a pairwise
 *   client naming one has no loopback or private-use redirect URI ({@link isUnowned}): any app receives codes there,
 *   so listing one in a sector document would let any app join that sector;
 *   it is checked at registration and update only (`sectorIdentifierUriValidate`);
 * - an update keeps the `subject_type` and a pairwise client's sector fixed at registration.
 */
export function subjectTypePolicy(deps: PolicyDependencies): RegistrationPolicy {
  return async (ctx, properties) => {
    if (ctx.oidc.route === ROUTE_NAMES.clientUpdate && ctx.oidc.client) keepRegisteredSubject(ctx.oidc.client.metadata(), properties);
    const type = properties.subject_type;
    if (type !== undefined && !(SUBJECT_TYPES as readonly unknown[]).includes(type)) reject('subject_type', 'must be public or pairwise');
    properties.subject_type = subjectTypeFor(properties, deps.defaultSubjectType ?? 'pairwise');
    // oidc-provider derives a pairwise client's sector with new URL(): a non-URL would throw (500).
    if (properties.subject_type === 'pairwise' && !everyRedirectIsUrl(properties)) reject('redirect_uris', 'must be absolute URL strings');
    if (properties.sector_identifier_uri !== undefined) await checkSectorDocument(properties, deps);
  };
}

function everyRedirectIsUrl(properties: ClientMetadata): boolean {
  const uris: unknown = properties.redirect_uris;
  return uris === undefined || (Array.isArray(uris) && uris.every((uri) => typeof uri === 'string' && URL.canParse(uri)));
}

function keepRegisteredSubject(stored: ClientMetadata, properties: ClientMetadata): void {
  const registered: SubjectType = stored.subject_type ?? 'public';
  if (properties.subject_type === undefined) properties.subject_type = registered;
  else if (properties.subject_type !== registered) reject('subject_type', `is fixed at registration (${registered}); register a new client to change it`);
  if (registered !== 'pairwise') return;
  if (properties.sector_identifier_uri === undefined && stored.sector_identifier_uri !== undefined) {
    properties.sector_identifier_uri = stored.sector_identifier_uri;
  }
  const before = sectorOf(stored);
  const after = sectorOf({ ...properties, client_id: stored.client_id });
  if (after !== undefined && after !== before) {
    const field = properties.sector_identifier_uri !== undefined ? 'sector_identifier_uri' : 'redirect_uris';
    reject(field, `would move the pairwise sector from ${String(before)} to ${after}; the sector is fixed at registration`);
  }
}

async function checkSectorDocument(properties: ClientMetadata, deps: PolicyDependencies): Promise<void> {
  const uri = properties.sector_identifier_uri;
  if (typeof uri !== 'string') reject('sector_identifier_uri', 'must be a URL string');
  if (!URL.canParse(uri)) reject('sector_identifier_uri', 'must be an absolute https URL');
  const unowned = properties.subject_type === 'pairwise' ? (properties.redirect_uris ?? []).filter(isUnowned) : [];
  if (unowned.length > 0) {
    reject('sector_identifier_uri', `cannot group ${unowned.join(', ')}: a loopback or private-use redirect URI names no relying party (any app on the device receives codes there); use claimed https redirect URIs, or register the app without sector_identifier_uri (a sector of its own)`);
  }
  const url = new URL(uri);
  const listed = await fetchJson(budgetedFetch(properties, deps), url.href, 'application/json', 'sector_identifier_uri', 'could not be fetched: ');
  if (!Array.isArray(listed) || !listed.every((v): v is string => typeof v === 'string')) {
    reject('sector_identifier_uri', `${url.href}: the response must be a JSON array of URL strings`);
  }
  const urls = new Set<string>(listed);
  const redirects: unknown[] = Array.isArray(properties.redirect_uris) ? properties.redirect_uris : [];
  const missing = redirects.filter((r) => typeof r !== 'string' || !urls.has(r)).map(String);
  if (missing.length > 0) {
    reject('sector_identifier_uri', `${url.href} does not list every redirect_uri (missing ${missing.join(', ')}); OpenID Connect Registration 5`);
  }
}

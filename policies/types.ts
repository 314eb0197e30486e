import type { ClientMetadata, KoaContextWithOIDC } from 'oidc-provider';
import { errors } from 'oidc-provider';

import type { FetchedDocument } from '../lib/net/fetch.js';

/**
 * A registration policy (oidc-provider `features.registration.policies`): runs on every
 * registration and update, may adjust `properties`, and rejects with `invalid_client_metadata`.
 */
export type RegistrationPolicy = (ctx: KoaContextWithOIDC, properties: ClientMetadata) => Promise<void>;

/** What policies may use from the outside world. */
export interface PolicyDependencies {
  /** The guarded outbound fetch of C11 (for `jwks_uri` and `x5u`). */
  fetch: (url: string, accept: string) => Promise<FetchedDocument>;
  /** The subject type of a client registered without one (`svc.subject.default-type`); default `pairwise`. */
  defaultSubjectType?: 'public' | 'pairwise';
  /** The provider is served over https: a redirect URI must then be https, or http on the loopback interface. */
  httpsOnly?: boolean;
}

/** Rejects the registration: 400 `invalid_client_metadata` with "`field`: `rule`". */
export function reject(field: string, rule: string): never {
  throw new errors.InvalidClientMetadata(`${field}: ${rule}`);
}

/** The text of a document a policy fetches for `field`; rejects (`where` before the reason) on a failed fetch or a non-200. */
export async function fetchText(fetch: PolicyDependencies['fetch'], url: string, accept: string, field: string, where = ''): Promise<string> {
  try {
    const doc = await fetch(url, accept);
    if (doc.status !== 200) reject(field, `${where}${url}: answered HTTP ${doc.status}, expected 200`);
    return doc.body.toString('utf8');
  } catch (err) {
    if ((err as { name?: string }).name === 'OutboundFetchError') reject(field, `${where}${(err as Error).message}`);
    throw err;
  }
}

/** {@link fetchText}, parsed as JSON; rejects naming the URL when it is not JSON. */
export async function fetchJson(fetch: PolicyDependencies['fetch'], url: string, accept: string, field: string, where = ''): Promise<unknown> {
  const text = await fetchText(fetch, url, accept, field, where);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return reject(field, `${url}: the response is not JSON`);
  }
}


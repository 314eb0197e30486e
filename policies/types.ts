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
  fetch(url: string, accept: string): Promise<FetchedDocument>;
  /** The subject type of a client registered without one (`svc.subject.default-type`); default `pairwise`. */
  defaultSubjectType?: 'public' | 'pairwise';
}

/** Rejects the registration: 400 `invalid_client_metadata` with "`field`: `rule`". */
export function reject(field: string, rule: string): never {
  throw new errors.InvalidClientMetadata(`${field}: ${rule}`);
}

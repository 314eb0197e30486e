import { servedMetadataPolicy } from './served-metadata.js';
import { algorithmsPolicy } from './algorithms.js';
import { certificatesPolicy } from './certificates.js';
import { keyVettingPolicy } from './key-vetting.js';
import { privacyMetadataPolicy } from './privacy-metadata.js';
import { redirectUrisPolicy } from './redirect-uris.js';
import { signatureKeysPolicy } from './signature-keys.js';
import { subjectTypePolicy } from './subject-type.js';
import type { PolicyDependencies, RegistrationPolicy } from './types.js';

/** The registration policies applied to every registration and update, in this order. */
export const POLICY_NAMES = ['svc/redirect-uris', 'svc/served-metadata', 'svc/algorithms', 'svc/privacy-metadata', 'svc/certificates', 'svc/key-vetting', 'svc/signature-keys', 'svc/subject-type'] as const;

/** Builds the named policies (oidc-provider's `features.registration.policies`). */
export function createRegistrationPolicies(deps: PolicyDependencies): Record<(typeof POLICY_NAMES)[number], RegistrationPolicy> {
  return {
    'svc/redirect-uris': redirectUrisPolicy(deps),
    'svc/served-metadata': servedMetadataPolicy,
    'svc/algorithms': algorithmsPolicy,
    'svc/privacy-metadata': privacyMetadataPolicy,
    'svc/certificates': certificatesPolicy(deps),
    'svc/key-vetting': keyVettingPolicy(deps),
    'svc/signature-keys': signatureKeysPolicy(deps),
    'svc/subject-type': subjectTypePolicy(deps),
  };
}

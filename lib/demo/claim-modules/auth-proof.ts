import { createHash } from 'node:crypto';

import type { ClaimModule } from '../../claims/modules.js';
import type { PersonLookup } from './demo-data.js';

/**
 * Authentication claims (`svc.auth.*`): a proof that a check was executed, never the data used in
 * it. Provides `svc.auth.mobile.l2.otp`: when a one-time password sent to the person's verified
 * mobile number was confirmed, and an opaque proof reference; the phone number is not included.
 */
export function authProofModule(lookup: PersonLookup): ClaimModule {
  return {
    name: 'auth-proof',
    provides: ['svc.auth.mobile.l2.otp'],
    async resolve(accountId) {
      const completedAt = (await lookup(accountId))?.mobileOtpCompletedAt;
      if (completedAt === undefined) return {};
      const proof = createHash('sha256').update(`otp:${accountId}:${completedAt}`).digest('base64url');
      return { 'svc.auth.mobile.l2.otp': { executed: true, method: 'otp', completed_at: completedAt, proof } };
    },
  };
}

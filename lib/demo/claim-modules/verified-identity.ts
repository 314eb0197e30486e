import type { ClaimModule } from '../../claims/modules.js';
import type { PersonLookup } from './demo-data.js';

/**
 * Verification claims (`svc.ver.*`): objects holding the verified attributes and when they were
 * verified. Provides `svc.ver.idcard.l3.nfc`, `svc.ver.email.l2` and `svc.ver.mobile.l2.api`.
 */
export function verifiedIdentityModule(lookup: PersonLookup): ClaimModule {
  return {
    name: 'verified-identity',
    provides: ['svc.ver.idcard.l3.nfc', 'svc.ver.email.l2', 'svc.ver.mobile.l2.api'],
    async resolve(accountId, claims) {
      const person = await lookup(accountId);
      const available: Record<string, unknown> = {
        'svc.ver.idcard.l3.nfc': person?.idcard,
        'svc.ver.email.l2': person?.verifiedEmail,
        'svc.ver.mobile.l2.api': person?.verifiedMobile,
      };
      const out: Record<string, unknown> = {};
      for (const claim of claims) if (available[claim] !== undefined) out[claim] = { ...(available[claim] as object) };
      return out;
    },
  };
}

import type { ClaimModule } from '../../claims/modules.js';
import type { PersonLookup } from './demo-data.js';

/** The sample custom claim of the spec: a health insurance member number. */
export const HEALTH_INSURANCE_CLAIM = 'demo.ver.healthinsurance.l0.api.demo';

/** Provides the health insurance member number (scopes `svc.insurance`, `svc.insurance.verified`). */
export function healthInsuranceModule(lookup: PersonLookup): ClaimModule {
  return {
    name: 'health-insurance',
    provides: [HEALTH_INSURANCE_CLAIM],
    async resolve(accountId) {
      const number = (await lookup(accountId))?.healthInsuranceNumber;
      return number === undefined ? {} : { [HEALTH_INSURANCE_CLAIM]: number };
    },
  };
}

import type { ClaimModule } from '../../claims/modules.js';
import { authProofModule } from './auth-proof.js';
import { DEMO_PEOPLE, tableLookup, type DemoPerson } from './demo-data.js';
import { emailModule } from './email.js';
import { healthInsuranceModule } from './health-insurance.js';
import { personModule } from './person.js';
import { verifiedIdentityModule } from './verified-identity.js';

export { DEMO_PEOPLE, tableLookup, type DemoPerson, type PersonLookup } from './demo-data.js';
export { HEALTH_INSURANCE_CLAIM } from './health-insurance.js';
export { DEMO_RECORD_TYPES, DEMO_TRUST_FRAMEWORK, DEMO_VERIFIED_OFFER, verifiedRecords } from './verified-identity.js';
export { authProofModule, emailModule, healthInsuranceModule, personModule, verifiedIdentityModule };

/** Every example module over one data table (default: the demo accounts of C8). */
export function createDemoClaimModules(people: Readonly<Record<string, DemoPerson>> = DEMO_PEOPLE): ClaimModule[] {
  const lookup = tableLookup(people);
  return [personModule(lookup), emailModule(lookup), healthInsuranceModule(lookup), verifiedIdentityModule(lookup), authProofModule(lookup)];
}

/**
 * `svc-connect/examples`: the example claim modules (over the demo data or a lookup of your own),
 * and the users file (scrypt hashes and claims) with its authenticator and claim module, for
 * trying svc-connect out and as models for your own (docs/claim-modules.md, docs/operations/production.md).
 * @packageDocumentation
 */
export {
  authProofModule,
  createDemoClaimModules,
  DEMO_PEOPLE,
  emailModule,
  HEALTH_INSURANCE_CLAIM,
  healthInsuranceModule,
  personModule,
  tableLookup,
  verifiedIdentityModule,
  type DemoPerson,
  type PersonLookup,
} from '../lib/demo/claim-modules.js';
export { fileAuthenticator } from './authenticator-file.js';
export { fileClaimModule } from './claims-file.js';
export { hashPassword, readUsersFile, usersFilePath, verifyPassword, USERS_FILE_ENV, type FileUser } from './users-file.js';

import { randomBytes } from 'node:crypto';

import type { ClaimModule } from '../claims/modules.js';
import type { Evidence, VerifiedOffer, VerifiedRecord } from '../claims/verified.js';

/** The data of a demo person, as a claim module's backing store would hold it. */
export interface DemoPerson {
  name?: string;
  given_name?: string;
  family_name?: string;
  birthdate?: string;
  email?: string;
  email_verified?: boolean;
  healthInsuranceNumber?: string;
  /** ID card data verified by reading its NFC chip (level 3). */
  idcard?: { given_name: string; family_name: string; birthdate: string; nationality: string; verified_at: string };
  /** Driving licence data checked by video (level 2). */
  driverslicense?: { given_name: string; family_name: string; birthdate: string; verified_at: string };
  /** E-mail address verified at level 2. */
  verifiedEmail?: { email: string; verified_at: string };
  /** Mobile number verified at level 2 through an operator API. */
  verifiedMobile?: { phone_number: string; verified_at: string };
  /** When the person last completed a mobile one-time-password check (level 2), an ISO 8601 date-time. */
  mobileOtpCompletedAt?: string;
}

/** The demo accounts' data (C8), keyed by account id (the `sub`). */
export const DEMO_PEOPLE: Readonly<Record<string, DemoPerson>> = {
  'demo-0001': {
    name: 'Erika Mustermann',
    given_name: 'Erika',
    family_name: 'Mustermann',
    birthdate: '1964-08-12',
    email: 'erika.mustermann@example.com',
    email_verified: true,
    healthInsuranceNumber: 'A123456780',
    idcard: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', nationality: 'DE', verified_at: '2025-03-01T10:15:00Z' },
    verifiedEmail: { email: 'erika.mustermann@example.com', verified_at: '2025-03-01T10:20:00Z' },
    verifiedMobile: { phone_number: '+4915123456789', verified_at: '2025-03-02T08:00:00Z' },
    mobileOtpCompletedAt: '2025-03-02T08:01:00Z',
  },
  'demo-0002': {
    name: 'Max Mustermann',
    email: 'max.mustermann@example.com',
    verifiedEmail: { email: 'max.mustermann@example.com', verified_at: '2025-04-10T12:00:00Z' },
  },
};

/** Finds a person's data; the modules call this for every resolution. */
export type PersonLookup = (accountId: string) => DemoPerson | undefined | Promise<DemoPerson | undefined>;

/** A lookup over a fixed table, by its own keys: an account id such as `constructor` is no person of every object. */
export function tableLookup(table: Readonly<Record<string, DemoPerson>> = DEMO_PEOPLE): PersonLookup {
  return (accountId) => (Object.hasOwn(table, accountId) ? table[accountId] : undefined);
}

/** Provides `name`, `given_name`, `family_name` and `birthdate` (scope `profile`). */
export function personModule(lookup: PersonLookup): ClaimModule {
  return {
    name: 'person',
    provides: ['name', 'given_name', 'family_name', 'birthdate'],
    async resolve(accountId, claims) {
      const person = await lookup(accountId);
      const out: Record<string, unknown> = {};
      for (const claim of claims) {
        const value = person?.[claim as 'name' | 'given_name' | 'family_name' | 'birthdate'];
        if (value !== undefined) out[claim] = value;
      }
      return out;
    },
  };
}

/** Provides `email` and `email_verified` (scope `email`). */
export function emailModule(lookup: PersonLookup): ClaimModule {
  // The person module's resolve reads any field of the person it is asked for.
  return { ...personModule(lookup), name: 'email', provides: ['email', 'email_verified'] };
}

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

/** The demo's trust framework: our own, domain-qualified (none predefined describes its checks); levels `l2`, `l3`. */
export const DEMO_TRUST_FRAMEWORK = 'https://svc-connect.example/trust-frameworks/demo';

/** The demo's electronic record types: a confirmed e-mail address, a confirmed mobile number. */
const DEMO_RECORD_TYPES = {
  email: 'https://svc-connect.example/record-types/email-confirmation',
  mobile: 'https://svc-connect.example/record-types/mobile-confirmation',
} as const;

/** What the demo's verifications can contain (discovery's Identity Assurance fields). */
export const DEMO_VERIFIED_OFFER: VerifiedOffer = {
  trustFrameworks: [DEMO_TRUST_FRAMEWORK],
  evidence: ['document', 'electronic_record'],
  documents: ['idcard', 'driving_permit'],
  documentCheckMethods: ['vcrypt', 'vri', 'pvr'],
  // IDA predefines no record for a confirmed e-mail address or mobile number: our own, domain-qualified.
  electronicRecords: [DEMO_RECORD_TYPES.email, DEMO_RECORD_TYPES.mobile],
  claims: ['given_name', 'family_name', 'birthdate', 'nationalities', 'email', 'phone_number'],
};

const record = (level: string, time: string, evidence: Evidence, claims: Record<string, unknown>): VerifiedRecord => ({
  verification: { trust_framework: DEMO_TRUST_FRAMEWORK, assurance_level: level, time, evidence: [evidence] },
  claims,
});
const document = (type: string, time: string, ...methods: string[]): Evidence => ({
  type: 'document',
  document_details: { type },
  check_details: methods.map((check_method) => ({ check_method, time })),
  time,
});
const confirmed = (type: string, method: string, time: string, claims: Record<string, unknown>): VerifiedRecord =>
  record('l2', time, { type: 'electronic_record', record: { type }, check_details: [{ check_method: method, time }] }, claims);

/**
 * The person's svc.ver.* data as Identity Assurance records: an NFC-read ID card checked `vcrypt`, a
 * driving licence checked by video (`vri`, `pvr`), an e-mail address confirmed by code (`auth`), a
 * mobile number matched in the operator's records (`data`).
 */
export function verifiedRecords(person: DemoPerson | undefined): VerifiedRecord[] {
  const { idcard, driverslicense: licence, verifiedEmail: email, verifiedMobile: mobile } = person ?? {};
  const records: VerifiedRecord[] = [];
  if (idcard) {
    const { given_name, family_name, birthdate, nationality, verified_at: at } = idcard;
    records.push(record('l3', at, document('idcard', at, 'vcrypt'), { given_name, family_name, birthdate, nationalities: [nationality] }));
  }
  if (licence) {
    const { given_name, family_name, birthdate, verified_at: at } = licence;
    records.push(record('l2', at, document('driving_permit', at, 'vri', 'pvr'), { given_name, family_name, birthdate }));
  }
  if (email) records.push(confirmed(DEMO_RECORD_TYPES.email, 'auth', email.verified_at, { email: email.email }));
  if (mobile) records.push(confirmed(DEMO_RECORD_TYPES.mobile, 'data', mobile.verified_at, { phone_number: mobile.phone_number }));
  return records;
}

/** `svc.ver.idcard.l3.nfc`, `svc.ver.email.l2`, `svc.ver.mobile.l2.api`, and the same data as `verified_claims`. */
export function verifiedIdentityModule(lookup: PersonLookup): ClaimModule {
  return {
    name: 'verified-identity',
    provides: ['svc.ver.idcard.l3.nfc', 'svc.ver.email.l2', 'svc.ver.mobile.l2.api'],
    holds: {
      'svc.ver.idcard.l3.nfc': 'name, date of birth, nationality and when it was read',
      'svc.ver.email.l2': 'the address and when it was confirmed',
      'svc.ver.mobile.l2.api': 'the number and when it was confirmed',
    },
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
    verified: {
      offer: DEMO_VERIFIED_OFFER,
      resolve: async (accountId) => verifiedRecords(await lookup(accountId)),
    },
  };
}

/**
 * `svc.auth.mobile.l2.otp`: on which day a one-time password was confirmed and an opaque proof, never the phone number.
 * The proof is random for each delivery: one derived from the account would be the same at every relying party, and a
 * guessed account id hashed with the delivered time would confirm it behind a pairwise `sub`. The day, not the second:
 * the moment she confirmed one is nearly hers alone, the same at every relying party, so they could join on it.
 */
export function authProofModule(lookup: PersonLookup): ClaimModule {
  return {
    name: 'auth-proof',
    provides: ['svc.auth.mobile.l2.otp'],
    async resolve(accountId) {
      const completedAt = (await lookup(accountId))?.mobileOtpCompletedAt;
      if (completedAt === undefined) return {};
      return { 'svc.auth.mobile.l2.otp': { executed: true, method: 'otp', completed_at: completedAt.slice(0, 10), proof: randomBytes(32).toString('base64url') } };
    },
  };
}

/** Every example module over one data table (default: the demo accounts of C8). */
export function createDemoClaimModules(people: Readonly<Record<string, DemoPerson>> = DEMO_PEOPLE): ClaimModule[] {
  const lookup = tableLookup(people);
  return [personModule(lookup), emailModule(lookup), healthInsuranceModule(lookup), verifiedIdentityModule(lookup), authProofModule(lookup)];
}

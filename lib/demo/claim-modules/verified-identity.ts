import type { ClaimModule } from '../../claims/modules.js';
import type { VerifiedOffer, VerifiedRecord } from '../../claims/verified.js';
import type { DemoPerson, PersonLookup } from './demo-data.js';

/**
 * The demo's trust framework for Identity Assurance: an identifier of our own, domain-qualified
 * (no predefined trust framework describes the demo's checks). Its assurance levels are the svc.*
 * levels (`l2`, `l3`).
 */
export const DEMO_TRUST_FRAMEWORK = 'https://svc-connect.example/trust-frameworks/demo';

/** The demo's electronic record types: a confirmed e-mail address, a confirmed mobile number. */
export const DEMO_RECORD_TYPES = {
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

/**
 * The person's svc.ver.* data in the Identity Assurance shape: an ID card read by NFC is `document`
 * evidence of type `idcard` checked cryptographically (`vcrypt`); a driving licence checked by video
 * is a `driving_permit` whose image was inspected remotely (`vri`) and whose holder a person
 * compared by video (`pvr`); a verified e-mail address or mobile number is `electronic_record`
 * evidence, confirmed by a code sent to it (`auth`) or matched in the operator's records (`data`).
 */
export function verifiedRecords(person: DemoPerson | undefined): VerifiedRecord[] {
  const records: VerifiedRecord[] = [];
  const idcard = person?.idcard;
  if (idcard) {
    records.push({
      verification: {
        trust_framework: DEMO_TRUST_FRAMEWORK,
        assurance_level: 'l3',
        time: idcard.verified_at,
        evidence: [{ type: 'document', document_details: { type: 'idcard' }, check_details: [{ check_method: 'vcrypt', time: idcard.verified_at }], time: idcard.verified_at }],
      },
      claims: { given_name: idcard.given_name, family_name: idcard.family_name, birthdate: idcard.birthdate, nationalities: [idcard.nationality] },
    });
  }
  const licence = person?.driverslicense;
  if (licence) {
    records.push({
      verification: {
        trust_framework: DEMO_TRUST_FRAMEWORK,
        assurance_level: 'l2',
        time: licence.verified_at,
        evidence: [
          {
            type: 'document',
            document_details: { type: 'driving_permit' },
            check_details: [
              { check_method: 'vri', time: licence.verified_at },
              { check_method: 'pvr', time: licence.verified_at },
            ],
            time: licence.verified_at,
          },
        ],
      },
      claims: { given_name: licence.given_name, family_name: licence.family_name, birthdate: licence.birthdate },
    });
  }
  const email = person?.verifiedEmail;
  if (email) {
    records.push({
      verification: { trust_framework: DEMO_TRUST_FRAMEWORK, assurance_level: 'l2', time: email.verified_at, evidence: [{ type: 'electronic_record', record: { type: DEMO_RECORD_TYPES.email }, check_details: [{ check_method: 'auth', time: email.verified_at }] }] },
      claims: { email: email.email },
    });
  }
  const mobile = person?.verifiedMobile;
  if (mobile) {
    records.push({
      verification: { trust_framework: DEMO_TRUST_FRAMEWORK, assurance_level: 'l2', time: mobile.verified_at, evidence: [{ type: 'electronic_record', record: { type: DEMO_RECORD_TYPES.mobile }, check_details: [{ check_method: 'data', time: mobile.verified_at }] }] },
      claims: { phone_number: mobile.phone_number },
    });
  }
  return records;
}

/**
 * Verification claims (`svc.ver.*`): objects holding the verified attributes and when they were
 * verified. Provides `svc.ver.idcard.l3.nfc`, `svc.ver.email.l2` and `svc.ver.mobile.l2.api`, and
 * the same data (with a video-checked driving licence) as Identity Assurance `verified_claims`.
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
    verified: {
      offer: DEMO_VERIFIED_OFFER,
      resolve: async (accountId) => verifiedRecords(await lookup(accountId)),
    },
  };
}

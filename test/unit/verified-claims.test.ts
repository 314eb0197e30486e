import { describe, expect, it } from '@jest/globals';

import { DEMO_PEOPLE, DEMO_TRUST_FRAMEWORK, DEMO_VERIFIED_OFFER, verifiedRecords } from '../../lib/demo/claim-modules.js';
import { answerVerified } from '../../lib/claims/verified-answer.js';
import { parseVerifiedClaims, storedVerified, verifiedClaimGrant, verifiedDetailGrant, verifiedGrantNames, verifiedRequestsOf, type VerifiedRequest } from '../../lib/claims/verified-request.js';

const erika = verifiedRecords(DEMO_PEOPLE['demo-0001']);
/** Parses `spec` as the `userinfo` member, then reads it back from its stored form. */
const roundTrip = (spec: unknown): VerifiedRequest[] => verifiedRequestsOf(JSON.parse(JSON.stringify({ verified_claims: storedVerified(parseVerifiedClaims('userinfo', spec, DEMO_VERIFIED_OFFER)) })));
const everything = (requests: readonly VerifiedRequest[]): Set<string> => new Set(verifiedGrantNames(requests));
const ISSUED = Date.parse('2025-03-01T10:15:00Z');

describe('verified_claims requests and answers', () => {
  it('keeps a request through its stored form unchanged', () => {
    const spec = {
      verification: { trust_framework: { values: ['a', 'a', DEMO_TRUST_FRAMEWORK] }, assurance_level: null, time: { max_age: 5 }, evidence: [{ type: { value: 'document' }, check_details: [{ check_method: { value: 'vcrypt' } }], document_details: { type: null } }] },
      claims: { given_name: { essential: true }, birthdate: null },
    };
    expect(roundTrip(spec)).toEqual([
      {
        trustFramework: ['a', DEMO_TRUST_FRAMEWORK],
        assuranceLevel: {},
        time: { maxAge: 5 },
        evidence: [{ type: ['document'], checkMethod: ['vcrypt'], members: ['check_details', 'document_details'] }],
        claims: { given_name: true, birthdate: false },
      },
    ]);
  });

  it('needs a grant name per verified claim and per detail asked for', () => {
    expect(verifiedGrantNames(roundTrip({ verification: { evidence: [{ type: null }] }, claims: { given_name: null, email: null } })).sort()).toEqual(
      [verifiedClaimGrant('email'), verifiedClaimGrant('given_name'), verifiedDetailGrant('evidence')].sort(),
    );
  });

  it('delivers only the claims the grant records, and a detail only when it records it', () => {
    const requests = roundTrip({ verification: { time: null, evidence: [{ type: null }] }, claims: { given_name: null, family_name: null } });
    const granted = new Set([verifiedClaimGrant('given_name')]);
    expect(answerVerified(requests, erika, granted)).toEqual({ verification: { trust_framework: DEMO_TRUST_FRAMEWORK }, claims: { given_name: 'Erika' } });
    expect(answerVerified(requests, erika, new Set())).toBeUndefined();
  });

  it('keeps an element within max_age to the second, and leaves it out one second later', () => {
    const requests = roundTrip({ verification: { time: { max_age: 100 } }, claims: { given_name: null } });
    expect(answerVerified(requests, erika, everything(requests), ISSUED + 100_000)).toEqual({
      verification: { trust_framework: DEMO_TRUST_FRAMEWORK, time: '2025-03-01T10:15:00Z' },
      claims: { given_name: 'Erika' },
    });
    expect(answerVerified(requests, erika, everything(requests), ISSUED + 101_000)).toBeUndefined();
  });

  it('answers several verifications as an array, each with the claims it covers', () => {
    const requests = roundTrip({ verification: { trust_framework: null }, claims: { given_name: null, email: null, phone_number: null } });
    expect(answerVerified(requests, erika, everything(requests))).toEqual([
      { verification: { trust_framework: DEMO_TRUST_FRAMEWORK }, claims: { given_name: 'Erika' } },
      { verification: { trust_framework: DEMO_TRUST_FRAMEWORK }, claims: { email: 'erika.mustermann@example.com' } },
      { verification: { trust_framework: DEMO_TRUST_FRAMEWORK }, claims: { phone_number: '+4915123456789' } },
    ]);
  });

  it('answers the same element once when two request elements select it', () => {
    const element = { verification: { trust_framework: null }, claims: { birthdate: null } };
    const requests = roundTrip([element, element]);
    expect(answerVerified(requests, erika, everything(requests))).toEqual({ verification: { trust_framework: DEMO_TRUST_FRAMEWORK }, claims: { birthdate: '1964-08-12' } });
  });

  it('matches a check method among several checks, and an assurance level', () => {
    const max = verifiedRecords(DEMO_PEOPLE['demo-0002']);
    const requests = roundTrip({ verification: { assurance_level: { value: 'l2' }, evidence: [{ type: null, check_details: [{ check_method: { value: 'pvr' } }] }] }, claims: { family_name: null } });
    expect(answerVerified(requests, max, everything(requests))).toEqual({
      verification: {
        trust_framework: DEMO_TRUST_FRAMEWORK,
        assurance_level: 'l2',
        evidence: [{ type: 'document', check_details: [{ check_method: 'vri', time: '2025-04-10T11:30:00Z' }, { check_method: 'pvr', time: '2025-04-10T11:30:00Z' }] }],
      },
      claims: { family_name: 'Mustermann' },
    });
    expect(answerVerified(requests, erika, everything(requests))).toBeUndefined();
  });

  it('reads nothing from a stored form it did not write', () => {
    for (const forged of [null, 'x', { verified_claims: { svc_vc: 'x' } }, { verified_claims: { svc_vc: [{ claims: 'x' }, 3] } }, { verified_claims: [{ claims: { given_name: null } }] }]) {
      expect(verifiedRequestsOf(forged)).toEqual([]);
    }
  });

  it('refuses a request when no module provides verified data, and a claim outside the offer', () => {
    const refusal = (f: () => unknown): unknown => {
      try {
        f();
      } catch (err) {
        return err;
      }
      return undefined;
    };
    expect(refusal(() => parseVerifiedClaims('id_token', { verification: {}, claims: { given_name: null } }, undefined))).toMatchObject({
      error: 'invalid_request',
      error_description: 'claims.id_token.verified_claims: no claim module provides verified claims',
    });
    expect(refusal(() => parseVerifiedClaims('id_token', { verification: {}, claims: { name: null } }, DEMO_VERIFIED_OFFER))).toMatchObject({
      error: 'invalid_request',
      error_description: 'claims.id_token.verified_claims.claims.name: is not a claim this provider verifies (see claims_in_verified_claims_supported)',
    });
  });
});

import { describe, expect, it } from '@jest/globals';

import { DEMO_PEOPLE, DEMO_TRUST_FRAMEWORK, DEMO_VERIFIED_OFFER, tableLookup, verifiedIdentityModule, verifiedRecords } from '../../lib/demo/claim-modules.js';
import type { VerifiedRecord } from '../../lib/claims/verified.js';
import { answerVerified } from '../../lib/claims/verified-answer.js';
import { LICENSED_DEMO_BASIC } from '../helpers/claims-requests.js';
import { ClaimRegistry } from '../../lib/claims/modules.js';
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
      [verifiedClaimGrant('email'), verifiedClaimGrant('given_name'), verifiedDetailGrant('evidence', 'email'), verifiedDetailGrant('evidence', 'given_name')].sort(),
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
    const max = verifiedRecords(LICENSED_DEMO_BASIC);
    const requests = roundTrip({ verification: { assurance_level: { value: 'l2' }, evidence: [{ type: null, check_details: [{ check_method: { value: 'pvr' } }] }] }, claims: { family_name: null } });
    expect(answerVerified(requests, max, everything(requests))).toEqual({
      verification: {
        trust_framework: DEMO_TRUST_FRAMEWORK,
        assurance_level: 'l2',
        evidence: [{ type: 'document', check_details: [{ check_method: 'vri' }, { check_method: 'pvr' }] }],
      },
      claims: { family_name: 'Mustermann' },
    });
    expect(answerVerified(requests, erika, everything(requests))).toBeUndefined();
  });

  it('delivers no time of the check (evidence or check_details) without consent to when it was checked', () => {
    const requests = roundTrip({ verification: { evidence: [{ type: null, time: null, check_details: [{ check_method: null, time: null }] }] }, claims: { given_name: null } });
    expect(verifiedGrantNames(requests)).toContain(verifiedDetailGrant('time', 'given_name'));
    // A grant from an earlier consent to the evidence alone ("how it was checked"), not to "when".
    const howOnly = new Set([verifiedClaimGrant('given_name'), verifiedDetailGrant('evidence', 'given_name')]);
    expect(answerVerified(requests, erika, howOnly)).toEqual({
      verification: { trust_framework: DEMO_TRUST_FRAMEWORK, evidence: [{ type: 'document', check_details: [{ check_method: 'vcrypt' }] }] },
      claims: { given_name: 'Erika' },
    });
    expect(answerVerified(requests, erika, everything(requests))).toEqual({
      verification: { trust_framework: DEMO_TRUST_FRAMEWORK, evidence: [{ type: 'document', time: '2025-03-01T10:15:00Z', check_details: [{ check_method: 'vcrypt', time: '2025-03-01T10:15:00Z' }] }] },
      claims: { given_name: 'Erika' },
    });
  });

  it('delivers of document_details, check_details and record only the members the request names', () => {
    const held = [
      {
        verification: {
          trust_framework: DEMO_TRUST_FRAMEWORK,
          evidence: [
            {
              type: 'document',
              document_details: { type: 'idcard', document_number: 'T22000129', date_of_expiry: '2031-01-01', issuer: { country: 'DE' } },
              check_details: [{ check_method: 'vcrypt', organization: 'Checker GmbH', txn: 'tx-0001' }],
            },
            { type: 'electronic_record', record: { type: 'population_register', personal_number: 'P-12345' } },
          ],
        },
        claims: { given_name: 'Erika' },
      },
    ];
    const hostile = roundTrip({ verification: { evidence: [{ type: null, document_details: { type: null }, check_details: null, record: null }] }, claims: { given_name: null } });
    expect(answerVerified(hostile, held, everything(hostile))).toEqual({
      verification: {
        trust_framework: DEMO_TRUST_FRAMEWORK,
        evidence: [
          { type: 'document', document_details: { type: 'idcard' }, check_details: [{ check_method: 'vcrypt' }] },
          { type: 'electronic_record', record: { type: 'population_register' } },
        ],
      },
      claims: { given_name: 'Erika' },
    });
    const honest = roundTrip({
      verification: { evidence: [{ type: null, document_details: { type: null, document_number: null, issuer: null, constructor: null }, check_details: [{ check_method: null, organization: null, txn: null }], record: { personal_number: null } }] },
      claims: { given_name: null },
    });
    // Consent to the evidence of her first name, not to the numbers of her documents: no number travels, nor the
    // check's reference (one value for every client, so it would link her across pairwise subjects).
    expect(verifiedGrantNames(honest)).toContain(verifiedDetailGrant('numbers', 'given_name'));
    const withoutNumbers = new Set([...everything(honest)].filter((n) => n !== verifiedDetailGrant('numbers', 'given_name')));
    expect(answerVerified(honest, held, withoutNumbers)).toMatchObject({
      verification: { evidence: [{ document_details: { type: 'idcard', issuer: { country: 'DE' } } }, { record: { type: 'population_register' } }] },
    });
    expect(JSON.stringify(answerVerified(honest, held, withoutNumbers))).not.toMatch(/T22000129|P-12345|tx-0001/);
    expect(answerVerified(honest, held, everything(honest))).toEqual({
      verification: {
        trust_framework: DEMO_TRUST_FRAMEWORK,
        evidence: [
          { type: 'document', document_details: { type: 'idcard', document_number: 'T22000129', issuer: { country: 'DE' } }, check_details: [{ check_method: 'vcrypt', organization: 'Checker GmbH', txn: 'tx-0001' }] },
          { type: 'electronic_record', record: { type: 'population_register', personal_number: 'P-12345' } },
        ],
      },
      claims: { given_name: 'Erika' },
    });
  });

  it('delivers a verification detail only when she consented to it for every claim it comes with', () => {
    const requests = roundTrip({ verification: { assurance_level: null, evidence: [{ type: null }] }, claims: { email: null } });
    // Consent to the evidence and level of her first name's verification says nothing of her e-mail's.
    const forName = new Set([verifiedClaimGrant('given_name'), verifiedClaimGrant('email'), verifiedDetailGrant('evidence', 'given_name'), verifiedDetailGrant('assurance_level', 'given_name')]);
    expect(answerVerified(requests, erika, forName)).toEqual({ verification: { trust_framework: DEMO_TRUST_FRAMEWORK }, claims: { email: 'erika.mustermann@example.com' } });
    expect(answerVerified(requests, erika, everything(requests))).toEqual({
      verification: { trust_framework: DEMO_TRUST_FRAMEWORK, assurance_level: 'l2', evidence: [{ type: 'electronic_record' }] },
      claims: { email: 'erika.mustermann@example.com' },
    });
  });

  it('applies the record type and evidence max_age filters: an unsatisfied one leaves the element out', () => {
    const held = [
      {
        verification: { trust_framework: DEMO_TRUST_FRAMEWORK, evidence: [{ type: 'electronic_record', record: { type: 'utility_account' }, time: '2025-03-01T10:15:00Z' }] },
        claims: { phone_number: '+4915123456789' },
      },
    ];
    const answer = (evidence: unknown, now = ISSUED + 1000): unknown => {
      const requests = roundTrip({ verification: { evidence: [evidence] }, claims: { phone_number: null } });
      return answerVerified(requests, held, everything(requests), now);
    };
    expect(answer({ type: null, record: { type: { value: 'bank_account' } } })).toBeUndefined();
    expect(answer({ type: null, time: { max_age: 60 } }, ISSUED + 61_000)).toBeUndefined();
    expect(answer({ type: null, record: { type: { values: ['bank_account', 'utility_account'] } } })).toEqual({
      verification: { trust_framework: DEMO_TRUST_FRAMEWORK, evidence: [{ type: 'electronic_record', record: { type: 'utility_account' } }] },
      claims: { phone_number: '+4915123456789' },
    });
    expect(answer({ type: null, time: { max_age: 60 } }, ISSUED + 60_000)).toEqual({
      verification: { trust_framework: DEMO_TRUST_FRAMEWORK, evidence: [{ type: 'electronic_record', time: '2025-03-01T10:15:00Z' }] },
      claims: { phone_number: '+4915123456789' },
    });
  });

  it('answers each piece of evidence once, however many evidence requests select it', () => {
    const many = roundTrip({ verification: { evidence: Array.from({ length: 200 }, () => ({ type: null, check_details: null })) }, claims: { given_name: null } });
    const one = roundTrip({ verification: { evidence: [{ type: null, check_details: null }] }, claims: { given_name: null } });
    expect(answerVerified(many, erika, everything(many))).toEqual(answerVerified(one, erika, everything(one)));
    expect(answerVerified(one, erika, everything(one))).toEqual({
      verification: { trust_framework: DEMO_TRUST_FRAMEWORK, evidence: [{ type: 'document', check_details: [{ check_method: 'vcrypt' }] }] },
      claims: { given_name: 'Erika' },
    });
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
  it('counts a purpose in characters, not UTF-16 code units (3 to 300)', () => {
    const refusalOf = (purpose: string): string | undefined => {
      try {
        parseVerifiedClaims('userinfo', { verification: {}, claims: { given_name: { purpose } } }, DEMO_VERIFIED_OFFER);
        return undefined;
      } catch (err) {
        return (err as { error_description?: string }).error_description;
      }
    };
    const outside = 'claims.userinfo.verified_claims.claims.given_name: purpose must be a string of 3 to 300 characters';
    expect(['\u{1F600}'.repeat(200), '\u{20000}'.repeat(300), '\u{1F600}\u{1F600}', '\u{1F600}'.repeat(301)].map(refusalOf)).toEqual([undefined, undefined, outside, outside]);
  });
});

describe('a claim module offering electronic_record evidence', () => {
  const module = (electronicRecords?: string[]) =>
    new ClaimRegistry([
      {
        name: 'records',
        provides: ['email'],
        resolve: () => ({}),
        verified: { offer: { ...DEMO_VERIFIED_OFFER, ...(electronicRecords ? { electronicRecords } : { electronicRecords: undefined }) }, resolve: () => [] },
      },
    ]);

  it('must say which records (IDA 1.0: electronic_records_supported is required with electronic_record), and then discovery has them', () => {
    expect(() => module()).toThrow('an offer with electronic_record evidence must list its record types (electronicRecords)');
    expect(() => module([])).toThrow('electronicRecords');
    expect(module(['https://records.example/bank']).offer?.electronicRecords).toEqual(['https://records.example/bank']);
  });
});

describe('the verified data a claim module answers is read as the schema types it (Identity Assurance Schema Definition 1.0)', () => {
  const answering = (answer: () => unknown) =>
    new ClaimRegistry([{ name: 'sloppy', provides: [], resolve: () => ({}), verified: { offer: DEMO_VERIFIED_OFFER, resolve: answer as () => VerifiedRecord[] } }]);
  const held = (verification: Record<string, unknown>, claims: Record<string, unknown> = { given_name: 'Erika' }) => [{ verification: { trust_framework: DEMO_TRUST_FRAMEWORK, ...verification }, claims }];
  const document = (details: Record<string, unknown>) => held({ evidence: [{ type: 'document', ...details }] });

  it.each([
    ['one record, not a list of them', 'verified_claims', () => held({})[0]],
    ['no record', 'verified_claims', () => [null]],
    ['no verification', 'verification', () => [{ verification: null, claims: { given_name: 'Erika' } }]],
    ['no claims', 'claims', () => [{ verification: { trust_framework: DEMO_TRUST_FRAMEWORK } }]],
    ['a trust framework that is a database row', 'trust_framework', () => held({ trust_framework: { id: 7, tax_id: 'SENTINEL-TAX' } })],
    ['an assurance level as a number', 'assurance_level', () => held({ assurance_level: 3 })],
    ['evidence that is not a list', 'evidence', () => held({ evidence: 'SENTINEL-PASSPORT' })],
    ['evidence that is no object', 'evidence', () => held({ evidence: [null] })],
    ['evidence without a type', 'type', () => held({ evidence: [{ document_details: { type: 'idcard' } }] })],
    ['an evidence type carrying the whole document', 'type', () => held({ evidence: [{ type: { kind: 'document', number: 'SENTINEL-NUMBER' } }] })],
    ['checks that are not a list', 'check_details', () => document({ check_details: 'vcrypt' })],
    ['a check that is no object', 'check_details', () => document({ check_details: [null] })],
    ['a check method as a list', 'check_method', () => document({ check_details: [{ check_method: ['vcrypt'] }] })],
    ['a document type as a number', 'type', () => document({ document_details: { type: 7 } })],
    ['a document number as a number', 'document_number', () => document({ document_details: { type: 'idcard', document_number: 22000129 } })],
    ['an issuer carrying nested data', 'issuer', () => document({ document_details: { type: 'idcard', issuer: { name: 'Stadt Köln', officer: { name: 'SENTINEL-OFFICER' } } } })],
    ['an issuer keyed by what it holds', 'issuer', () => document({ document_details: { type: 'idcard', issuer: { SENTINEL9: 1 } } })],
    ['a verified first name carrying more than the name', 'given_name', () => held({}, { given_name: { first: 'Erika', tax_id: 'SENTINEL-TAX' } })],
    ['nationalities as one string', 'nationalities', () => held({}, { nationalities: 'DE' })],
  ])('attack: %s fails as a throw would, naming the member, never a value', async (_case, member, answer) => {
    const failure = await answering(answer).resolveVerified('demo-0001').then(() => undefined, (err: unknown) => err);
    expect(failure).toMatchObject({ name: 'ClaimModuleError', plugin: 'sloppy', thrown: { name: 'ClaimModuleAnswerInvalid', code: member } });
    expect(JSON.stringify(failure) + String(failure)).not.toMatch(/SENTINEL|Erika|vcrypt/);
  });

  it('honest: the demo records are read unchanged', async () => {
    const demo = new ClaimRegistry([verifiedIdentityModule(tableLookup())]);
    expect(await demo.resolveVerified('demo-0001')).toEqual(erika);
  });

  it('honest: a null member is one she lacks (as a claim module answers null), and members the schema does not name are never read', async () => {
    const sloppy = answering(() => [
      {
        id: 9,
        verification: {
          trust_framework: DEMO_TRUST_FRAMEWORK,
          assurance_level: null,
          time: null,
          verification_process: { internal: 'x' },
          evidence: [{ type: 'document', time: null, attachments: [{ blob: 'x' }], document_details: { type: 'idcard', document_number: null, issuer: { name: 'Stadt Köln', country: null } }, check_details: [{ check_method: 'vcrypt', organization: null }] }],
        },
        claims: { given_name: 'Erika', family_name: null },
      },
    ]);
    const records = await sloppy.resolveVerified('demo-0001');
    expect(records).toEqual([
      {
        verification: {
          trust_framework: DEMO_TRUST_FRAMEWORK,
          evidence: [{ type: 'document', document_details: { type: 'idcard', issuer: { name: 'Stadt Köln' } }, check_details: [{ check_method: 'vcrypt' }] }],
        },
        claims: { given_name: 'Erika' },
      },
    ]);
    const requests = roundTrip({
      verification: { assurance_level: null, time: null, evidence: [{ type: null, time: null, document_details: { type: null, document_number: null, issuer: null }, check_details: [{ check_method: null, organization: null }] }] },
      claims: { given_name: null, family_name: null },
    });
    expect(JSON.stringify(answerVerified(requests, records, everything(requests)))).not.toContain('null');
    // A verification whose claims she all lacks is no element: it would say she was verified with nothing to show.
    const lacking = await answering(() => held({}, { given_name: null, family_name: null })).resolveVerified('demo-0001');
    expect(answerVerified(requests, lacking, everything(requests))).toBeUndefined();
  });
});

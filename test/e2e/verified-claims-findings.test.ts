import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules, DEMO_TRUST_FRAMEWORK } from '../../lib/demo/claim-modules.js';
import { createStore, loadSettings } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { registerClient, registeredClientUrl, type RegisteredClient } from '../helpers/clients.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { redirectParams, runCodeFlow, userData } from '../helpers/flow.js';

const NOT_HERE = 'is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)';
const MAX_AGE_ON_FILTER = 'max_age is not supported here (it filters the time of the verification or of an evidence)';
const P = 'claims.userinfo.verified_claims';

describe('verified_claims: a constraint the provider would not apply is refused, never ignored (docs/claims.md)', () => {
  let running: RunningApp;
  let store: CountingStore;
  let rsa: RegisteredClient;

  beforeAll(async () => {
    store = countingStore(createStore(loadSettings({ env: {}, properties: {} }).redis));
    running = await startApp({ store, claimModules: createDemoClaimModules() });
    rsa = await registerClient(running, 'rsa');
  });
  afterAll(async () => running.close());

  const given = { given_name: null };
  const ask = (verified: unknown): string => registeredClientUrl(running.issuer, rsa, { claims: JSON.stringify({ userinfo: { verified_claims: verified } }) });

  it.each([
    // A max_age beside a value filter: meant to bound the age of what it filters, it would bound nothing.
    ['a max_age on the evidence type', { verification: { evidence: [{ type: { value: 'document', max_age: 3600 } }] }, claims: given }, `${P}.verification.evidence[0].type: ${MAX_AGE_ON_FILTER}`],
    ['a max_age on the trust framework', { verification: { trust_framework: { max_age: 60 } }, claims: given }, `${P}.verification.trust_framework: ${MAX_AGE_ON_FILTER}`],
    ['a max_age on the assurance level', { verification: { assurance_level: { values: ['l3'], max_age: 60 } }, claims: given }, `${P}.verification.assurance_level: ${MAX_AGE_ON_FILTER}`],
    ['a max_age on the document type', { verification: { evidence: [{ type: null, document_details: { type: { max_age: 60 } } }] }, claims: given }, `${P}.verification.evidence[0].document_details.type: ${MAX_AGE_ON_FILTER}`],
    ['a max_age on a check method', { verification: { evidence: [{ type: null, check_details: [{ check_method: { max_age: 60 } }] }] }, claims: given }, `${P}.verification.evidence[0].check_details[0].check_method: ${MAX_AGE_ON_FILTER}`],
    ['a max_age on a verified claim', { verification: {}, claims: { given_name: { max_age: 60 } } }, `${P}.claims.given_name: max_age is not supported on verified claims (filter the time of the verification instead)`],
    // A constraint placed beside the members it was meant for.
    ['a max_age beside the verification members', { verification: { trust_framework: null, max_age: 60 }, claims: given }, `${P}.verification: max_age ${NOT_HERE}`],
    ['a value beside an evidence type', { verification: { evidence: [{ type: null, value: 'document' }] }, claims: given }, `${P}.verification.evidence[0]: value ${NOT_HERE}`],
    ['a max_age beside an evidence type', { verification: { evidence: [{ type: null, max_age: 3600 }] }, claims: given }, `${P}.verification.evidence[0]: max_age ${NOT_HERE}`],
    ['values beside a document type', { verification: { evidence: [{ type: null, document_details: { type: null, values: ['passport'] } }] }, claims: given }, `${P}.verification.evidence[0].document_details: values ${NOT_HERE}`],
    ['a value beside a check method', { verification: { evidence: [{ type: null, check_details: [{ check_method: null, value: 'vpip' }] }] }, claims: given }, `${P}.verification.evidence[0].check_details[0]: value ${NOT_HERE}`],
    ['a max_age beside verification and claims', { verification: {}, claims: given, max_age: 60 }, `${P}: max_age ${NOT_HERE}`],
  ])('attack: %s → invalid_request naming it, redirected with state, nothing stored', async (_case, verified, description) => {
    const interactions = store.writes('Interaction');
    const response = await fetch(ask(verified), { redirect: 'manual' });
    const params = redirectParams(response.headers.get('location') as string);
    expect([params.get('error'), params.get('error_description'), params.get('state')]).toEqual(['invalid_request', description, 'st']);
    expect(store.writes('Interaction')).toBe(interactions);
  });

  it('honest: max_age on the time of the verification and of an evidence, value filters, and null members anywhere are served', async () => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, {
      configure: rsa.configure,
      params: {
        claims: JSON.stringify({
          userinfo: {
            verified_claims: {
              verification: {
                trust_framework: { value: DEMO_TRUST_FRAMEWORK, essential: true, purpose: 'To know the rules' },
                time: { max_age: 100 * 365 * 86_400 },
                verification_process: null,
                evidence: [{ type: { value: 'document' }, time: { max_age: 100 * 365 * 86_400 }, document_details: { type: { values: ['idcard', 'passport'] }, issuer: { country: null } }, check_details: [{ check_method: { value: 'vcrypt' } }] }],
              },
              claims: { given_name: { essential: true, purpose: 'To address you by name' } },
            },
          },
        }),
      },
    });
    expect(userData(flow.userinfo)).toEqual({
      verified_claims: {
        verification: {
          trust_framework: DEMO_TRUST_FRAMEWORK,
          time: '2025-03-01T10:15:00Z',
          evidence: [{ type: 'document', time: '2025-03-01T10:15:00Z', document_details: { type: 'idcard' }, check_details: [{ check_method: 'vcrypt' }] }],
        },
        claims: { given_name: 'Erika' },
      },
    });
  });
});

describe('verified_claims: a purpose is counted in characters (Identity Assurance: 3 to 300 characters)', () => {
  let running: RunningApp;
  let rsa: RegisteredClient;

  beforeAll(async () => {
    running = await startApp({ claimModules: createDemoClaimModules() });
    rsa = await registerClient(running, 'rsa');
  });
  afterAll(async () => running.close());

  const outcome = async (purpose: string): Promise<[string | null, string | null]> => {
    const url = registeredClientUrl(running.issuer, rsa, { claims: JSON.stringify({ userinfo: { verified_claims: { verification: {}, claims: { given_name: { purpose } } } } }) });
    const location = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') as string, running.issuer);
    return location.pathname.includes('/interaction/') ? ['interaction', null] : [location.searchParams.get('error'), location.searchParams.get('error_description')];
  };

  it('honest: a purpose of 200 characters outside the Basic Multilingual Plane (400 UTF-16 code units) is served', async () => {
    expect(await outcome('\u{1F600}'.repeat(200))).toEqual(['interaction', null]);
    expect(await outcome('\u{20000}'.repeat(300))).toEqual(['interaction', null]);
  });

  it('a purpose of two such characters (four code units) is too short', async () => {
    expect(await outcome('\u{1F600}\u{1F600}')).toEqual(['invalid_request', `${P}.claims.given_name: purpose must be a string of 3 to 300 characters`]);
    expect(await outcome('\u{1F600}'.repeat(301))).toEqual(['invalid_request', `${P}.claims.given_name: purpose must be a string of 3 to 300 characters`]);
  });
});

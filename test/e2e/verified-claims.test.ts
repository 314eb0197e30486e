import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createDemoClaimModules, DEMO_PEOPLE, DEMO_TRUST_FRAMEWORK } from '../../lib/demo/claim-modules.js';
import { createStore, loadSettings } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { registerClient, type RegisteredClient, registeredClientUrl } from '../helpers/clients.js';
import { countingModules, LICENSED_DEMO_BASIC } from '../helpers/claims-requests.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { manage } from '../helpers/registration.js';
import { FormBrowser, redirectParams, runCodeFlow, signIn, userData } from '../helpers/flow.js';

/** A `verified_claims` request for the person's name and date of birth, with the given verification request. */
const nameAndBirthdate = (verification: Record<string, unknown>, claims: Record<string, unknown> = { given_name: null, family_name: null, birthdate: null }): Record<string, unknown> => ({
  verification,
  claims,
});

const IDCARD_EVIDENCE = {
  type: 'document',
  document_details: { type: 'idcard' },
  check_details: [{ check_method: 'vcrypt', time: '2025-03-01T10:15:00Z' }],
};

describe('verified_claims (OpenID Connect for Identity Assurance 1.0)', () => {
  let running: RunningApp;
  let store: CountingStore;
  let rsa: RegisteredClient;
  let optout: RegisteredClient;
  let calls = { count: 0 };

  beforeAll(async () => {
    store = countingStore(createStore(loadSettings({ env: {}, properties: {} }).redis));
    const counted = countingModules(createDemoClaimModules({ ...DEMO_PEOPLE, 'demo-0002': LICENSED_DEMO_BASIC }));
    calls = counted.calls;
    running = await startApp({ store, claimModules: counted.modules });
    [rsa, optout] = await Promise.all([registerClient(running, 'rsa'), registerClient(running, 'optout')]);
  });
  afterAll(async () => running.close());

  /** A code flow for `client` asking for `verified` in UserInfo; the decrypted UserInfo's user data. */
  const userinfoFor = async (verified: unknown, options: { browser?: FormBrowser; login?: string } = {}): Promise<Record<string, unknown>> => {
    const flow = await runCodeFlow(running.issuer, rsa.metadata, {
      configure: rsa.configure,
      params: { claims: JSON.stringify({ userinfo: { verified_claims: verified } }) },
      ...options,
      password: options.login,
    });
    expect(userData(flow.claims)).toEqual({});
    return userData(flow.userinfo);
  };

  /** An authorization URL for `client` with PKCE and state `st`. */
  const urlFor = (client: RegisteredClient, params: Record<string, string>): string => registeredClientUrl(running.issuer, client, params);

  it('advertises exactly what the modules verify in discovery', async () => {
    const discovery = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery).toMatchObject({
      claims_parameter_supported: true,
      verified_claims_supported: true,
      trust_frameworks_supported: [DEMO_TRUST_FRAMEWORK],
      evidence_supported: ['document', 'electronic_record'],
      documents_supported: ['idcard', 'driving_permit'],
      documents_check_methods_supported: ['vcrypt', 'vri', 'pvr'],
      claims_in_verified_claims_supported: ['given_name', 'family_name', 'birthdate', 'nationalities', 'email', 'phone_number'],
    });
    expect(discovery.claims_supported).toContain('verified_claims');
    // Dropped before the final text: never advertised.
    for (const dropped of ['documents_methods_supported', 'documents_validation_methods_supported', 'documents_verification_methods_supported', 'id_documents_supported']) {
      expect(discovery).not.toHaveProperty(dropped);
    }
  });

  it('advertises electronic_records_supported as the final text requires when evidence_supported has electronic_record, and its evidence says which record', async () => {
    const discovery = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery.evidence_supported).toContain('electronic_record');
    // IDA 1.0 final, OP metadata: electronic_records_supported is "Required when evidence_supported contains electronic_record".
    const records = discovery.electronic_records_supported;
    expect(Array.isArray(records) && records.length > 0).toBe(true);
    const answer = await userinfoFor({ verification: { evidence: [{ type: { value: 'electronic_record' }, record: null }] }, claims: { email: null } });
    const evidence = (answer.verified_claims as { verification: { evidence: { record?: { type?: string } }[] } }).verification.evidence;
    expect(records).toContain(evidence[0]?.record?.type);
  });

  it('delivers given_name, family_name and birthdate with the trust framework and evidence asked for, in the decrypted UserInfo', async () => {
    const answer = await userinfoFor(nameAndBirthdate({ trust_framework: null, evidence: [{ type: { value: 'document' }, document_details: null, check_details: null }] }));
    expect(answer).toEqual({
      verified_claims: {
        // When the ID card was checked is not asked for: the check travels without its time.
        verification: { trust_framework: DEMO_TRUST_FRAMEWORK, evidence: [{ ...IDCARD_EVIDENCE, check_details: [{ check_method: 'vcrypt' }] }] },
        claims: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12' },
      },
    });
  });

  it('answers a request shaped as in the final text: members it never holds asked with null, purposes, an evidence max_age', async () => {
    const answer = await userinfoFor({
      verification: {
        trust_framework: null,
        time: null,
        verification_process: null,
        evidence: [{ type: { value: 'document' }, time: { max_age: 100 * 365 * 86_400 }, document_details: { type: null, document_number: null, issuer: { country: null } } }],
      },
      claims: { given_name: { purpose: 'To address you by name' }, family_name: null, birthdate: { essential: true, purpose: 'To check your age' } },
    });
    expect(answer).toEqual({
      verified_claims: {
        verification: { trust_framework: DEMO_TRUST_FRAMEWORK, time: '2025-03-01T10:15:00Z', evidence: [{ type: 'document', time: '2025-03-01T10:15:00Z', document_details: { type: 'idcard' } }] },
        claims: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12' },
      },
    });
  });

  it('delivers no evidence, time or level when the request does not ask for them', async () => {
    const answer = await userinfoFor(nameAndBirthdate({ trust_framework: null }));
    expect(answer).toEqual({
      verified_claims: { verification: { trust_framework: DEMO_TRUST_FRAMEWORK }, claims: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12' } },
    });
  });

  it('filters on the document type and check method, and answers in the ID token too', async () => {
    const verified = nameAndBirthdate(
      { trust_framework: { value: DEMO_TRUST_FRAMEWORK }, time: { max_age: 10 * 365 * 86_400 }, evidence: [{ type: { value: 'document' }, document_details: { type: { values: ['driving_permit', 'idcard'] } }, check_details: [{ check_method: { value: 'vcrypt' } }] }] },
      { given_name: { essential: true } },
    );
    const flow = await runCodeFlow(running.issuer, rsa.metadata, { configure: rsa.configure, params: { claims: JSON.stringify({ id_token: { verified_claims: verified } }) } });
    expect(userData(flow.claims)).toEqual({
      verified_claims: {
        verification: { trust_framework: DEMO_TRUST_FRAMEWORK, time: '2025-03-01T10:15:00Z', evidence: [{ type: 'document', document_details: { type: 'idcard' }, check_details: [{ check_method: 'vcrypt' }] }] },
        claims: { given_name: 'Erika' },
      },
    });
    expect(userData(flow.userinfo)).toEqual({});
  });

  it.each([
    ['an unknown trust framework', { trust_framework: { value: 'eidas' } }],
    ['a document type the person does not hold', { trust_framework: null, evidence: [{ type: { value: 'document' }, document_details: { type: { value: 'passport' } } }] }],
    ['a check method not used', { trust_framework: null, evidence: [{ type: { value: 'document' }, check_details: [{ check_method: { value: 'vpip' } }] }] }],
    ['a max_age the verification is older than', { trust_framework: null, time: { max_age: 60 } }],
  ])('leaves the element out for %s, even with an essential claim in it, and still answers with a code', async (_case, verification) => {
    const answer = await userinfoFor(nameAndBirthdate(verification, { given_name: { essential: true }, family_name: null }));
    expect(answer).toEqual({});
  });

  it('answers only the satisfied elements of an array, and the driving licence of another person', async () => {
    const verified = [
      nameAndBirthdate({ trust_framework: { value: 'eidas' } }),
      nameAndBirthdate({ trust_framework: null, evidence: [{ type: { value: 'document' }, document_details: { type: { value: 'driving_permit' } }, check_details: null }] }),
    ];
    expect(await userinfoFor(verified)).toEqual({});
    expect(await userinfoFor(verified, { login: 'demo-basic' })).toEqual({
      verified_claims: {
        verification: {
          trust_framework: DEMO_TRUST_FRAMEWORK,
          evidence: [
            {
              type: 'document',
              document_details: { type: 'driving_permit' },
              check_details: [{ check_method: 'vri' }, { check_method: 'pvr' }],
            },
          ],
        },
        claims: { given_name: 'Max', family_name: 'Mustermann', birthdate: '1962-05-03' },
      },
    });
  });

  it('shows the consent page again when the same client asks for one more verified claim, and not for the same request', async () => {
    const browser = new FormBrowser();
    const first = { verification: { trust_framework: null }, claims: { given_name: null } };
    expect(await userinfoFor(first, { browser })).toEqual({ verified_claims: { verification: { trust_framework: DEMO_TRUST_FRAMEWORK }, claims: { given_name: 'Erika' } } });
    const origin = new URL(running.issuer).origin;
    const again = await browser.follow(urlFor(rsa, { claims: JSON.stringify({ userinfo: { verified_claims: first } }) }), origin);
    expect(redirectParams(again.leftTo as string).get('code')).toBeTruthy();

    const more = await browser.follow(urlFor(rsa, { claims: JSON.stringify({ userinfo: { verified_claims: { ...first, claims: { given_name: null, birthdate: null } } } }) }), origin);
    expect(more.leftTo).toBeUndefined();
    expect(browser.lastPage).toContain('id="consent-allow"');
    expect(browser.lastPage).toContain('your first name and date of birth, as verified by an identity check');

    const evidence = await browser.follow(urlFor(rsa, { claims: JSON.stringify({ userinfo: { verified_claims: { verification: { trust_framework: null, evidence: [{ type: null }] }, claims: { given_name: null } } } }) }), origin);
    expect(evidence.leftTo).toBeUndefined();
    expect(browser.lastPage).toContain('with how it was checked');

    const promptNone = await browser.follow(urlFor(rsa, { prompt: 'none', claims: JSON.stringify({ userinfo: { verified_claims: { ...first, claims: { family_name: null } } } }) }), origin);
    expect(redirectParams(promptNone.leftTo as string).get('error')).toBe('consent_required');
  });

  it('shows the consent page again before the time of a check travels, and before the evidence of another verified claim does', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    const origin = new URL(running.issuer).origin;
    const ask = (verified: unknown, params: Record<string, string> = {}) => browser.follow(urlFor(client, { claims: JSON.stringify({ userinfo: { verified_claims: verified } }), ...params }), origin);
    const how = { verification: { trust_framework: null, evidence: [{ type: null, check_details: null }] }, claims: { given_name: null } };
    await signIn(urlFor(client, { claims: JSON.stringify({ userinfo: { verified_claims: how } }) }), { browser });
    // Honest: the same request again needs no second consent.
    expect(redirectParams((await ask(how)).leftTo as string).get('code')).toBeTruthy();

    // The time of the check (in the evidence or in its checks) is "when it was checked", the
    // document's number and the check's reference a detail of their own: each asked anew.
    for (const [evidence, words] of [
      [{ type: null, time: null }, 'and when it was checked'],
      [{ type: null, check_details: [{ check_method: null, time: null }] }, 'and when it was checked'],
      [{ type: null, document_details: { type: null, document_number: null } }, 'and the number of the document or record checked, or the reference of the check'],
      [{ type: null, check_details: [{ check_method: null, txn: null }] }, 'and the number of the document or record checked, or the reference of the check'],
    ] as const) {
      const again = await ask({ ...how, verification: { trust_framework: null, evidence: [evidence] } }, { prompt: 'none' });
      expect(redirectParams(again.leftTo as string).get('error')).toBe('consent_required');
      await ask({ ...how, verification: { trust_framework: null, evidence: [evidence] } });
      expect(browser.lastPage).toContain(`your first name, as verified by an identity check, with how it was checked (for example which document and how) ${words}`);
    }

    // Her e-mail address without its evidence, then with it: the evidence of the e-mail's verification is asked anew.
    await ask({ verification: { trust_framework: null }, claims: { email: null } });
    await browser.submit('consent-allow', {}, origin);
    const emailHow = await ask({ verification: { trust_framework: null, evidence: [{ type: null, check_details: null }] }, claims: { email: null } }, { prompt: 'none' });
    expect(redirectParams(emailHow.leftTo as string).get('error')).toBe('consent_required');
  });

  it('asks no module before consent: the consent page, consent_required with prompt=none, access_denied when she denies', async () => {
    const client = await registerClient(running, 'rsa');
    const browser = new FormBrowser();
    await signIn(urlFor(client, {}), { browser });
    const claims = JSON.stringify({ userinfo: { verified_claims: nameAndBirthdate({ trust_framework: { value: 'eidas' } }, { given_name: { essential: true } }) } });
    const before = calls.count;
    await browser.follow(urlFor(client, { claims }), running.baseUrl);
    expect(browser.lastPage).toContain('id="consent-allow"');
    const silent = await browser.follow(urlFor(client, { claims, prompt: 'none' }), running.baseUrl);
    expect(redirectParams(silent.leftTo as string).get('error')).toBe('consent_required');
    const denied = await signIn(urlFor(client, { claims }), { browser, consent: 'deny' });
    expect(denied.callbackUrl.searchParams.get('error')).toBe('access_denied');
    expect(calls.count).toBe(before);
    // Allowed: an essential verified claim no verification satisfies is left out, never access_denied.
    expect((await signIn(urlFor(client, { claims }), { browser })).callbackUrl.searchParams.get('code')).toBeTruthy();
  });

  it.each([
    ['no verification', { claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification: is required and must be an object'],
    ['empty claims', { verification: { trust_framework: null }, claims: {} }, 'claims.userinfo.verified_claims.claims: must name at least one claim'],
    ['a claim nobody verifies', { verification: { trust_framework: null }, claims: { shoe_size: null } }, 'claims.userinfo.verified_claims.claims.shoe_size: is not a claim this provider verifies (see claims_in_verified_claims_supported)'],
    ['a value on a verified claim', { verification: { trust_framework: null }, claims: { given_name: { value: 'Erika' } } }, 'claims.userinfo.verified_claims.claims.given_name: value and values are not supported on verified claims (filter the verification instead)'],
    ['a non-string value filter', { verification: { trust_framework: { value: 1 } }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.trust_framework: value must be a string'],
    ['an empty values filter', { verification: { trust_framework: { values: [] } }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.trust_framework: values must be an array of 1 to 32 strings'],
    ['a negative max_age', { verification: { time: { max_age: -1 } }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.time: max_age must be a non-negative integer (seconds)'],
    ['evidence that is not an array', { verification: { evidence: { type: null } }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.evidence: must be a non-empty array of objects'],
    ['a non-boolean essential', { verification: {}, claims: { given_name: { essential: 'yes' } } }, 'claims.userinfo.verified_claims.claims.given_name: essential must be true or false'],
    [
      'a value on a document number',
      { verification: { evidence: [{ type: null, document_details: { type: null, document_number: { value: 'T22000129' } } }] }, claims: { given_name: null } },
      'claims.userinfo.verified_claims.verification.evidence[0].document_details.document_number: value and values are not supported on evidence details',
    ],
    [
      'a filter on a verification member never filtered',
      { verification: { trust_framework: null, verification_process: { value: 'f24c6f-6d3f-4ec5-973e-b0d8506f3bc7' } }, claims: { given_name: null } },
      'claims.userinfo.verified_claims.verification.verification_process: value is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)',
    ],
    [
      'a max_age on the time of a check',
      { verification: { evidence: [{ type: null, check_details: [{ check_method: null, time: { max_age: 60 } }] }] }, claims: { given_name: null } },
      'claims.userinfo.verified_claims.verification.evidence[0].check_details[0].time: max_age is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)',
    ],
    [
      'a filter nested in a document detail',
      { verification: { evidence: [{ type: null, document_details: { type: null, issuer: { country: { value: 'DE' } } } }] }, claims: { given_name: null } },
      'claims.userinfo.verified_claims.verification.evidence[0].document_details.issuer.country: value is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)',
    ],
    [
      'a member nested a thousand levels deep',
      { verification: { verification_process: JSON.parse(`${'['.repeat(1000)}${']'.repeat(1000)}`) as unknown }, claims: { given_name: null } },
      `claims.userinfo.verified_claims.verification.verification_process${'[0]'.repeat(16)}: is nested more than 16 levels deep`,
    ],
    // A max_age beside a value filter: meant to bound the age of what it filters, it would bound nothing.
    ['a max_age on the evidence type', { verification: { evidence: [{ type: { value: 'document', max_age: 3600 } }] }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.evidence[0].type: max_age is not supported here (it filters the time of the verification or of an evidence)'],
    ['a max_age on the trust framework', { verification: { trust_framework: { max_age: 60 } }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.trust_framework: max_age is not supported here (it filters the time of the verification or of an evidence)'],
    ['a max_age on the assurance level', { verification: { assurance_level: { values: ['l3'], max_age: 60 } }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.assurance_level: max_age is not supported here (it filters the time of the verification or of an evidence)'],
    ['a max_age on the document type', { verification: { evidence: [{ type: null, document_details: { type: { max_age: 60 } } }] }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.evidence[0].document_details.type: max_age is not supported here (it filters the time of the verification or of an evidence)'],
    ['a max_age on a check method', { verification: { evidence: [{ type: null, check_details: [{ check_method: { max_age: 60 } }] }] }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.evidence[0].check_details[0].check_method: max_age is not supported here (it filters the time of the verification or of an evidence)'],
    ['a max_age on a verified claim', { verification: {}, claims: { given_name: { max_age: 60 } } }, 'claims.userinfo.verified_claims.claims.given_name: max_age is not supported on verified claims (filter the time of the verification instead)'],
    // A constraint placed beside the members it was meant for.
    ['a max_age beside the verification members', { verification: { trust_framework: null, max_age: 60 }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification: max_age is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)'],
    ['a value beside an evidence type', { verification: { evidence: [{ type: null, value: 'document' }] }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.evidence[0]: value is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)'],
    ['a max_age beside an evidence type', { verification: { evidence: [{ type: null, max_age: 3600 }] }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.evidence[0]: max_age is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)'],
    ['values beside a document type', { verification: { evidence: [{ type: null, document_details: { type: null, values: ['passport'] } }] }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.evidence[0].document_details: values is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)'],
    ['a value beside a check method', { verification: { evidence: [{ type: null, check_details: [{ check_method: null, value: 'vpip' }] }] }, claims: { given_name: null } }, 'claims.userinfo.verified_claims.verification.evidence[0].check_details[0]: value is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)'],
    ['a max_age beside verification and claims', { verification: {}, claims: { given_name: null }, max_age: 60 }, 'claims.userinfo.verified_claims: max_age is not supported here (filters apply to trust_framework, assurance_level, time, and evidence type, time, document_details.type, record.type and check_details check_method)'],
    ['our own stored form sent as a request', { svc_vc: [{ claims: { given_name: false } }] }, 'claims.userinfo.verified_claims.verification: is required and must be an object'],
    ['an empty array', [], 'claims.userinfo.verified_claims: must be an object or a non-empty array'],
    ['a string element', [{ verification: {}, claims: { given_name: null } }, 'x'], 'claims.userinfo.verified_claims[1]: must be an object with verification and claims'],
  ])('refuses %s with invalid_request naming the fault, storing nothing', async (_case, verified, description) => {
    const interactions = store.writes('Interaction');
    const response = await fetch(urlFor(rsa, { claims: JSON.stringify({ userinfo: { verified_claims: verified } }) }), { redirect: 'manual' });
    const params = redirectParams(response.headers.get('location') as string);
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toBe(description);
    expect(params.get('state')).toBe('st');
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

  it('refuses verified_claims on a channel not encrypted to the client, even with its plaintext opt-out', async () => {
    const response = await fetch(urlFor(optout, { claims: JSON.stringify({ userinfo: { verified_claims: nameAndBirthdate({ trust_framework: null }) } }) }), { redirect: 'manual' });
    const params = redirectParams(response.headers.get('location') as string);
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toBe(
      'claims.userinfo.verified_claims: verified claims travel encrypted only: register userinfo_encrypted_response_alg (e.g. RSA-OAEP-256) with an encryption key in jwks or jwks_uri',
    );
  });

  it.each([
    ['in the query string', {}],
    ['as an encrypted request object pushed to /par', { par: 'encrypted' }],
  ])('the demo page asks for verified claims %s, shows them in plain words for consent, and receives them', async (_how, extra) => {
    const browser = new FormBrowser();
    const origin = running.baseUrl;
    const posted = await browser.post(`${origin}/oidcdemo/login`, { verified: 'yes', ...extra }, origin);
    expect(posted.status).toBe(303);
    await browser.follow(posted.headers.get('location') as string, origin);
    await browser.submit('login-form', { login: 'demo', password: 'demo' }, origin);
    expect(browser.lastPage).toContain('your first name, last name and date of birth, as verified by an identity check, with how it was checked (for example which document and how) and when it was checked');
    await browser.submit('consent-allow', {}, origin);
    expect(browser.lastPage).toContain('id="userinfo-claims"');
    for (const shown of ['verified_claims', 'vcrypt', 'idcard', DEMO_TRUST_FRAMEWORK, '1964-08-12']) expect(browser.lastPage).toContain(shown);
  });

  it('a provider whose modules verify nothing advertises no verified claims and refuses a request for them', async () => {
    const bare = await startApp({ claimModules: createDemoClaimModules().map(({ verified: _verified, ...module }) => module) });
    try {
      const discovery = (await (await fetch(`${bare.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      for (const field of ['verified_claims_supported', 'trust_frameworks_supported', 'evidence_supported', 'documents_supported', 'documents_check_methods_supported', 'claims_in_verified_claims_supported']) {
        expect(discovery).not.toHaveProperty(field);
      }
      expect(discovery.claims_supported).not.toContain('verified_claims');
      const client = await registerClient(bare, 'rsa');
      const url = registeredClientUrl(bare.issuer, client, { claims: JSON.stringify({ id_token: { verified_claims: nameAndBirthdate({ trust_framework: null }) } }) });
      const params = redirectParams((await fetch(url, { redirect: 'manual' })).headers.get('location') as string);
      expect([params.get('error'), params.get('error_description')]).toEqual(['invalid_request', 'claims.id_token.verified_claims: no claim module provides verified claims']);
    } finally {
      await bare.close();
    }
  });

  it('refuses other spellings of verified_claims as claims nobody provides', async () => {
    for (const name of ['Verified_Claims', 'verified_claims ', 'verified-claims']) {
      const response = await fetch(urlFor(rsa, { claims: JSON.stringify({ userinfo: { [name]: nameAndBirthdate({ trust_framework: null }) } }) }), { redirect: 'manual' });
      const params = redirectParams(response.headers.get('location') as string);
      expect([params.get('error'), params.get('error_description')]).toEqual(['invalid_request', `claim ${name} is not provided by any claim module`]);
    }
  });

  it('sends no verified claims with a token issued before the client dropped encryption', async () => {
    const client = await registerClient(running, 'rsa');
    const claims = JSON.stringify({ userinfo: { verified_claims: nameAndBirthdate({ trust_framework: null }) } });
    const flow = await runCodeFlow(running.issuer, client.metadata, { configure: client.configure, params: { claims }, skipUserinfo: true });
    const { registration_access_token: token, registration_client_uri: uri } = client.metadata as Record<string, unknown>;
    const weakened = await manage(uri as string, 'PUT', token as string, { client_id: client.metadata.client_id, redirect_uris: ['https://rp.example/cb'], allow_unencrypted_userinfo: true });
    expect(weakened.status).toBe(200);
    const earlier = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${flow.tokens.access_token}` } });
    expect(earlier.headers.get('content-type')).toContain('application/json');
    expect(userData((await earlier.json()) as Record<string, unknown>)).toEqual({});
  });

  it('counts verified claims in the claims budget', async () => {
    const claims = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`c${i}`, null]));
    const response = await fetch(urlFor(rsa, { claims: JSON.stringify({ userinfo: { verified_claims: { verification: {}, claims } } }) }), { redirect: 'manual' });
    const params = redirectParams(response.headers.get('location') as string);
    expect(params.get('error')).toBe('invalid_request');
    expect(params.get('error_description')).toBe('the claims parameter expands to 300 claim names; at most 256 are allowed');
  });
});

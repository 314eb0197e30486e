import { createHash } from 'node:crypto';

import { describe, expect, it } from '@jest/globals';
import type { Client } from 'oidc-provider';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { ClaimRegistry } from '../../lib/index.js';
import { rewriteClaimsParameter } from '../../lib/claims/authorization.js';
import type { ChannelClaims } from '../../lib/claims/request.js';
import { resolveRequests } from '../../lib/claims/resolve.js';
import { channelRequests } from '../../lib/claims/stored-form.js';
import { ClaimValueMac } from '../../lib/claims/value-mac.js';

const registry = new ClaimRegistry(createDemoClaimModules());
const mac = new ClaimValueMac(['claims-resolve-test-cookie-key']);
const matcher = mac.forClient('unit-rp');
/** A client encrypting both channels (only its registration is read). */
const encrypting = { clientId: 'unit-rp', idTokenEncryptedResponseAlg: 'RSA-OAEP-256', userinfoEncryptedResponseAlg: 'RSA-OAEP-256' } as unknown as Client;
/** The stored form of a `userinfo` channel, as the authorization request keeps it. */
const stored = (userinfo: Record<string, unknown>): ChannelClaims => {
  const claims = { userinfo };
  return rewriteClaimsParameter(JSON.stringify(claims), claims, encrypting, registry, mac).userinfo as ChannelClaims;
};
const roundTrip = (claims: Record<string, unknown>) => channelRequests(stored(claims));

describe('claim requests and resolution', () => {
  it("takes only a module's own answer members: a name it provides by pattern, such as constructor, is not read off the object's prototype", async () => {
    const everything = new ClaimRegistry([{ name: 'everything', provides: ['*'], resolve: () => ({ nickname: 'Eri' }) }]);
    const values = await everything.resolve('demo-0001', ['constructor', 'nickname']);
    expect(Object.fromEntries(values)).toEqual({ nickname: 'Eri' });
  });

  it.each(['constructor', 'toString', 'valueOf', '__proto__'])("attack: the example modules give account %s, a name every object has, nothing (not 'Object' as her name); honest: a demo person's claims", async (accountId) => {
    const names = ['name', 'given_name', 'email', 'demo.ver.healthinsurance.l0.api.demo', 'svc.ver.idcard.l3.nfc', 'svc.auth.mobile.l2.otp'];
    expect(Object.fromEntries(await registry.resolve(accountId, names))).toEqual({});
    expect(await registry.resolveVerified(accountId)).toEqual([]);
    expect((await registry.resolve('demo-0002', ['name'])).get('name')).toBe('Max Mustermann');
  });

  it('honest: a module answering its whole record (a database row) gives the requested claims, though a member not asked for has no JSON (a BigInt id, a link back to its connection)', async () => {
    const row: Record<string, unknown> = { id: 9007199254740993n, nickname: 'Eri', member_since: new Date(Date.UTC(2026, 0, 2)) };
    row.connection = { rows: [row] };
    const rows = new ClaimRegistry([{ name: 'rows', provides: ['nickname', 'member_since', 'id'], resolve: () => row }]);
    const values = await rows.resolve('demo-0001', ['nickname', 'member_since']);
    expect(Object.fromEntries(values)).toEqual({ nickname: 'Eri', member_since: '2026-01-02T00:00:00.000Z' });
    await expect(rows.resolve('demo-0001', ['id'])).rejects.toMatchObject({ name: 'ClaimModuleError' });
  });

  describe('a claim that OpenID Connect Core 5.1 or the Identity Assurance schema types travels only as that type', () => {
    const answering = (answer: Record<string, unknown>) => new ClaimRegistry([{ name: 'sloppy', provides: Object.keys(answer), resolve: () => answer }]);

    it.each([
      ['a number for a string', { name: 42 }],
      ['an object carrying more than the claim (a whole row under its name)', { given_name: { first: 'Erika', tax_id: 'SENTINEL-TAX' } }],
      ['a list for one address', { email: ['erika@example.com', 'SENTINEL@example.com'] }],
      ['a string for a boolean', { email_verified: 'true' }],
      ['a promise not awaited (it travels as {})', { family_name: Promise.resolve('SENTINEL-NAME') }],
      ['an address with a nested object', { address: { street_address: { line1: 'SENTINEL-STREET' } } }],
      ['an address with a member Core does not define', { address: { country: 'DE', tax_id: 'SENTINEL-TAX' } }],
      ['a date of update as its text', { updated_at: new Date(Date.UTC(2026, 0, 2)) }],
      ['nationalities as one string', { nationalities: 'DE' }],
      ['a date of birth as a Date (a database row\'s date column, midnight where the database is: its text can name the day before)', { birthdate: new Date(1964, 7, 12) }],
      ['a date of birth in another format than YYYY-MM-DD or YYYY', { birthdate: '12.08.1964' }],
    ])('attack: %s fails as a throw would, naming the claim, never its value', async (_case, answer) => {
      const failure = await answering(answer).resolve('demo-0001', Object.keys(answer)).then(() => undefined, (err: unknown) => err);
      expect(failure).toMatchObject({ name: 'ClaimModuleError', plugin: 'sloppy', thrown: { name: 'ClaimModuleAnswerInvalid', code: Object.keys(answer)[0] } });
      expect(JSON.stringify(failure) + String(failure)).not.toMatch(/SENTINEL|Erika/);
    });

    it.each(['1964-08-12', '1964', '0000-08-12'])('honest: a date of birth %s, as Core 5.1 writes one, travels', async (birthdate) => {
      expect(Object.fromEntries(await answering({ birthdate }).resolve('demo-0001', ['birthdate']))).toEqual({ birthdate });
    });

    it('honest: each standard claim in its type, null as a claim she lacks, and any JSON (a Date as its text) for svc.* and other names', async () => {
      const answer = {
        name: 'Erika Mustermann',
        birthdate: '1964-08-12',
        email_verified: true,
        phone_number: null,
        address: { street_address: 'Heidestraße 17', locality: 'Köln', postal_code: '51147', country: 'DE' },
        updated_at: 1767312000,
        nationalities: ['DE'],
        place_of_birth: { country: 'DE', locality: 'Berlin' },
        'svc.ver.idcard.l3.nfc': { given_name: 'Erika', verified_at: '2025-03-01T10:15:00Z' },
        'https://claims.example/membership': ['gold', 3],
        'https://claims.example/member_since': new Date(Date.UTC(2026, 0, 2)),
      };
      const values = await answering(answer).resolve('demo-0001', Object.keys(answer));
      expect(Object.fromEntries(values)).toEqual({ ...JSON.parse(JSON.stringify(answer)), phone_number: undefined });
      expect(values.has('phone_number')).toBe(false);
    });
  });

  it('stores a requested value only as its keyed MAC and still matches it', async () => {
    const form = stored({ email: { value: 'erika.mustermann@example.com', essential: true } });
    expect(JSON.stringify(form)).not.toContain('erika');
    expect(JSON.stringify(form)).not.toContain(createHash('sha256').update(JSON.stringify('erika.mustermann@example.com')).digest('base64url'));
    expect(form.email).toEqual({ essential: true, svc_mac: matcher.mac('erika.mustermann@example.com') });
    const { values, missingEssential } = await resolveRequests(registry, 'demo-0001', channelRequests(form), matcher);
    expect(values).toEqual({ email: 'erika.mustermann@example.com' });
    expect(missingEssential).toEqual([]);
  });

  it('does not deliver a claim whose value differs from the requested one', async () => {
    const { values, missingEssential } = await resolveRequests(registry, 'demo-0001', roundTrip({ email: { value: 'someone@else.example', essential: true } }), matcher);
    expect(values).toEqual({});
    expect(missingEssential).toEqual(['email']);
  });

  it('reads a bracketed request whole while its member is there (consent, essential check)', () => {
    expect(roundTrip({ 'svc.ver.[driverslicense,idcard].l3.nfc': { essential: true } })).toEqual([
      { requested: 'svc.ver.[driverslicense,idcard].l3.nfc', alternatives: ['svc.ver.driverslicense.l3.nfc', 'svc.ver.idcard.l3.nfc'], essential: true },
    ]);
  });

  it('rebuilds bracketed requests from their marked expansions, even when the bracketed member is gone', async () => {
    const form = stored({ 'svc.ver.[driverslicense,idcard].l3.nfc': { essential: true } });
    delete form['svc.ver.[driverslicense,idcard].l3.nfc'];
    const requests = channelRequests(form);
    // Only the alternatives oidc-provider can deliver are marked (no module lists a driving licence
    // here); essential was settled at consent, on the stored request with its bracketed member.
    expect(requests).toEqual([{ requested: 'svc_of:0', alternatives: ['svc.ver.idcard.l3.nfc'], essential: false }]);
    const { values } = await resolveRequests(registry, 'demo-0001', requests, matcher);
    expect(Object.keys(values)).toEqual(['svc.ver.idcard.l3.nfc']);
  });

  it('reports essential alternatives nobody satisfies under the requested name', async () => {
    const { missingEssential } = await resolveRequests(registry, 'demo-0002', roundTrip({ 'svc.ver.[idcard,driverslicense].l3.nfc': { essential: true } }), matcher);
    expect(missingEssential).toEqual(['svc.ver.[idcard,driverslicense].l3.nfc']);
  });

  it('accepts alternatives when at least one is provided by a module', () => {
    expect(() => stored({ 'svc.ver.[passport,idcard].l3.nfc': null })).not.toThrow();
    let caught: unknown;
    try {
      stored({ 'svc.ver.[passport,visa].l3.nfc': null });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ error: 'invalid_request', error_description: 'claim svc.ver.[passport,visa].l3.nfc is not provided by any claim module' });
  });

  it('matches module patterns with * (one segment) and ** (one or more)', () => {
    const patterned = new ClaimRegistry([{ name: 'p', provides: ['svc.ver.*.l2', 'svc.auth.mobile.**'], resolve: () => ({}) }]);
    expect(patterned.providerOf('svc.ver.email.l2')?.name).toBe('p');
    expect(patterned.providerOf('svc.ver.email.l3')).toBeUndefined();
    expect(patterned.providerOf('svc.auth.mobile.l2.otp')?.name).toBe('p');
    expect(patterned.supportedNames()).toContain('svc.ver.idcard.l2');
  });

  it('says what a claim holds in its module\'s words, by an exact entry or a pattern of provides; a claim whose module says nothing has none', () => {
    const registry = new ClaimRegistry([
      { name: 'card', provides: ['svc.ver.idcard.*', 'given_name'], holds: { 'svc.ver.idcard.*': ' name and nationality ' }, resolve: () => ({}) },
      { name: 'mail', provides: ['email'], resolve: () => ({}) },
    ]);
    expect([registry.holdsOf('svc.ver.idcard.l2'), registry.holdsOf('given_name'), registry.holdsOf('email'), registry.holdsOf('svc.ver.email.l2')]).toEqual(['name and nationality', undefined, undefined, undefined]);
  });

  it('refuses a module whose holds names no entry of its provides, or is not one line of plain words of at most 200 characters', () => {
    const card = (holds: Record<string, unknown>): ClaimRegistry => new ClaimRegistry([{ name: 'card', provides: ['svc.ver.idcard.*'], holds: holds as Record<string, string>, resolve: () => ({}) }]);
    expect(() => card({ 'svc.ver.idcard.l2': 'name' })).toThrow('claimModules[0] (card): holds names svc.ver.idcard.l2, which is not an entry of provides');
    for (const words of ['', '  ', 'name\nand nationality', 'x'.repeat(201), 42]) expect(() => card({ 'svc.ver.idcard.*': words })).toThrow('holds of svc.ver.idcard.* must be one line of plain words, at most 200 characters');
    expect(card({ 'svc.ver.idcard.*': 'x'.repeat(200) }).holdsOf('svc.ver.idcard.l3')).toHaveLength(200);
  });

  it('attack: refuses holds words with a line or paragraph separator, a C1 control or a bidi embedding, override or isolate (it would reorder the rest of the line, "(required)" and where it travels); honest: words in any script, with a bidi mark, are kept', () => {
    const card = (words: string): ClaimRegistry => new ClaimRegistry([{ name: 'card', provides: ['svc.ver.idcard.*'], holds: { 'svc.ver.idcard.*': words }, resolve: () => ({}) }]);
    for (const c of ['\u0085', '\u009b', '\u2028', '\u2029', '\u202a', '\u202b', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069']) {
      expect(() => card(`name${c} and nationality`)).toThrow('holds of svc.ver.idcard.* must be one line of plain words, at most 200 characters');
    }
    for (const words of ['Name, Geburtsdatum und Staatsangehörigkeit', 'שם ותאריך לידה\u200f, nationality', 'الاسم\u061c والجنسية']) expect(card(words).holdsOf('svc.ver.idcard.l3')).toBe(words);
  });

  it('attack: refuses holds words with a semicolon, which separates the alternatives of a "one of:" line (she could not tell where one ends); honest: commas are kept', () => {
    const card = (words: string): ClaimRegistry => new ClaimRegistry([{ name: 'card', provides: ['svc.ver.idcard.*'], holds: { 'svc.ver.idcard.*': words }, resolve: () => ({}) }]);
    expect(() => card('name; your e-mail address')).toThrow('holds of svc.ver.idcard.* must be one line of plain words, at most 200 characters, without a semicolon');
    expect(card('name, date of birth and nationality').holdsOf('svc.ver.idcard.l3')).toBe('name, date of birth and nationality');
  });

  it('says the words of the exact entry of provides for a claim a pattern of the same module also covers, whatever their order in holds', () => {
    const registry = new ClaimRegistry([
      { name: 'card', provides: ['svc.ver.idcard.**', 'svc.ver.idcard.l3.nfc'], holds: { 'svc.ver.idcard.**': 'name', 'svc.ver.idcard.l3.nfc': 'name, photo and when the chip was read' }, resolve: () => ({}) },
    ]);
    expect([registry.holdsOf('svc.ver.idcard.l3.nfc'), registry.holdsOf('svc.ver.idcard.l2')]).toEqual(['name, photo and when the chip was read', 'name']);
  });

  it('refuses modules that list bracketed names', () => {
    expect(() => new ClaimRegistry([{ name: 'bad', provides: ['svc.ver.[a,b].l2'], resolve: () => ({}) }])).toThrow('has alternatives');
  });

  it('attack: refuses claim names in the svc: namespace of grant records, which a consent would add to her grant as approvals', () => {
    const offer = { trustFrameworks: ['eidas'], evidence: ['document'], documents: ['idcard'], documentCheckMethods: ['vcrypt'] };
    for (const name of ['svc:delivery:userinfo=unencrypted', 'svc:travel:userinfo:email', 'svc:named:svc.ver.email.l2', 'svc:group:x', 'svc:verified:claim:given_name', 'svc:*']) {
      expect(() => new ClaimRegistry([{ name: 'clash', provides: [name], resolve: () => ({}) }])).toThrow(`claimModules[0] (clash): provides ${name}`);
      expect(() => new ClaimRegistry([{ name: 'clash', provides: [], resolve: () => ({}), verified: { offer: { ...offer, claims: [name] }, resolve: () => [] } }])).toThrow(
        `claimModules[0] (clash): verifies ${name}`,
      );
    }
  });

  it('honest: accepts collision-resistant claim names with colons (URIs, URNs) and svc.* names', () => {
    const names = ['https://example.com/claims/member_since', 'urn:example:claims:tier', 'svc.ver.email.l2', 'svcx:tier'];
    const uris = new ClaimRegistry([{ name: 'uris', provides: names, resolve: () => ({}) }]);
    expect(names.map((n) => uris.providerOf(n)?.name)).toEqual(['uris', 'uris', 'uris', 'uris']);
  });

  describe('a requested value is compared with the value as it travels (its JSON)', () => {
    const joined = new Date('2016-08-12T00:00:00.000Z');
    const dated = new ClaimRegistry([
      { name: 'dated', provides: ['member_since'], resolve: () => ({ member_since: joined }) },
    ]);
    const resolveWith = async (spec: Record<string, unknown>) => {
      const claims = { userinfo: spec };
      const form = rewriteClaimsParameter(JSON.stringify(claims), claims, encrypting, dated, mac).userinfo as ChannelClaims;
      return resolveRequests(dated, 'anyone', channelRequests(form), matcher);
    };

    it('attack: a value other than the one delivered matches nothing (an empty object is not every Date)', async () => {
      expect(await resolveWith({ member_since: { value: {}, essential: true } })).toEqual({ values: {}, missingEssential: ['member_since'] });
    });

    it('honest: the text a module value travels as matches it (a Date as its ISO text)', async () => {
      expect(await resolveWith({ member_since: { value: '2016-08-12T00:00:00.000Z', essential: true } })).toEqual({ values: { member_since: '2016-08-12T00:00:00.000Z' }, missingEssential: [] });
      expect(JSON.parse(JSON.stringify({ member_since: joined }))).toEqual({ member_since: '2016-08-12T00:00:00.000Z' });
    });
  });
});

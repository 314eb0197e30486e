import { createHash } from 'node:crypto';

import { describe, expect, it } from '@jest/globals';
import type { Client } from 'oidc-provider';

import { createDemoClaimModules, DEMO_PEOPLE } from '../../lib/demo/claim-modules.js';
import { ClaimRegistry } from '../../lib/index.js';
import { rewriteClaimsParameter } from '../../lib/claims/authorization.js';
import type { ChannelClaims } from '../../lib/claims/request.js';
import { resolveRequests } from '../../lib/claims/resolve.js';
import { channelRequests } from '../../lib/claims/stored-form.js';
import { deliverableClaims } from '../../lib/claims/supported.js';
import { ClaimValueMac } from '../../lib/claims/value-mac.js';

const registry = new ClaimRegistry(createDemoClaimModules());
const mac = new ClaimValueMac(['stored-form-test-cookie-key']);
const matcher = mac.forClient('unit-rp');
const encrypting = { clientId: 'unit-rp', idTokenEncryptedResponseAlg: 'RSA-OAEP-256', userinfoEncryptedResponseAlg: 'RSA-OAEP-256' } as unknown as Client;
const VERIFIED_EMAIL = DEMO_PEOPLE['demo-0001']?.verifiedEmail as { email: string; verified_at: string };

const storedClaims = (claims: Record<string, unknown>): Record<string, unknown> => rewriteClaimsParameter(JSON.stringify(claims), claims, encrypting, registry, mac);
const stored = (userinfo: Record<string, unknown>): ChannelClaims => storedClaims({ userinfo }).userinfo as ChannelClaims;
/** What oidc-provider's claim filters leave at delivery: the names it can deliver (all granted). */
const delivered = (form: ChannelClaims): ChannelClaims => Object.fromEntries(Object.entries(form).filter(([name]) => deliverableClaims(registry).has(name)));

describe('the stored form of a claims request (C5, issue 14)', () => {
  it('keeps only what it needs: the two channels, essential, a MAC for a value, nothing the relying party adds', () => {
    // A value asked for a protocol claim is compared by nobody: it is not kept, not even as a MAC.
    const form = storedClaims({
      userinfo: {
        email: { essential: true, value: 'x@example.com', svc_value_sha256: 'forged', svc_of: [[0, 0]], note: 'x'.repeat(500) },
        name: { essential: false },
        'svc.ver.email.l2': { svc_of: [[0, 0, 'forged']] },
      },
      id_token: { sub: { junk: [1, 2, 3] }, acr: { values: ['urn:mace:incommon:iap:silver'] }, auth_time: { essential: true, value: 1 } },
      junk: 'y'.repeat(1000),
    });
    expect(form).toEqual({
      userinfo: { email: { essential: true, svc_mac: matcher.mac('x@example.com') }, name: null, 'svc.ver.email.l2': null },
      id_token: { sub: null, acr: null, auth_time: { essential: true } },
    });
  });

  it('refuses a value for sub in either channel (Core 5.5.1 would make it a condition on who signs in)', () => {
    for (const channel of ['id_token', 'userinfo']) {
      expect(() => storedClaims({ [channel]: { sub: { value: 'demo-0001' } } })).toThrow(
        expect.objectContaining({ error: 'invalid_request', error_description: `claims.${channel}.sub: a value is not supported (the ID token is about whoever signs in)` }),
      );
    }
  });

  it('marks only deliverable alternatives, each with its group and its place in written order', () => {
    const form = stored({ 'svc.ver.[driverslicense,idcard,passport].l3.nfc': { essential: true }, 'svc.ver.[mobile.l2.api,email.l2]': null });
    expect(form).toEqual({
      'svc.ver.[driverslicense,idcard,passport].l3.nfc': { essential: true },
      'svc.ver.[mobile.l2.api,email.l2]': null,
      'svc.ver.idcard.l3.nfc': { svc_of: [[0, 0]] },
      'svc.ver.mobile.l2.api': { svc_of: [[1, 0]] },
      'svc.ver.email.l2': { svc_of: [[1, 1]] },
    });
  });

  it('gives each of two bracketed names sharing alternatives its own written order (each delivers its first)', async () => {
    const form = stored({ 'svc.ver.[email.l2,mobile.l2.api]': null, 'svc.ver.[mobile.l2.api,email.l2]': null });
    const requests = channelRequests(delivered(form));
    expect(requests.map((r) => r.alternatives)).toEqual([
      ['svc.ver.email.l2', 'svc.ver.mobile.l2.api'],
      ['svc.ver.mobile.l2.api', 'svc.ver.email.l2'],
    ]);
    const { values } = await resolveRequests(registry, 'demo-0001', requests, matcher);
    expect(Object.keys(values).sort()).toEqual(['svc.ver.email.l2', 'svc.ver.mobile.l2.api']);
  });

  it('leaves a name requested on its own out of a group, as before', async () => {
    const form = stored({ 'svc.ver.email.l2': null, 'svc.ver.[email.l2,mobile.l2.api]': null });
    expect(form['svc.ver.email.l2']).toBeNull();
    const { values } = await resolveRequests(registry, 'demo-0001', channelRequests(delivered(form)), matcher);
    expect(Object.keys(values).sort()).toEqual(['svc.ver.email.l2', 'svc.ver.mobile.l2.api']);
  });

  it('carries a group value through delivery: the first alternative with that value is delivered, none otherwise', async () => {
    const asked = (value: unknown) => stored({ 'svc.ver.[mobile.l2.api,email.l2]': { value } });
    const form = asked(VERIFIED_EMAIL);
    expect(form['svc.ver.[mobile.l2.api,email.l2]']).toBeNull();
    expect(form['svc.ver.mobile.l2.api']).toEqual({ svc_of: [[0, 0, matcher.mac(VERIFIED_EMAIL)]] });
    expect(form['svc.ver.email.l2']).toEqual({ svc_of: [[0, 1, 1]] });
    // Key order of an object value does not matter (canonical JSON).
    const reordered = { verified_at: VERIFIED_EMAIL.verified_at, email: VERIFIED_EMAIL.email };
    expect((await resolveRequests(registry, 'demo-0001', channelRequests(delivered(asked(reordered))), matcher)).values).toEqual({ 'svc.ver.email.l2': VERIFIED_EMAIL });
    expect((await resolveRequests(registry, 'demo-0001', channelRequests(delivered(asked({ email: 'other@example.com' }))), matcher)).values).toEqual({});
  });

  it('never delivers a group that asked for a value when the mark with its MAC did not come through', async () => {
    const form = delivered(stored({ 'svc.ver.[mobile.l2.api,email.l2]': { value: VERIFIED_EMAIL } }));
    delete form['svc.ver.mobile.l2.api'];
    const requests = channelRequests(form);
    expect(requests).toEqual([{ requested: 'svc_of:0', alternatives: ['svc.ver.email.l2'], essential: false, valueMac: '' }]);
    expect((await resolveRequests(registry, 'demo-0001', requests, matcher)).values).toEqual({});
  });

  it('keeps the MAC on a bracketed name with no deliverable alternative, for the essential check', async () => {
    // A pattern provides passport names, but none is in claims_supported: nothing to mark.
    const patterned = new ClaimRegistry([...createDemoClaimModules(), { name: 'passports', provides: ['svc.ver.passport.**'], resolve: () => ({ 'svc.ver.passport.l2': 'x' }) }]);
    const claims = { userinfo: { 'svc.ver.[passport,idcard].l2': { essential: true, value: 'x' } } };
    const form = rewriteClaimsParameter(JSON.stringify(claims), claims, encrypting, patterned, mac).userinfo as ChannelClaims;
    expect(form).toEqual({ 'svc.ver.[passport,idcard].l2': { essential: true, svc_mac: matcher.mac('x') } });
    const requests = channelRequests(form);
    expect(requests).toEqual([{ requested: 'svc.ver.[passport,idcard].l2', alternatives: ['svc.ver.passport.l2', 'svc.ver.idcard.l2'], essential: true, valueMac: matcher.mac('x') }]);
    expect((await resolveRequests(patterned, 'demo-0001', requests, matcher)).missingEssential).toEqual([]);
  });

  it('decodes a stored channel once: the same object gives the same requests', () => {
    const form = stored({ 'svc.ver.[driverslicense,idcard].l3.nfc': null, email: null });
    expect(channelRequests(form)).toBe(channelRequests(form));
  });
});

describe('the claim value MAC (C5): keyed by the cookie keys, never an unkeyed hash', () => {
  const rp = (keys: string[], client = 'unit-rp') => new ClaimValueMac(keys).forClient(client);

  it('is not any unkeyed hash of the value, and differs per key and per client', () => {
    const value = '1964-08-12';
    const macValue = matcher.mac(value);
    expect(macValue).toMatch(/^[A-Za-z0-9_-]{16}$/);
    for (const algorithm of ['sha256', 'sha1', 'md5']) {
      for (const input of [value, JSON.stringify(value)]) {
        for (const encoding of ['hex', 'base64', 'base64url'] as const) {
          expect(createHash(algorithm).update(input).digest(encoding)).not.toContain(macValue);
        }
      }
    }
    expect(rp(['another-cookie-key']).mac(value)).not.toBe(macValue);
    // Two relying parties asking for the same value leave different MACs: a dump cannot link them.
    expect(mac.forClient('another-rp').mac(value)).not.toBe(macValue);
    expect(mac.forClient('another-rp').matches(value, macValue)).toBe(false);
  });

  it('matches under any configured cookie key (rotation), and stops matching once the old key is gone', () => {
    const stored = rp(['old-key']).mac('1964-08-12');
    expect(rp(['new-key', 'old-key']).matches('1964-08-12', stored)).toBe(true);
    expect(rp(['new-key', 'old-key']).mac('1964-08-12')).toBe(rp(['new-key']).mac('1964-08-12'));
    expect(rp(['new-key']).matches('1964-08-12', stored)).toBe(false);
    expect(rp(['old-key']).matches('1964-08-13', stored)).toBe(false);
    expect(rp(['old-key']).matches('1964-08-12', '')).toBe(false);
  });

  it('refuses to work without a cookie key', () => {
    expect(() => new ClaimValueMac([])).toThrow(TypeError);
  });
});

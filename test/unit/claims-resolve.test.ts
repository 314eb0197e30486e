import { describe, expect, it } from '@jest/globals';

import { createDemoClaimModules } from '../../examples/claim-modules/index.js';
import { ClaimRegistry } from '../../lib/index.js';
import { channelRequests, hashClaimValue, storedForm, validateChannel } from '../../lib/claims/request.js';
import { resolveRequests } from '../../lib/claims/resolve.js';

const registry = new ClaimRegistry(createDemoClaimModules());
const roundTrip = (claims: Record<string, unknown>) => channelRequests(storedForm(claims, validateChannel('userinfo', claims, registry)));

describe('claim requests and resolution', () => {
  it('stores a requested value only as its hash and still matches it', async () => {
    const claims = { email: { value: 'erika.mustermann@example.com', essential: true } };
    const stored = storedForm(claims, validateChannel('userinfo', claims, registry));
    expect(JSON.stringify(stored)).not.toContain('erika');
    expect(stored.email).toEqual({ essential: true, svc_value_sha256: hashClaimValue('erika.mustermann@example.com') });
    const { values, missingEssential } = await resolveRequests(registry, 'demo-0001', channelRequests(stored));
    expect(values).toEqual({ email: 'erika.mustermann@example.com' });
    expect(missingEssential).toEqual([]);
  });

  it('does not deliver a claim whose value differs from the requested one', async () => {
    const { values, missingEssential } = await resolveRequests(registry, 'demo-0001', roundTrip({ email: { value: 'someone@else.example', essential: true } }));
    expect(values).toEqual({});
    expect(missingEssential).toEqual(['email']);
  });

  it('rebuilds bracketed requests from their marked expansions, even when the bracketed member is gone', async () => {
    const claims = { 'svc.ver.[driverslicense,idcard].l3.nfc': { essential: true } };
    const stored = storedForm(claims, validateChannel('userinfo', claims, registry));
    delete stored['svc.ver.[driverslicense,idcard].l3.nfc'];
    const requests = channelRequests(stored);
    expect(requests).toEqual([
      { requested: 'svc.ver.[driverslicense,idcard].l3.nfc', alternatives: ['svc.ver.driverslicense.l3.nfc', 'svc.ver.idcard.l3.nfc'], essential: true },
    ]);
    const { values } = await resolveRequests(registry, 'demo-0001', requests);
    expect(Object.keys(values)).toEqual(['svc.ver.idcard.l3.nfc']);
  });

  it('reports essential alternatives nobody satisfies under the requested name', async () => {
    const { missingEssential } = await resolveRequests(registry, 'demo-0002', roundTrip({ 'svc.ver.[idcard,driverslicense].l3.nfc': { essential: true } }));
    expect(missingEssential).toEqual(['svc.ver.[idcard,driverslicense].l3.nfc']);
  });

  it('accepts alternatives when at least one is provided by a module', () => {
    expect(() => validateChannel('userinfo', { 'svc.ver.[passport,idcard].l3.nfc': null }, registry)).not.toThrow();
    let caught: unknown;
    try {
      validateChannel('userinfo', { 'svc.ver.[passport,visa].l3.nfc': null }, registry);
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

  it('refuses modules that list bracketed names', () => {
    expect(() => new ClaimRegistry([{ name: 'bad', provides: ['svc.ver.[a,b].l2'], resolve: () => ({}) }])).toThrow('has alternatives');
  });
});

import { describe, expect, it } from '@jest/globals';
import type { Context } from 'koa';

import { addressCounterKey, clientAddress, siteAddressKey, throttleAddressKey, withoutPort } from '../../lib/web/client-address.js';

/** The two things clientAddress reads of a Koa context: the socket peer and a header. */
const request = (peer: string, forwardedFor?: string): Context =>
  ({ req: { socket: { remoteAddress: peer } }, get: (name: string) => (name === 'x-forwarded-for' ? (forwardedFor ?? '') : '') }) as unknown as Context;

describe('clientAddress (svc.proxy, svc.proxy.hops)', () => {
  it.each<[string, string | undefined, boolean, number, string]>([
    ['no proxy: the peer, whatever the header says', 'spoofed, 203.0.113.1', false, 1, '10.0.0.1'],
    ['one hop: the right-most entry', '1.2.3.4, 203.0.113.1', true, 1, '203.0.113.1'],
    ['one hop: left entries written by the client are never used', '203.0.113.99, 6.6.6.6, 203.0.113.1', true, 1, '203.0.113.1'],
    ['two hops: second from the right', '198.51.100.7, 203.0.113.2, 10.0.0.9', true, 2, '203.0.113.2'],
    ['more hops than entries: the left-most (what the first trusted proxy saw)', '198.51.100.8', true, 3, '198.51.100.8'],
    ['no header behind a proxy: the peer', undefined, true, 1, '10.0.0.1'],
    ['spaces around entries', ' 1.1.1.1 ,  203.0.113.3 ', true, 1, '203.0.113.3'],
    ['a port the proxy appended to an IPv4 entry', 'evil, 198.51.100.8:40001', true, 1, '198.51.100.8'],
    ['a port the proxy appended to a bracketed IPv6 entry', 'evil, [2001:db8:1:2::9]:443', true, 1, '2001:db8:1:2::9'],
    ['a bracketed IPv6 entry without port', '[2001:db8::1]', true, 1, '2001:db8::1'],
  ])('%s', (_name, header, proxy, hops, expected) => {
    expect(clientAddress(request('10.0.0.1', header), { proxy, hops })).toBe(expected);
  });
});

describe('throttleAddressKey', () => {
  it.each([
    ['203.0.113.5', '203.0.113.5'],
    ['::ffff:203.0.113.5', '203.0.113.5'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:0DB8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
    ['::1', '0:0:0:0::/64'],
    ['1::2:3:4:5:6.7.8.9', '1:0:2:3::/64'],
    ['fe80::1%eth0.5', 'fe80:0:0:0::/64'],
    // A zone id node accepts with colons in it: dropped whole, never read as groups, never a throw.
    ['fe80::1%eth0:1', 'fe80:0:0:0::/64'],
    ['fe80::1%a::b', 'fe80:0:0:0::/64'],
  ])('%s → %s (an IPv6 subscriber holds a /64: one budget for all of it)', (address, key) => {
    expect(throttleAddressKey(address)).toBe(key);
  });
});

describe('throttleAddressKey and siteAddressKey: an IPv4-mapped address however spelled is its IPv4 address', () => {
  // Read as an IPv6 /64, every IPv4 client a proxy spells so would share one budget: one guesser locks all of them out.
  it.each(['::ffff:203.0.113.5', '::FFFF:203.0.113.5', '0:0:0:0:0:ffff:203.0.113.5', '::ffff:cb00:7105', '0000::FFFF:CB00:7105', '::ffff:203.0.113.5%eth0'])('%s', (address) => {
    expect(throttleAddressKey(address)).toBe('203.0.113.5');
    expect(siteAddressKey(address)).toBeUndefined();
  });
});

describe('throttleAddressKey: an IPv4 client seen through a translator in front of the provider (SIIT-DC, RFC 7755) is its IPv4 address', () => {
  // A translator spells every IPv4 client inside one /96: keyed by its /64, one guesser's failures lock them all out.
  it.each([
    ['NAT64 well-known prefix (RFC 6052)', '64:ff9b::203.0.113.7', '64:ff9b::198.51.100.9'],
    ['IPv4-translated (RFC 6145)', '::ffff:0:203.0.113.7', '::ffff:0:198.51.100.9'],
  ])('%s: two clients, two keys, each its IPv4 address', (_form, one, other) => {
    expect(throttleAddressKey(one)).toBe('203.0.113.7');
    expect(throttleAddressKey(other)).toBe('198.51.100.9');
  });
});

describe('siteAddressKey', () => {
  it.each([
    ['2001:db8:aa:1::1', '2001:db8:aa::/48'],
    ['2001:0DB8:00AA:ffff:1:2:3:4', '2001:db8:aa::/48'],
    ['2001:db8::1', '2001:db8:0::/48'],
    ['203.0.113.5', undefined],
    ['::ffff:203.0.113.5', undefined],
  ])('%s → %s (one site, however many /64s it spells)', (address, key) => {
    expect(siteAddressKey(address)).toBe(key);
  });
});

describe('withoutPort', () => {
  it.each([
    ['198.51.100.8:4000', '198.51.100.8'],
    ['198.51.100.8', '198.51.100.8'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['2001:db8::1', '2001:db8::1'],
    ['::ffff:198.51.100.8', '::ffff:198.51.100.8'],
  ])('%s → %s', (entry, address) => {
    expect(withoutPort(entry)).toBe(address);
  });
});

describe('addressCounterKey', () => {
  it('keys one client the same whatever port or /64 member it comes from, and is a keyed MAC', () => {
    const key = 'k'.repeat(32);
    const a = addressCounterKey('login-address', clientAddress(request('10.0.0.1', 'x, 198.51.100.8:1'), { proxy: true, hops: 1 }), key);
    const b = addressCounterKey('login-address', clientAddress(request('10.0.0.1', 'y, 198.51.100.8:2'), { proxy: true, hops: 1 }), key);
    expect(a).toBe(b);
    expect(addressCounterKey('login-address', '2001:db8:1:2::1', key)).toBe(addressCounterKey('login-address', '2001:db8:1:2:ffff::9', key));
    // The address is not readable from the key, and another key gives another counter.
    expect(a).not.toContain('198.51.100.8');
    expect(a).not.toBe(addressCounterKey('login-address', '198.51.100.8', 'other'.repeat(8)));
    expect(a.startsWith('login-address:')).toBe(true);
  });
});

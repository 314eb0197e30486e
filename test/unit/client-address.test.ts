import { describe, expect, it } from '@jest/globals';
import type { Context } from 'koa';

import { clientAddress, throttleAddressKey } from '../../lib/http/client-address.js';

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
  ])('%s → %s (an IPv6 subscriber holds a /64: one budget for all of it)', (address, key) => {
    expect(throttleAddressKey(address)).toBe(key);
  });
});

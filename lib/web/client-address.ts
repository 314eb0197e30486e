import { createHmac } from 'node:crypto';
import { isIPv6 } from 'node:net';

import ipaddr from 'ipaddr.js';
import type { Context } from 'koa';

/** Where the client address comes from (`svc.proxy`, `svc.proxy.hops`). */
export interface ProxyTrust {
  /** Trust `X-Forwarded-For`. */
  proxy: boolean;
  /** Trusted proxies in front of the provider. */
  hops: number;
}

/**
 * The client's address: the socket peer, or, behind `hops` trusted proxies, the `X-Forwarded-For`
 * entry `hops` from the right (entries further left were written by the client; Koa's `ctx.ip`
 * reads the left end, so it is not used for anything that counts).
 */
export function clientAddress(ctx: Context, trust: ProxyTrust): string {
  const peer = ctx.req.socket.remoteAddress ?? '';
  if (!trust.proxy) return peer;
  const header = ctx.get('x-forwarded-for');
  if (!header) return peer;
  const entries = header.split(',').map((e) => e.trim());
  const entry = entries[Math.max(0, entries.length - trust.hops)];
  return entry ? withoutPort(entry) : peer;
}

/** An `X-Forwarded-For` entry without the port some proxies append (`198.51.100.8:4000`, `[2001:db8::1]:443`). */
export function withoutPort(entry: string): string {
  const match = /^\[([^\]]+)\](?::\d*)?$/.exec(entry) ?? /^(\d{1,3}(?:\.\d{1,3}){3}):\d*$/.exec(entry);
  return match?.[1] ?? entry;
}

/** The counter name of `value` in `scope`: a keyed MAC of it, so a store dump does not list who knocked. */
export function counterKey(scope: string, value: string, macKey: string): string {
  return `${scope}:${createHmac('sha256', macKey).update(value, 'utf8').digest('base64url')}`;
}

/** The counter name of a client address in `scope`: the {@link counterKey} of its {@link throttleAddressKey}. */
export function addressCounterKey(scope: string, address: string, macKey: string): string {
  return counterKey(scope, throttleAddressKey(address), macKey);
}

/**
 * The key an address is throttled under: an IPv4 address as it is (IPv6 embedding one included: mapped, NAT64, SIIT), an
 * IPv6 address by its /64 (one subscriber usually holds a whole /64: 2^64 budgets otherwise).
 */
export function throttleAddressKey(address: string): string {
  return ipv6Prefix(address, 4) ?? plainAddress(address);
}

/** The /48 of an IPv6 address (a site's usual allocation, 65 536 /64s); `undefined` for IPv4. */
export function siteAddressKey(address: string): string | undefined {
  return ipv6Prefix(address, 3);
}

/** The address without its zone id (`%eth0`), parsed, when it is IPv6: node accepts zone ids that ipaddr.js refuses. */
const parsedIPv6 = (address: string): ipaddr.IPv6 | undefined => (isIPv6(address) ? ipaddr.IPv6.parse(address.replace(/%.*$/, '')) : undefined);

/**
 * True for an IPv6 address holding one IPv4 client in its last 32 bits: mapped (`::ffff:a.b.c.d`, however spelled), or
 * translated by NAT64 / SIIT in front of the provider (RFC 6052 `64:ff9b::/96`, RFC 6145 `::ffff:0:0:0/96`), which
 * spells every IPv4 client inside one /64.
 */
const embedsIPv4 = (parsed: ipaddr.IPv6): boolean => parsed.isIPv4MappedAddress() || parsed.range() === 'rfc6052' || parsed.range() === 'rfc6145';

/** An address embedding an IPv4 client ({@link embedsIPv4}) as that IPv4 address. */
function plainAddress(address: string): string {
  const parsed = parsedIPv6(address);
  if (!parsed || !embedsIPv4(parsed)) return address;
  const [a = 0, b = 0] = parsed.parts.slice(6);
  return [a >> 8, a & 0xff, b >> 8, b & 0xff].join('.');
}

/** The first `groups` groups of an IPv6 address as a prefix (`/16·groups`); `undefined` for IPv4, embedded IPv4 included. */
function ipv6Prefix(address: string, groups: number): string | undefined {
  const parsed = parsedIPv6(address);
  if (!parsed || embedsIPv4(parsed)) return undefined;
  return `${parsed.parts.slice(0, groups).map((g) => g.toString(16)).join(':')}::/${16 * groups}`;
}

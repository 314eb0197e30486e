import { isIP } from 'node:net';

import ipaddr from 'ipaddr.js';

/*
 * Which addresses an outbound fetch may reach: ipaddr.js's `range()` (IANA's Special-Purpose
 * Address Registries), and where it falls short:
 * - IPv6 outside 2000::/3, the only global unicast block (RFC 4291 2.4), is refused: this closes
 *   what ipaddr.js calls "unicast" although it is not (`::127.0.0.1`, 100:0:0:1::/64 of RFC 9780).
 * - ipaddr.js reads `::a.b.c.d` as `::ffff:a.b.c.d`, another address: it only gets the canonical hex spelling.
 * - An address with a zone id (`fe80::1%eth0`) is scoped to one link: never a public host.
 * - An address that embeds an IPv4 address (mapped, compatible, translated, NAT64, 6to4, Teredo) is
 *   judged by it as well; a mapped one only by it (a dual-stack socket reaches exactly that address).
 */

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

const GLOBAL_UNICAST: [IPv6, number] = ipaddr.IPv6.parseCIDR('2000::/3');

const forbiddenIPv4 = (address: IPv4): boolean => address.range() !== 'unicast';

const v4 = (high: number, low: number): IPv4 => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/** The IPv4 addresses an IPv6 address carries inside it, by the embedding its prefix defines. */
function embeddedIPv4(address: IPv6): IPv4[] {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  const zeros = (from: number, to: number): boolean => p.slice(from, to).every((x) => x === 0);
  const out: IPv4[] = [];
  // ::a.b.c.d compatible (includes :: and ::1), ::ffff:a.b.c.d mapped, ::ffff:0:a.b.c.d translated.
  if (zeros(0, 5) && (p[5] === 0 || p[5] === 0xffff)) out.push(v4(p[6], p[7]));
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) out.push(v4(p[6], p[7]));
  // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052).
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) out.push(v4(p[6], p[7]));
  // 6to4 2002:AABB:CCDD::/48 (RFC 3056).
  if (p[0] === 0x2002) out.push(v4(p[1], p[2]));
  // Teredo 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC, the client address inverted (RFC 4380).
  if (p[0] === 0x2001 && p[1] === 0) out.push(v4(p[2], p[3]), v4(~p[6] & 0xffff, ~p[7] & 0xffff));
  return out;
}

/** Parses an IPv6 literal by its canonical hex spelling (see the note on `::a.b.c.d` above). */
export function parseIPv6(literal: string): IPv6 | undefined {
  try {
    const canonical = new URL(`http://[${literal}]/`).hostname.slice(1, -1);
    return ipaddr.IPv6.parse(canonical);
  } catch {
    return undefined;
  }
}

function forbiddenIPv6(address: IPv6): boolean {
  const embedded = embeddedIPv4(address);
  if (address.range() === 'ipv4Mapped') return embedded.some(forbiddenIPv4);
  if (embedded.some(forbiddenIPv4)) return true;
  return !address.match(GLOBAL_UNICAST) || address.range() !== 'unicast';
}

/** True when `address` (an IP literal, as DNS or a URL gives it) is one outbound fetches must not reach (see above), or no IP literal. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  // node:net accepts only dotted-decimal IPv4 (no octal, hex or short forms), so ipaddr.js reads
  // the same four numbers the socket would connect to.
  if (family === 4) return forbiddenIPv4(ipaddr.IPv4.parse(address));
  if (family !== 6 || address.includes('%')) return true;
  const parsed = parseIPv6(address);
  return parsed === undefined || forbiddenIPv6(parsed);
}

/** A `localhost` name (RFC 6761 6.3: always the loopback interface), in any case, with or without the final dot. */
export const LOCALHOST_NAME = /(^|\.)localhost\.?$/i;

/**
 * True for a URL host name on the loopback interface however it is spelled: a {@link LOCALHOST_NAME}, a loopback or
 * unspecified address (`[::]`, `0.0.0.0` reach the loopback too), or one of them mapped into IPv6 (`[::ffff:7f00:1]`).
 */
export function isLoopbackHost(hostname: string): boolean {
  if (LOCALHOST_NAME.test(hostname)) return true;
  const literal = hostname.replace(/^\[(.*)\]$/, '$1');
  if (!isIP(literal)) return false;
  const parsed = ipaddr.parse(literal);
  const address = parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress() ? parsed.toIPv4Address() : parsed;
  return address.range() === 'loopback' || address.range() === 'unspecified';
}

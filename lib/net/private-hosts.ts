import { isIP } from 'node:net';

import ipaddr from 'ipaddr.js';

import { parseIPv6 } from './addresses.js';

/*
 * The operator's allowlist of relying-party hosts that may resolve to a private address
 * (`svc.fetch.private-hosts`): a Keycloak or LemonLDAP::NG on the company network publishing its
 * `jwks_uri` there. Only RFC 1918 IPv4 and unique-local IPv6 (fd00::/8) are opened, and only for
 * the listed host and port; loopback, link-local (cloud metadata), carrier-grade NAT and every other
 * special-purpose range stay closed, and https stays required.
 */

const UNIQUE_LOCAL: [ipaddr.IPv6, number] = ipaddr.IPv6.parseCIDR('fd00::/8');

/** True for an address a listed host may resolve to (RFC 1918 or fd00::/8); an IPv4 address embedded in IPv6 is not one. */
export function isPrivateNetworkAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return ipaddr.IPv4.parse(address).range() === 'private';
  return family === 6 && !address.includes('%') && parseIPv6(address)?.match(UNIQUE_LOCAL) === true;
}

/** The canonical `host:port` of an https URL (WHATWG host without a trailing dot; port 443 when absent). */
export function hostPortOf(url: URL): string {
  return `${url.hostname.replace(/\.$/, '')}:${url.port || '443'}`;
}

/**
 * Parses one `svc.fetch.private-hosts` entry, `host` or `host:port`, into its canonical `host:port`.
 * Refuses a scheme, path, credentials, wildcard, and an IP literal outside the private ranges.
 */
function parsePrivateHost(entry: string): string {
  const text = entry.trim();
  if (!text || /[/?#@*\s\\]/.test(text) || !URL.canParse(`https://${text}/`)) {
    // An entry with an @ may carry a password (`user:secret@host`): said so, never repeated.
    throw new Error(`expected host or host:port, got ${entry.includes('@') ? 'an entry with an @ (not repeated: it may carry a password)' : `"${entry}"`}`);
  }
  const url = new URL(`https://${text}/`);
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(literal) && !isPrivateNetworkAddress(literal)) {
    throw new Error(`${literal} is not a private address (only 10/8, 172.16/12, 192.168/16 and fd00::/8 may be listed)`);
  }
  return hostPortOf(url);
}

/** Parses the comma-separated `svc.fetch.private-hosts` list (empty: none). */
export function parsePrivateHosts(raw: string): string[] {
  return [...new Set(raw.split(',').filter((part) => part.trim()).map(parsePrivateHost))];
}

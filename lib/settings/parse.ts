/**
 * Value parsers for settings properties. Each takes the raw text and returns the typed value or
 * throws a plain `Error` whose message says what is wrong (the loader adds the property name).
 */

import { canonicalEmailAddress } from '../email-address.js';
import { clip } from '../terminal-text.js';
import { firstUnlikeNode, type ClusterNode } from './types.js';

/** Parses `true`/`false` (case-insensitive; also `1`/`0`, `yes`/`no`). */
export function parseBoolean(raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(value)) return true;
  if (['false', '0', 'no'].includes(value)) return false;
  throw new Error(`expected true or false, got "${raw}"`);
}

/** Parses a whole number within [min, max]. */
export function parseInteger(raw: string, min: number, max: number): number {
  const value = raw.trim();
  if (/^tcp:\/\/[^/]+:\d+$/.test(value)) throw new Error(`expected a whole number, got "${raw}", a Kubernetes service link (set enableServiceLinks: false in the pod spec)`);
  if (!/^\d+$/.test(value)) throw new Error(`expected a whole number, got "${raw}"`);
  const n = Number(value);
  if (n < min || n > max) throw new Error(`expected a number from ${min} to ${max}, got ${clip(value, 21)}`);
  return n;
}

function absoluteUrl(raw: string, message: string): URL {
  try {
    return new URL(raw.trim());
  } catch {
    throw new Error(message);
  }
}

/** `raw` quoted for a refusal, unless it may carry credentials (an `@`): then said so, never repeated. */
export function quoted(raw: string): string {
  return raw.includes('@') ? 'a value with an @ (not repeated: it may carry a password)' : `"${raw}"`;
}

/** Parses an absolute http(s) URL without credentials, query, fragment or empty path segment; returns it without a trailing slash. */
export function parseBaseUrl(raw: string): string {
  const url = absoluteUrl(raw, `expected an absolute URL, got ${quoted(raw)}`);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`expected an http or https URL, got ${quoted(raw)}`);
  // An empty `?` or `#` leaves `search` and `hash` empty but stays in `href`, and so in the issuer.
  if (/[?#]/.test(url.href) || url.username || url.password) throw new Error('must not carry credentials, a query or a fragment');
  const base = url.href.replace(/\/+$/, '');
  // Each endpoint is the path after the origin: one starting `//` names another host, and proxies merge slashes.
  if (new URL(base).pathname.includes('//')) throw new Error('its path must not hold an empty segment (//)');
  return base;
}

/** Parses a URL whose scheme is one of `schemes` (e.g. `redis:`) and whose credentials its client can decode, keeping it as written. */
export function parseUrlWithScheme(raw: string, schemes: string[]): string {
  const url = absoluteUrl(raw, 'expected an absolute URL');
  if (!schemes.includes(url.protocol)) throw new Error(`expected a URL with scheme ${schemes.map((s) => s.replace(/:$/, '')).join(' or ')}`);
  try {
    // As the clients decode it: `user:password` in one piece.
    decodeURIComponent(`${url.username}:${url.password}`);
  } catch {
    throw new Error('the user name or password is not valid percent-encoding (write a % in it as %25)');
  }
  return raw.trim();
}

/**
 * An `smtp://` or `smtps://` URL whose query (nodemailer reads it over its other options) neither turns on its own
 * logging (`logger`, `debug`, `transactionLog`), which writes every mail, the initial access token in it, to stdout,
 * nor names another transport (`jsonTransport`, …: no mail sent, a receipt answered), nor another way to the server
 * (`proxy`, `connection`, `socket`, `service`, `url`: a connection no deadline of ours closes, a receipt naming a host
 * never reached; `host`, `port`: taken where the URL names none, so the receipt named another), nor names no host, nor says `secure` on `smtp://` (nodemailer reads only the scheme: the mail goes by STARTTLS or in
 * plain text).
 */
export function parseSmtpUrl(raw: string): string {
  const url = parseUrlWithScheme(raw, ['smtp:', 'smtps:']);
  const { protocol, hostname, searchParams } = new URL(url);
  if (!hostname) throw new Error('the URL names no host (nodemailer would go to localhost, or to a host in the query)');
  const keys = (names: string[]): string => [...new Set(searchParams.keys())].filter((key) => names.includes(key)).join(', ');
  const logging = keys(['logger', 'debug', 'transactionLog']);
  if (logging) throw new Error(`the query turns on nodemailer's logging (${logging}), which writes each mail and the token in it to the output; svc-connect config check --connect names why mail fails`);
  const transports = keys(['jsonTransport', 'streamTransport', 'sendmail', 'SES']);
  if (transports) throw new Error(`the query makes nodemailer send no mail over SMTP (${transports})`);
  const elsewhere = keys(['proxy', 'connection', 'socket', 'service', 'url', 'host', 'port']);
  if (elsewhere) throw new Error(`the query makes nodemailer reach the SMTP server another way than straight to the host and port of the URL (${elsewhere}); svc-connect connects directly`);
  if (protocol === 'smtp:' && searchParams.getAll('secure').some((value) => value !== 'false')) {
    throw new Error('secure in the query is ignored, the scheme decides: write smtps:// for implicit TLS (smtp:// is STARTTLS or plain text)');
  }
  return url;
}

/** The non-empty items of a comma-separated list, trimmed. */
const commaList = (raw: string): string[] => raw.split(',').map((item) => item.trim()).filter(Boolean);

/**
 * A host name (fully qualified with its trailing dot too), an IPv4 address, or an IPv6 address with its zone if
 * any (`fe80::1%eth0`; in brackets, or bare before the last `:port`).
 */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\.?|\[[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?\]|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(?:%[A-Za-z0-9_.-]+)?)$/;

/** One `redis://` seed node URL, named by its position in a fault (its password is never repeated). */
function clusterNodeUrl(part: string, i: number): ClusterNode {
  const fault = (why: string): never => {
    throw new Error(`item #${i + 1} ${why}`);
  };
  let url: URL;
  try {
    url = new URL(part);
  } catch {
    return fault('is neither host:port nor a redis:// URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') fault('is a URL whose scheme is neither redis nor rediss');
  if (!HOST.test(url.hostname)) fault('has a host that is not a host name or IP address');
  if (url.pathname !== '' && url.pathname !== '/') fault('names a database: a Cluster has only database 0');
  if (url.search || url.hash) fault('carries a query or fragment');
  let username: string;
  let password: string;
  try {
    [username, password] = [decodeURIComponent(url.username), decodeURIComponent(url.password)];
  } catch {
    return fault('has a user name or password that is not valid percent-encoding (write a % in it as %25)');
  }
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? parseInteger(url.port, 1, 65535) : 6379,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    ...(url.protocol === 'rediss:' ? { tls: true } : {}),
  };
}

/**
 * Parses Redis Cluster seed nodes: `host:port,host:port`, or `redis://` URLs carrying the user name and password
 * every node is reached with, the same in every item. A faulty item is named by its position, never
 * repeated: it may carry a password.
 */
export function parseClusterNodes(raw: string): ClusterNode[] {
  const nodes = commaList(raw).map((part, i): ClusterNode => {
    if (part.includes('://')) return clusterNodeUrl(part, i);
    const match = /^(.+):(\d{1,5})$/.exec(part);
    if (!match?.[1] || !match[2] || !HOST.test(match[1])) {
      throw new Error(`item #${i + 1} is neither host:port (a host name or IP address, an IPv6 address in brackets, then a port) nor a redis:// URL`);
    }
    return { host: match[1].replace(/^\[(.*)\]$/, '$1'), port: parseInteger(match[2], 1, 65535) };
  });
  if (nodes.length === 0) throw new Error('expected at least one host:port');
  const differs = firstUnlikeNode(nodes);
  if (differs > 0) throw new Error(`item #${differs + 1} is reached otherwise than item #1 (another user name or password, or with TLS and without): every node of a Cluster is reached alike`);
  return nodes;
}

/** Parses a comma-separated list of secrets, each at least `minLength` characters. */
export function parseSecretList(raw: string, minLength: number): string[] {
  const keys = commaList(raw);
  if (keys.length === 0) throw new Error('expected at least one key');
  // Describe the fault by position only: the value is a secret and must not be echoed.
  const short = keys.findIndex((k) => k.length < minLength);
  if (short >= 0) throw new Error(`key #${short + 1} is shorter than ${minLength} characters`);
  return keys;
}

/** Parses a non-empty string (trimmed). */
export function parseNonEmpty(raw: string): string {
  const value = raw.trim();
  if (!value) throw new Error('must not be empty');
  return value;
}

/** Parses an e-mail address by the one e-mail rule, into the form it is mailed as ({@link canonicalEmailAddress}). */
export function parseEmailAddress(raw: string): string {
  const result = canonicalEmailAddress(raw.trim());
  if ('defect' in result) throw new Error(`expected an e-mail address, got "${raw}"`);
  return result.address;
}

import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';

import { isForbiddenAddress } from './addresses.js';
import { outboundAgents } from './agents.js';
import { lookupInTurn, lookupPublicName, type PublicDns } from './name-lookups.js';
import { hostPortOf, isPrivateNetworkAddress } from './private-hosts.js';
import { OutboundFetchError } from '../errors.js';

/** Limits of the one outbound fetch (C11). */
export interface OutboundFetchOptions {
  /** Allow http and loopback/private targets (`svc.fetch.allow-private-network`; tests only). */
  allowPrivateNetwork: boolean;
  /** Whole-request timeout in ms (at most 5000). @default 5000 */
  timeoutMs?: number;
  /** Largest response body in bytes. @default 524288 */
  maxBytes?: number;
  /** Redirects followed, same host only. @default 3 */
  maxRedirects?: number;
  /** Which resolved addresses are refused; default {@link isForbiddenAddress}. Tests let a loopback server pass. */
  isForbidden?: (address: string) => boolean;
  /** Canonical `host:port` entries (`svc.fetch.private-hosts`) that may resolve to an RFC 1918 or fd00::/8 address. @default [] */
  privateHosts?: readonly string[];
  /** Extra trusted CA certificates (PEM) for https targets; tests use it for their own servers. */
  ca?: string;
  /** The name resolution (default node:dns `lookup`, all addresses); tests stand in a resolver of their own. */
  resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
  /** DNS for names outside `privateHosts` (default: the system's servers); tests set it, and only then are such names not given to `resolve`. */
  dns?: PublicDns;
}

/** A fetched document. */
export interface FetchedDocument {
  status: number;
  contentType: string;
  body: Buffer;
  /** The response's caching headers, lower-case names; oidc-provider reads them to decide when to fetch again. */
  headers: Record<string, string>;
}

/** Per-request choices of the caller (oidc-provider's own `fetch` options, {@link providerFetch}). */
export interface OutboundRequest {
  /** Aborts the request (DNS, connection and body) when it fires. */
  signal?: AbortSignal;
  /** `GET` or `HEAD`; nothing else is ever sent. @default 'GET' */
  method?: 'GET' | 'HEAD';
  /** `follow` (same host only), `manual` (return the 3xx as it is) or `error` (fail on a redirect). @default 'follow' */
  redirect?: 'follow' | 'manual' | 'error';
}

const CACHE_HEADERS = ['cache-control', 'expires', 'date', 'age', 'etag', 'last-modified'];

type Target = { address: string; family: number };

function abortReason(signal: AbortSignal): string {
  // A DOMException (AbortSignal.timeout) is not always an Error of this realm; its name is enough.
  const name: unknown = (signal.reason as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && /^[A-Za-z]{1,40}$/.test(name) ? name : 'AbortError';
}

/** One signal for a whole fetch: it fires at the deadline (`timed out`) or when the caller aborts. */
function watch(timeoutMs: number, caller?: AbortSignal): { signal: AbortSignal; end: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort('timed out'), timeoutMs);
  const onAbort = (): void => controller.abort(`was aborted (${abortReason(caller as AbortSignal)})`);
  if (caller?.aborted) onAbort();
  else caller?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    end: () => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}

const stopped = (url: URL, signal: AbortSignal): OutboundFetchError => new OutboundFetchError(url.href, String(signal.reason));

/** Settles with `work`, or fails when `signal` fires first. */
function bounded<T>(work: Promise<T>, url: URL, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(stopped(url, signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(stopped(url, signal));
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const systemResolve = (host: string): Promise<{ address: string; family: number }[]> => lookup(host, { all: true, verbatim: true });

/**
 * A name that must resolve to public addresses is asked of DNS (c-ares, no thread, no turn); one the
 * system may know otherwise (/etc/hosts), a listed private host or any name when private networks
 * are allowed, of getaddrinfo in turn. A lookup failure is an unresolvable name.
 */
function lookUp(host: string, listed: boolean, options: OutboundFetchOptions, signal: AbortSignal): Promise<Target[] | undefined> {
  if (!listed && !options.allowPrivateNetwork && (options.dns || !options.resolve)) return lookupPublicName(host, signal, options.dns);
  return lookupInTurn(() => (options.resolve ?? systemResolve)(host).catch(() => []), signal);
}

/** Every address of the URL's host, each vetted: the connection may go to any of them. */
async function resolveTargets(url: URL, options: OutboundFetchOptions, signal: AbortSignal): Promise<Target[]> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const listed = options.privateHosts?.includes(hostPortOf(url)) === true;
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await bounded(lookUp(host, listed, options, signal), url, signal);
  if (addresses === undefined) throw new OutboundFetchError(url.href, 'the host name\'s DNS does not answer in time');
  if (addresses.length === 0) throw new OutboundFetchError(url.href, 'the host name does not resolve');
  if (!options.allowPrivateNetwork) {
    const isForbidden = options.isForbidden ?? isForbiddenAddress;
    // Judged per hop on the answer that is connected to, so a listed name that later resolves to
    // loopback, or an unlisted name that resolves to a private address, is refused either way.
    // The reason names no address: what the provider's resolver answers for a name is its own network's, not the RP's.
    if (addresses.some((a) => isForbidden(a.address) && !(listed && isPrivateNetworkAddress(a.address)))) {
      throw new OutboundFetchError(url.href, 'resolves to a loopback, private, link-local or reserved address');
    }
  }
  return addresses;
}

interface Exchange {
  url: URL;
  targets: Target[];
  maxBytes: number;
  accept: string;
  method: 'GET' | 'HEAD';
  ca?: string;
  signal: AbortSignal;
}

function once({ url, targets, maxBytes, accept, method, ca, signal }: Exchange): Promise<{ response: IncomingMessage; body: Buffer }> {
  return new Promise((resolve, reject) => {
    // Connect to the addresses we vetted, not to a second resolution (no DNS rebinding); node tries
    // them in turn (autoSelectFamily) when it asks for all, as a browser falls back to the next one.
    const first = targets[0] as Target;
    const pinned: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: Target[]) => void)(null, targets);
      else callback(null, first.address, first.family);
    };
    const headers = { accept, 'user-agent': 'svc-connect' };
    const req = url.protocol === 'https:'
      ? httpsRequest(url, { agent: outboundAgents.https, method, lookup: pinned, headers, ...(ca ? { ca } : {}) })
      : httpRequest(url, { agent: outboundAgents.http, method, lookup: pinned, headers });
    const onAbort = (): void => void req.destroy(stopped(url, signal));
    // Settles once: later calls (the request's close after its response ended) change nothing.
    const fail = (err: unknown): void => {
      signal.removeEventListener('abort', onAbort);
      reject(err instanceof OutboundFetchError ? err : new OutboundFetchError(url.href, `could not be fetched (${(err as NodeJS.ErrnoException).code ?? (err as Error).name})`));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    req.on('error', fail);
    // node emits no error on the request once its response has begun: a connection closed before the response ended
    // (mid-body, before the last chunk) fails the response only, and a 101 answer only closes the socket.
    req.on('close', () => fail(new OutboundFetchError(url.href, 'could not be fetched (the connection closed before the response ended)')));
    req.on('upgrade', (_response, socket) => {
      socket.destroy();
      fail(new OutboundFetchError(url.href, 'answered 101 Switching Protocols, which is no document'));
    });
    req.on('response', (response) => {
      const tooLarge = (): void => {
        const err = new OutboundFetchError(url.href, `response larger than ${maxBytes} bytes`);
        fail(err);
        req.destroy(err);
      };
      const declared = Number(response.headers['content-length'] ?? '0');
      if (declared > maxBytes) {
        tooLarge();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) tooLarge();
        else chunks.push(chunk);
      });
      response.on('end', () => {
        signal.removeEventListener('abort', onAbort);
        resolve({ response, body: Buffer.concat(chunks) });
      });
      response.on('error', fail);
    });
    if (signal.aborted) onAbort();
    req.end();
  });
}

/**
 * The one outbound fetch of svc-connect, for `jwks_uri` and `x5u`: https only, at most 5 s (DNS
 * included) and 512 KiB, same-host redirects, and never to a special-purpose address (judged on the
 * resolved address, which is the one connected to) unless private networks are allowed, or the
 * host and port are in `privateHosts` and the address is an RFC 1918 or fd00::/8 one.
 *
 * @throws {@link OutboundFetchError} naming the URL and the rule that stopped it.
 */
export async function fetchDocument(href: string, options: OutboundFetchOptions, accept = 'application/json', request: OutboundRequest = {}): Promise<FetchedDocument> {
  const timeoutMs = Math.min(options.timeoutMs ?? 5000, 5000);
  const maxBytes = options.maxBytes ?? 512 * 1024;
  const method = request.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') throw new OutboundFetchError(href, `method ${String(method)} is not allowed (GET and HEAD only)`);
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw new OutboundFetchError(href, 'is not an absolute URL');
  }
  const originalHost = url.host;
  const { signal, end } = watch(timeoutMs, request.signal);
  try {
    for (let hop = 0; hop <= (options.maxRedirects ?? 3); hop += 1) {
      if (signal.aborted) throw stopped(url, signal);
      const schemes = options.allowPrivateNetwork ? ['https:', 'http:'] : ['https:'];
      if (!schemes.includes(url.protocol)) throw new OutboundFetchError(url.href, 'must use https');
      if (url.username || url.password) throw new OutboundFetchError(url.href, 'must not carry credentials');
      const targets = await resolveTargets(url, options, signal);
      const { response, body } = await once({ url, targets, maxBytes, accept, method, ca: options.ca, signal });
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (status >= 300 && status < 400 && location && request.redirect !== 'manual') {
        if (request.redirect === 'error') throw new OutboundFetchError(url.href, 'redirects, and the caller allows no redirects');
        if (!URL.canParse(location, url)) throw new OutboundFetchError(url.href, 'redirects to a Location that is no URL');
        const next = new URL(location, url);
        if (next.host !== originalHost) throw new OutboundFetchError(url.href, `redirects to another host (${next.host})`);
        url = next;
        continue;
      }
      const cached = CACHE_HEADERS.map((name) => [name, response.headers[name]]);
      const headers = Object.fromEntries(cached.filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
      return { status, contentType: String(response.headers['content-type'] ?? ''), body, headers };
    }
    throw new OutboundFetchError(href, 'too many redirects');
  } finally {
    end();
  }
}

import { lookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';

import { isForbiddenAddress } from './addresses.js';

/** Limits of the one outbound fetch (C11). */
export interface OutboundFetchOptions {
  /** Allow http and loopback/private targets (`svc.fetch.allow-private-network`; tests only). */
  allowPrivateNetwork: boolean;
  /**
   * Whole-request timeout in ms (at most 5000).
   * @default 5000
   */
  timeoutMs?: number;
  /**
   * Largest response body in bytes.
   * @default 524288
   */
  maxBytes?: number;
  /**
   * Redirects followed, same host only.
   * @default 3
   */
  maxRedirects?: number;
  /**
   * Which resolved addresses are refused; default {@link isForbiddenAddress}. Tests replace it to let
   * a loopback server stand in for a public one.
   */
  isForbidden?: (address: string) => boolean;
  /** Extra trusted CA certificates (PEM) for https targets; tests use it for their own servers. */
  ca?: string;
}

/** Why an outbound fetch failed; the message names the URL and the rule, never a response body. */
export class OutboundFetchError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(`${url}: ${reason}`);
    this.name = 'OutboundFetchError';
  }
}

/** A fetched document. */
export interface FetchedDocument {
  status: number;
  contentType: string;
  body: Buffer;
}

async function resolveTarget(url: URL, allowPrivate: boolean, isForbidden: (address: string) => boolean): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true, verbatim: true }).catch(() => []);
  if (addresses.length === 0) throw new OutboundFetchError(url.href, 'the host name does not resolve');
  if (!allowPrivate) {
    const bad = addresses.find((a) => isForbidden(a.address));
    if (bad) throw new OutboundFetchError(url.href, `resolves to a loopback, private, link-local or reserved address (${bad.address})`);
  }
  return addresses[0] as { address: string; family: number };
}

function once(url: URL, target: { address: string; family: number }, deadline: number, maxBytes: number, accept: string, ca?: string): Promise<{ response: IncomingMessage; body: Buffer }> {
  return new Promise((resolve, reject) => {
    // Connect to the address we vetted, not to a second resolution (no DNS rebinding).
    const pinned: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [target]);
      else callback(null, target.address, target.family);
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const remaining = Math.max(1, deadline - Date.now());
    const req = send(url, { method: 'GET', lookup: pinned, headers: { accept, 'user-agent': 'svc-connect' }, timeout: remaining, ...(ca ? { ca } : {}) });
    const timer = setTimeout(() => req.destroy(new OutboundFetchError(url.href, 'timed out')), remaining);
    req.on('timeout', () => req.destroy(new OutboundFetchError(url.href, 'timed out')));
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err instanceof OutboundFetchError ? err : new OutboundFetchError(url.href, `could not be fetched (${(err as NodeJS.ErrnoException).code ?? err.name})`));
    });
    req.on('response', (response) => {
      const declared = Number(response.headers['content-length'] ?? '0');
      if (declared > maxBytes) {
        req.destroy(new OutboundFetchError(url.href, `response larger than ${maxBytes} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) req.destroy(new OutboundFetchError(url.href, `response larger than ${maxBytes} bytes`));
        else chunks.push(chunk);
      });
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ response, body: Buffer.concat(chunks) });
      });
      response.on('error', () => undefined);
    });
    req.end();
  });
}

/**
 * The one outbound fetch of svc-connect (C11), for `jwks_uri` and `x5u`: https only (plus http
 * when private networks are allowed), at most 5 s and 512 KiB, redirects only within the same host,
 * and never to loopback, private, link-local or metadata addresses (checked on the resolved address,
 * which is the one connected to) unless private networks are allowed.
 *
 * @throws {@link OutboundFetchError} naming the URL and the rule that stopped it.
 */
export async function fetchDocument(href: string, options: OutboundFetchOptions, accept = 'application/json'): Promise<FetchedDocument> {
  const timeoutMs = Math.min(options.timeoutMs ?? 5000, 5000);
  const maxBytes = options.maxBytes ?? 512 * 1024;
  const deadline = Date.now() + timeoutMs;
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    throw new OutboundFetchError(href, 'is not an absolute URL');
  }
  const originalHost = url.host;
  for (let hop = 0; hop <= (options.maxRedirects ?? 3); hop += 1) {
    const schemes = options.allowPrivateNetwork ? ['https:', 'http:'] : ['https:'];
    if (!schemes.includes(url.protocol)) throw new OutboundFetchError(url.href, 'must use https');
    if (url.username || url.password) throw new OutboundFetchError(url.href, 'must not carry credentials');
    const target = await resolveTarget(url, options.allowPrivateNetwork, options.isForbidden ?? isForbiddenAddress);
    const { response, body } = await once(url, target, deadline, maxBytes, accept, options.ca);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (status >= 300 && status < 400 && location) {
      const next = new URL(location, url);
      if (next.host !== originalHost) throw new OutboundFetchError(url.href, `redirects to another host (${next.host})`);
      url = next;
      continue;
    }
    return { status, contentType: String(response.headers['content-type'] ?? ''), body };
  }
  throw new OutboundFetchError(href, 'too many redirects');
}

/**
 * oidc-provider's `fetch` configuration backed by {@link fetchDocument}, so the provider's own
 * `jwks_uri` refreshes obey the same rules.
 */
export function providerFetch(options: OutboundFetchOptions): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  return async (input) => {
    const doc = await fetchDocument(input instanceof Request ? input.url : String(input), options);
    return new Response(new Uint8Array(doc.body), { status: doc.status, headers: { 'content-type': doc.contentType } });
  };
}

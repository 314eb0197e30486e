import { OutboundFetchError } from '../errors.js';
import { fetchDocument, type OutboundFetchOptions, type OutboundRequest } from './fetch.js';

/** The shape of oidc-provider's `fetch` configuration option (WHATWG `fetch`). */
export type ProviderFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

function methodOf(input: string | URL | Request, init?: RequestInit): string {
  return (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
}

function redirectOf(input: string | URL | Request, init?: RequestInit): OutboundRequest['redirect'] {
  return init?.redirect ?? (input instanceof Request ? input.redirect : 'follow');
}

function acceptOf(input: string | URL | Request, init?: RequestInit): string {
  const accept = new Headers(init?.headers).get('accept') ?? (input instanceof Request ? input.headers.get('accept') : null);
  // A header value is sent as given; a line break would be refused by node:http anyway.
  return accept && !/[\r\n]/.test(accept) ? accept : 'application/json';
}

/**
 * oidc-provider's `fetch` configuration backed by {@link fetchDocument}, so the provider's own
 * fetches (the `jwks_uri` refresh above all) obey the same rules as ours: https only, the resolved
 * address vetted and pinned, at most 5 s, 512 KiB and same-host redirects.
 *
 * oidc-provider 9 calls it as `fetch(url, { method, headers, signal, dispatcher, redirect?, body? })`
 * (its helpers/fetch_request.js): `signal` is its own 2.5 s timeout and aborts our request (DNS,
 * connection and body); `method` GET and HEAD are sent, any other is refused (no feature we enable
 * sends one: back-channel logout and CIBA are off); of the headers only `accept` is sent (the
 * `user-agent` is ours); `redirect: 'manual' | 'error'` is honoured; `dispatcher` (undici) does not
 * apply to our node:http request and is ignored. The response carries the status, the content type
 * and the caching headers oidc-provider reads to decide when to fetch a JWK Set again.
 */
export function providerFetch(options: OutboundFetchOptions): ProviderFetch {
  return async (input, init) => {
    const href = input instanceof Request ? input.url : String(input);
    const method = methodOf(input, init);
    if (method !== 'GET' && method !== 'HEAD') throw new OutboundFetchError(href, `method ${method} is not allowed (GET and HEAD only)`);
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const doc = await fetchDocument(href, options, acceptOf(input, init), {
      method,
      redirect: redirectOf(input, init),
      ...(signal ? { signal } : {}),
    });
    const headers = new Headers(doc.headers);
    if (doc.contentType) headers.set('content-type', doc.contentType);
    if (doc.status < 200 || doc.status > 599) throw new OutboundFetchError(href, `answered with status ${doc.status}`);
    const nullBody = method === 'HEAD' || [204, 205, 304].includes(doc.status);
    return new Response(nullBody ? null : new Uint8Array(doc.body), { status: doc.status, headers });
  };
}

import { OutboundFetchError } from '../errors.js';
import { fetchDocument, type OutboundFetchOptions, type OutboundRequest } from './fetch.js';

/** The shape of oidc-provider's `fetch` configuration option (WHATWG `fetch`). */
export type ProviderFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * oidc-provider's `fetch` configuration backed by {@link fetchDocument}, so its own fetches obey our rules.
 * Of oidc-provider 9's `fetch(url, { method, headers, signal, dispatcher, redirect? })`: `signal` aborts our
 * request; GET and HEAD are sent, any other method refused; only `accept` is sent of the headers, and
 * `dispatcher` (undici) does not apply to node:http: it is ignored.
 */
export function providerFetch(options: OutboundFetchOptions): ProviderFetch {
  return async (input, init) => {
    const req = input instanceof Request ? input : undefined;
    const href = input instanceof Request ? input.url : String(input);
    const method = (init?.method ?? req?.method ?? 'GET').toUpperCase() as NonNullable<OutboundRequest['method']>;
    const signal = init?.signal ?? req?.signal;
    // A line break in a header value would be refused by node:http anyway.
    const accept = new Headers(init?.headers).get('accept') ?? req?.headers.get('accept');
    const doc = await fetchDocument(href, options, accept && !/[\r\n]/.test(accept) ? accept : 'application/json', {
      method,
      redirect: init?.redirect ?? req?.redirect ?? 'follow',
      ...(signal ? { signal } : {}),
    });
    const headers = new Headers(doc.headers);
    if (doc.contentType) headers.set('content-type', doc.contentType);
    if (doc.status < 200 || doc.status > 599) throw new OutboundFetchError(href, `answered with status ${doc.status}`);
    const nullBody = method === 'HEAD' || [204, 205, 304].includes(doc.status);
    return new Response(nullBody ? null : new Uint8Array(doc.body), { status: doc.status, headers });
  };
}

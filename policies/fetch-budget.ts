import type { ClientMetadata } from 'oidc-provider';

import { OutboundFetchError } from '../lib/errors.js';
import type { FetchedDocument } from '../lib/net/fetch.js';
import type { PolicyDependencies } from './types.js';

/** How long all outbound fetches of one registration request (its `jwks_uri`, every `x5u`, its `sector_identifier_uri`) may take together, in ms. */
export const FETCH_BUDGET_MS = 5000;

const deadlines = new WeakMap<ClientMetadata, number>();

/**
 * The guarded fetch of C11 within one time budget per registration request: its first fetch starts
 * a {@link FETCH_BUDGET_MS} clock, after which every fetch fails with an {@link OutboundFetchError}
 * (so 32 keys with an `x5u` each cost 5 s, not 32 × 5 s).
 *
 * @param properties - the request's metadata object, the same for every policy of the request
 */
export function budgetedFetch(properties: ClientMetadata, deps: PolicyDependencies): (url: string, accept: string) => Promise<FetchedDocument> {
  return async (url, accept) => {
    let deadline = deadlines.get(properties);
    if (deadline === undefined) {
      deadline = Date.now() + FETCH_BUDGET_MS;
      deadlines.set(properties, deadline);
    }
    const spent = `the outbound fetches of one registration request share ${FETCH_BUDGET_MS / 1000} s`;
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new OutboundFetchError(url, `not fetched: ${spent}, and they are spent`);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new OutboundFetchError(url, `timed out (${spent})`)), remaining);
    });
    const pending = deps.fetch(url, accept);
    // A failure after the budget expired has nobody to tell (the race already rejected).
    pending.catch(() => undefined);
    try {
      return await Promise.race([pending, expired]);
    } finally {
      clearTimeout(timer);
    }
  };
}

import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import type { FetchedDocument } from '../../lib/net/fetch.js';
import { budgetedFetch, FETCH_BUDGET_MS } from '../../policies/fetch-budget.js';
import type { PolicyDependencies } from '../../policies/types.js';
import { subjectTypePolicy } from '../../policies/subject-type.js';

/** A fetch that answers only when the test says so, counting calls. */
function slowFetch(): { deps: PolicyDependencies; urls: string[]; answer(url: string): void } {
  const urls: string[] = [];
  const pending = new Map<string, (doc: FetchedDocument) => void>();
  return {
    urls,
    deps: {
      fetch: (url) => {
        urls.push(url);
        return new Promise((resolve) => pending.set(url, resolve));
      },
    },
    answer: (url) => pending.get(url)?.({ status: 200, contentType: 'text/plain', body: Buffer.from('ok'), headers: {} }),
  };
}

describe('budgetedFetch: all outbound fetches of one registration request share 5 s', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('fails the fetch that overruns the budget, and fetches nothing more for that request; another request has its own', async () => {
    jest.useFakeTimers();
    const slow = slowFetch();
    const properties = {} as ClientMetadata;
    const fetch = budgetedFetch(properties, slow.deps);

    const first = fetch('https://rp.example/a.pem', 'text/plain');
    await jest.advanceTimersByTimeAsync(3000);
    slow.answer('https://rp.example/a.pem');
    await expect(first).resolves.toMatchObject({ status: 200 });

    // The second fetch gets what is left of the 5 s, not 5 s of its own.
    const second = budgetedFetch(properties, slow.deps)('https://rp.example/b.pem', 'text/plain');
    const settled = expect(second).rejects.toThrow('https://rp.example/b.pem: timed out (the outbound fetches of one registration request share 5 s)');
    await jest.advanceTimersByTimeAsync(FETCH_BUDGET_MS - 3000);
    await settled;

    await expect(fetch('https://rp.example/c.pem', 'text/plain')).rejects.toThrow('https://rp.example/c.pem: not fetched: the outbound fetches of one registration request share 5 s, and they are spent');
    expect(slow.urls).toEqual(['https://rp.example/a.pem', 'https://rp.example/b.pem']);

    const other = budgetedFetch({} as ClientMetadata, slow.deps)('https://rp.example/d.pem', 'text/plain');
    slow.answer('https://rp.example/d.pem');
    await expect(other).resolves.toMatchObject({ status: 200 });
  });

  it("counts the sector_identifier_uri in: after keys that took the whole budget it is not fetched", async () => {
    jest.useFakeTimers();
    const slow = slowFetch();
    const properties: ClientMetadata = { client_id: 'rp', redirect_uris: ['https://rp.example/cb'], subject_type: 'pairwise', sector_identifier_uri: 'https://rp.example/sector.json' };
    const keys = budgetedFetch(properties, slow.deps)('https://rp.example/jwks', 'application/json');
    const settled = expect(keys).rejects.toThrow('timed out');
    await jest.advanceTimersByTimeAsync(FETCH_BUDGET_MS);
    await settled;
    const registration = { oidc: { route: 'registration' } } as unknown as Parameters<ReturnType<typeof subjectTypePolicy>>[0];
    const judged = expect(subjectTypePolicy(slow.deps)(registration, properties)).rejects.toMatchObject({
      error: 'invalid_client_metadata',
      error_description: 'sector_identifier_uri: could not be fetched: https://rp.example/sector.json: not fetched: the outbound fetches of one registration request share 5 s, and they are spent',
    });
    await jest.advanceTimersByTimeAsync(0);
    expect(slow.urls).toEqual(['https://rp.example/jwks']);
    await judged;
  });

  it('passes errors of the fetch through unchanged', async () => {
    const failing: PolicyDependencies = { fetch: () => Promise.reject(new Error('refused')) };
    await expect(budgetedFetch({} as ClientMetadata, failing)('https://rp.example/x', 'text/plain')).rejects.toThrow('refused');
  });
});

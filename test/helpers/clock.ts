import { jest } from '@jest/globals';

/**
 * Moves this process's clock (`Date.now`, which oidc-provider, openid-client and our stores read)
 * `ms` ahead until `restore()`: time-dependent rules (expiry, `max_age`) are tested without
 * waiting. The clock keeps running from there. Records a store expires by its own clock (a Redis
 * TTL) are not affected: test those by polling the store.
 */
export function clockAhead(ms: number): { restore(): void } {
  const real = Date.now.bind(Date);
  const spy = jest.spyOn(Date, 'now').mockImplementation(() => real() + ms);
  return { restore: () => spy.mockRestore() };
}

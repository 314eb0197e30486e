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

/**
 * Stops this process's clock (`Date.now`) at `ms` (epoch milliseconds) until `restore()`; `set` moves it to another
 * instant. For rules decided to the second (an expiry exactly at its end, one second either side), which a running
 * clock would blur. Records a store expires by its own clock (a Redis TTL) are not affected.
 */
export function clockAt(ms: number): { set(ms: number): void; restore(): void } {
  let at = ms;
  const spy = jest.spyOn(Date, 'now').mockImplementation(() => at);
  return {
    set: (next) => void (at = next),
    restore: () => spy.mockRestore(),
  };
}

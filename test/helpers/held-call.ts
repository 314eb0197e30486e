import { createStaticAuthenticator } from '../../lib/demo/accounts.js';
import type { Authenticator } from '../../lib/claims/authenticator.js';

/** What {@link heldCall}'s `hold()` gives the test: when the held call came in, and how to let it go on. */
export interface Held {
  arrived: Promise<void>;
  release: () => void;
}

/**
 * A call the test holds at a point of its choosing, without sleeps: code under test awaits `pass()` at that point, which
 * waits only after `hold()` armed it (once); the test learns the call `arrived` there and `release()`s it when it likes.
 */
export function heldCall(): { pass: () => Promise<void>; hold: () => Held } {
  let armed: { arrived: () => void; go: Promise<void> } | undefined;
  return {
    pass: async () => {
      const hold = armed;
      armed = undefined;
      if (hold) {
        hold.arrived();
        await hold.go;
      }
    },
    hold: () => {
      let arrived!: () => void;
      let release!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      armed = { arrived, go: new Promise<void>((resolve) => (release = resolve)) };
      return { arrived: arrival, release };
    },
  };
}

/** The demo accounts, each `exists` (oidc-provider asks it after a request read its session) first passing `call`. */
export function accountsHeldAt(call: { pass: () => Promise<void> }): Authenticator {
  const accounts = createStaticAuthenticator();
  return {
    ...accounts,
    exists: async (accountId) => {
      await call.pass();
      return accounts.exists(accountId);
    },
  };
}

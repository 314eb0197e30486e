import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

import type { Middleware } from 'koa';

const signature = (key: KeyObject, data: string): string => createHmac('sha1', key).update(data).digest('base64url');

/** Whether two signatures are the same: `timingSafeEqual` after a length check (lengths are public). */
export function sameSignature(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The signer of Koa's signed cookies (`app.keys`), making Keygrip's very signatures (HMAC-SHA1,
 * base64url) more cheaply: keys imported once, and `timingSafeEqual` after a length check (lengths
 * are public) instead of Keygrip's double hashing. A flow reads and writes some forty signed cookies.
 */
export class CookieKeyring {
  private readonly keys: readonly KeyObject[];

  /** @param keys the cookie keys, newest first (signing uses the first; all verify). */
  constructor(keys: readonly string[]) {
    if (keys.length === 0) throw new TypeError('CookieKeyring: at least one cookie key is required');
    this.keys = keys.map((key) => createSecretKey(Buffer.from(key, 'utf8')));
  }

  /** The signature of `data` under the newest key. */
  sign(data: string): string {
    return signature(this.keys[0] as KeyObject, data);
  }

  /** Whether `digest` is a signature of `data` under any key. */
  verify(data: string, digest: string): boolean {
    return this.index(data, digest) > -1;
  }

  /** The index of the key that signed `data` as `digest`, or -1. */
  index(data: string, digest: string): number {
    for (let i = 0; i < this.keys.length; i += 1) {
      if (sameSignature(signature(this.keys[i] as KeyObject, data), digest)) return i;
    }
    return -1;
  }
}

/**
 * `inner` (the front door) with its cookie jar signing and reading with `keyring` (`svc.cookieKeys`), as
 * `provider.interactionDetails` reads them, whatever keys the host app has; the host's own middleware,
 * before svc.middleware and after it (a request none of our routes answers), has the host's keys.
 */
export function ownCookieKeys(keyring: CookieKeyring, inner: Middleware): Middleware {
  return (ctx, next) => {
    // The jar's signer, an instance member of `cookies` its typings leave out.
    const jar = ctx.cookies as typeof ctx.cookies & { keys?: unknown };
    const hostKeys = jar.keys;
    const use = (keys: unknown) => () => {
      jar.keys = keys;
    };
    use(keyring)();
    const hostNext = () => {
      use(hostKeys)();
      return next().finally(use(keyring));
    };
    return (inner(ctx, hostNext) as Promise<void>).finally(use(hostKeys));
  };
}

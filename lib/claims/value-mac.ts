import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** Separates the claim value key from every other use of the cookie keys. */
const CLAIM_VALUE_MAC_INFO = 'svc-connect claim value mac';

/** 96 bits of HMAC-SHA-256 decide equality under a key only the provider holds (no offline search). */
const MAC_BYTES = 12;

/** A value as it travels: its JSON (a module's `Date` is its ISO text, a class instance its own members), `null` for none. */
function travelled(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? null : (JSON.parse(text) as unknown);
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
  }
  return value;
}

/** Makes and checks the MACs of requested values for one client (see {@link ClaimValueMac}). */
export interface ValueMatcher {
  /** The MAC a requested `value` is stored as (newest key). */
  mac(value: unknown): string;
  /** Whether `value` is the value a stored MAC was made from, under any configured key. */
  matches(value: unknown, stored: string): boolean;
}

/**
 * How a requested claim `value` (C5) is kept: HMAC-SHA-256 of `[client_id, value]` (canonical JSON)
 * under a key derived from the cookie keys, which are not in the store, so a dump confirms no guess
 * nor that two clients asked the same. New MACs use the newest key; any configured key matches.
 */
export class ClaimValueMac {
  private readonly keys: Buffer[];

  /** @throws TypeError when no cookie key is given. */
  constructor(cookieKeys: readonly string[]) {
    if (cookieKeys.length === 0 || cookieKeys.some((k) => typeof k !== 'string' || k.length === 0)) {
      throw new TypeError('cookies.keys must hold at least one non-empty key to derive the claim value MAC key');
    }
    this.keys = cookieKeys.map((k) => Buffer.from(hkdfSync('sha256', Buffer.from(k, 'utf8'), Buffer.alloc(0), CLAIM_VALUE_MAC_INFO, 32)));
  }

  /** The MACs of values requested by `clientId`. */
  forClient(clientId: string): ValueMatcher {
    const input = (value: unknown): string => JSON.stringify([clientId, canonical(travelled(value))]);
    const macWith = (key: Buffer, text: string): Buffer => createHmac('sha256', key).update(text, 'utf8').digest().subarray(0, MAC_BYTES);
    return {
      mac: (value) => macWith(this.keys[0] as Buffer, input(value)).toString('base64url'),
      matches: (value, stored) => {
        const expected = Buffer.from(stored, 'base64url');
        if (expected.length !== MAC_BYTES) return false;
        const text = input(value);
        return this.keys.some((key) => timingSafeEqual(macWith(key, text), expected));
      },
    };
  }
}

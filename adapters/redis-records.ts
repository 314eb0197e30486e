import { isDeepStrictEqual } from 'node:util';

import type { AdapterPayload } from 'oidc-provider';

import { StoreRecordUnreadableError } from '../lib/errors.js';

/*
 * A record is one string, written with one `SET … EX`: a header, `|`, then the payload JSON. The
 * header starts with `j` when the `jti` equals the id and was left out (restored from the id on
 * read, so a dump of Redis holds no token value), `-` otherwise; a consumed record then carries `c`,
 * the epoch seconds of its consumption and, when the consume script made it, `.` and that consume's
 * random marker (`jc1795519703.Xq3v9LkA|{…}`). The consume scripts rewrite only the header, keeping
 * the expiry (`SET … KEEPTTL`).
 */

/** The stored form of `payload` for the record `id`. */
export function encodeRecord(id: string, payload: AdapterPayload): string {
  const stored: Record<string, unknown> = { ...payload };
  const consumed = Number(stored.consumed);
  delete stored.consumed;
  const jtiIsId = stored.jti === id;
  if (jtiIsId || stored.jti === undefined) delete stored.jti;
  return `${jtiIsId ? 'j' : '-'}${consumed ? `c${consumed}` : ''}|${JSON.stringify(stored)}`;
}

/** A header as {@link encodeRecord} and the consume scripts write it. */
const HEADER = /^[j-](c\d+(\.[\w-]+)?)?$/;

/**
 * The payload of the stored string `value` of the record `id` (a fresh object); `undefined` if missing. Without `id`
 * (a record found by its key's reference), a `jti` left out stays out.
 * @throws {@link StoreRecordUnreadableError} for a value that is not a header, `|` and a JSON object.
 */
export function decodeRecord(id: string | undefined, value: string | null): AdapterPayload | undefined {
  if (value === null) return undefined;
  const bar = value.indexOf('|');
  const header = bar < 0 ? '' : value.slice(0, bar);
  let payload: unknown;
  try {
    payload = HEADER.test(header) ? JSON.parse(value.slice(bar + 1)) : undefined;
  } catch {
    // not JSON: refused below
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw new StoreRecordUnreadableError();
  const record = payload as AdapterPayload;
  if (header.startsWith('j') && id !== undefined) record.jti = id;
  if (header.charAt(1) === 'c') record.consumed = Number.parseInt(header.slice(2), 10);
  return record;
}

/** Two payloads stored alike but for their expiry (`exp`), whatever the order of their members. */
export function sameButExpiry(a: AdapterPayload, b: AdapterPayload): boolean {
  const { exp: _a, ...restA } = a;
  const { exp: _b, ...restB } = b;
  return isDeepStrictEqual(JSON.parse(JSON.stringify(restA)), JSON.parse(JSON.stringify(restB)));
}

import { hash } from 'node:crypto';

import type { AdapterPayload } from 'oidc-provider';

/**
 * A record as the inventory shows it. Never its id (token ids are bearer values): it is named by
 * its `ref`, and its payload comes without `jti` (which may equal the id).
 */
export interface ListedRecord {
  /** The base64url SHA-256 of the record's id (43 characters). */
  ref: string;
  /** The stored payload without `jti`; `consumed` (epoch seconds) when the record was consumed. */
  payload: AdapterPayload;
}

/** One page of {@link StoreInventory.list}. */
export interface RecordPage {
  /** At most `limit` records; a page may be short, even empty, while `cursor` is given. */
  records: ListedRecord[];
  /** Pass it back for the next page; absent after the last page. */
  cursor?: string;
}

/**
 * What an operator's toolbox needs from a store beyond oidc-provider's adapter: enumerating the live
 * records of a model a page at a time, and removing a record (or everything of a grant) by its
 * reference. Pages are not a snapshot: every record that lives throughout the listing appears at
 * least once (on Redis possibly twice, while the keyspace is resized).
 */
export interface StoreInventory {
  /**
   * A page of the live records of `model`.
   * @throws {@link InvalidCursorError} for a cursor this store did not hand out.
   */
  list(model: string, page: { cursor?: string; limit: number }): Promise<RecordPage>;
  /** Removes the record of `model` named by `ref` (and its indexes); `false` when there was none. */
  destroy(model: string, ref: string): Promise<boolean>;
  /** Removes every record written with the grant whose id hashes to `ref`; resolves how many. */
  revokeGrant(ref: string): Promise<number>;
}

/** The reference of a record id: base64url SHA-256 (as the Redis store names keys). */
export const refOf = (id: string): string => hash('sha256', id, 'base64url');

/** True for a well-formed reference (43 base64url characters). */
export const isRef = (value: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(value);

/** The largest page a store hands out, whatever `limit` asks for. */
export const MAX_PAGE = 500;

/** The size of the page a store hands out when asked for `limit` records: 1 to {@link MAX_PAGE}. */
export const pageSize = (limit: number): number => Math.max(1, Math.min(limit, MAX_PAGE));

/** A payload as the inventory shows it: without `jti`. */
export function listedPayload(payload: AdapterPayload): AdapterPayload {
  const { jti: _jti, ...rest } = payload;
  return rest;
}

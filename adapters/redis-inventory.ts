import type { Cluster, Redis } from 'ioredis';
import type { AdapterPayload } from 'oidc-provider';

import { isRef, listedPayload, MAX_PAGE, pageSize, type ListedRecord, type StoreInventory } from './inventory.js';
import { InvalidCursorError, StoreRecordUnreadableError } from '../lib/errors.js';

/** What the Redis store lends its inventory. */
interface RedisInventoryDeps {
  client: Redis | Cluster;
  /** The masters: the server, or every master of a Cluster (a new array each call). */
  masters: () => Redis[];
  /** The key prefix of every key of this store. */
  prefix: string;
  /** Runs one store operation with the store's fail-fast timeout and circuit breaker. */
  run: <T>(operation: () => Promise<T>) => Promise<T>;
  /** The payload of `value`, read under `key`, a record of `model` whose id is not known (`decodeRecord`, logged when unreadable); one unreadable is not listed. */
  decode: (model: string, key: string, value: string | null) => AdapterPayload | undefined;
  revokeGrant: StoreInventory['revokeGrant'];
  /** Deletes the record of `model` at `key` as the store deletes records (cached ones everywhere); `true` when it existed. */
  remove: (model: string, key: string) => Promise<boolean>;
}

/** Where a listing stands: the master being scanned (`''` once all are done), its SCAN cursor, references not yet handed out. */
interface ScanState {
  node: string;
  scan: string;
  pending: string[];
}

/** SCAN calls one page may make before it returns (short, even empty) with a cursor. */
const SCANS_PER_PAGE = 64;

const escapeGlob = (text: string): string => text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

/** A node's address as the Cluster's slot table names it (`host:port`). */
export const nodeName = (node: Redis): string => `${node.options.host ?? ''}:${node.options.port ?? ''}`;

const encode = (state: ScanState): string => Buffer.from(JSON.stringify({ n: state.node, c: state.scan, p: state.pending })).toString('base64url');

/** The largest cursor Redis accepts (an unsigned 64-bit integer); a larger one is refused as a store error. */
const MAX_SCAN_CURSOR = 2n ** 64n - 1n;

function decode(cursor: string, nodes: string[]): ScanState {
  try {
    const { n, c, p } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { n?: unknown; c?: unknown; p?: unknown };
    if (typeof n === 'string' && (n === '' || nodes.includes(n)) && typeof c === 'string' && /^\d{1,20}$/.test(c) && BigInt(c) <= MAX_SCAN_CURSOR && Array.isArray(p) && p.length <= MAX_PAGE && p.every((r) => typeof r === 'string' && isRef(r))) {
      return { node: n, scan: c, pending: p as string[] };
    }
  } catch {
    // not JSON: refused below
  }
  throw new InvalidCursorError();
}

/**
 * The Redis store's {@link StoreInventory}: `SCAN … MATCH {prefix}{Model}:*` on the server, or on
 * every master of a Cluster in turn. The cursor (base64url JSON of a {@link ScanState}) keeps what
 * did not fit the page, so nothing is skipped; a sparse keyspace yields short pages with a cursor.
 */
export function createRedisInventory(deps: RedisInventoryDeps): StoreInventory {
  const { client, prefix, run } = deps;
  const masters = (): Redis[] => deps.masters().sort((a, b) => nodeName(a).localeCompare(nodeName(b)));

  const read = async (model: string, ref: string): Promise<ListedRecord | undefined> => {
    const key = `${prefix}${model}:${ref}`;
    const value = await run(() => client.get(key));
    try {
      // The id is not known here (only its hash): a jti left out of the payload is not restored.
      const payload = deps.decode(model, key, value);
      return payload ? { ref, payload: listedPayload(payload) } : undefined;
    } catch (err) {
      // Logged by `decode`. Every other read of it fails, so it serves nobody: listed, it would stop every revocation.
      if (err instanceof StoreRecordUnreadableError) return undefined;
      throw err;
    }
  };

  return {
    async list(model, page) {
      const limit = pageSize(page.limit);
      const nodes = masters();
      const names = nodes.map(nodeName);
      const state: ScanState = page.cursor === undefined ? { node: names[0] ?? '', scan: '0', pending: [] } : decode(page.cursor, names);
      const keyStart = `${prefix}${model}:`;
      const pattern = `${escapeGlob(keyStart)}*`;
      const records: ListedRecord[] = [];
      const seen = new Set<string>();
      let scans = 0;
      while (records.length < limit) {
        if (state.pending.length > 0) {
          const refs = state.pending.splice(0, limit - records.length);
          for (const record of await Promise.all(refs.map((ref) => read(model, ref)))) {
            if (record && !seen.has(record.ref)) {
              seen.add(record.ref);
              records.push(record);
            }
          }
          continue;
        }
        if (scans >= SCANS_PER_PAGE) break;
        const index = names.indexOf(state.node);
        const node = nodes[index];
        if (!node) break;
        const [next, keys] = await run(() => node.scan(state.scan, 'MATCH', pattern, 'COUNT', Math.max(limit - records.length, 16)));
        scans += 1;
        state.pending = keys.map((key) => key.slice(keyStart.length)).filter(isRef);
        if (next === '0') {
          state.node = names[index + 1] ?? '';
          state.scan = '0';
        } else state.scan = next;
      }
      const done = state.pending.length === 0 && !names.includes(state.node);
      return { records, ...(done ? {} : { cursor: encode(state) }) };
    },
    destroy: async (model, ref) => isRef(ref) && deps.remove(model, `${prefix}${model}:${ref}`),
    revokeGrant: async (ref) => (isRef(ref) ? deps.revokeGrant(ref) : 0),
  };
}

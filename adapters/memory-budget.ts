import { StoreUnavailableError } from '../lib/errors.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import { CROWDED_SHARE, FLOW_HEADROOM } from './store.js';

/**
 * How often a write that does not fit may sweep the store: under a flood held at the limit, its records expiring one by
 * one, every refused request would otherwise walk every record.
 */
export const SWEEP_GAP_MS = 1000;

/**
 * What the memory store's records and attempt counters may hold together, in approximate bytes: the `maxmemory` and
 * `noeviction` of a Redis deployment. Nothing is evicted: a write that does not fit, once what expired is dropped, is
 * refused with the store's 503 as Redis refuses one (`OOM`). Writes that start a flow (a stranger's new interaction)
 * are refused at nine tenths already, so people mid-flow can finish.
 */
export interface MemoryBudget {
  /** Whether `bytes` more fit (`start`: below the headroom), dropping what expired first when anything may have. */
  fits(bytes: number, start?: boolean): boolean;
  /** Counts `bytes` more held (negative: freed), by something that expires at `expiresAt`. */
  hold(bytes: number, expiresAt?: number): void;
  /** The refusal of a write that did not fit; the first one since there was room logs `store_full`. */
  refusal(): StoreUnavailableError;
  /**
   * Whether new flows may start (`/readyz`): false from a refusal until the store holds at most eight tenths of its
   * limit again (a flood held at the limit, taking each place that frees, keeps it false and logs nothing more).
   */
  ready(): boolean;
  /** Whether it holds at least {@link CROWDED_SHARE} of its limit. */
  crowded(): boolean;
}

/**
 * A budget of `maxBytes`; `sweep` drops every expired record and counter (freeing through {@link MemoryBudget.hold})
 * and returns the earliest expiry of those left.
 */
export function createMemoryBudget(options: { maxBytes: number; now: () => number; sweep: () => number; logger?: Logger }): MemoryBudget {
  const { maxBytes, now, sweep } = options;
  const logger = options.logger ?? silentLogger;
  const startLimit = maxBytes - Math.floor(maxBytes * FLOW_HEADROOM);
  const recoveredBelow = startLimit - Math.floor(maxBytes * FLOW_HEADROOM);
  let used = 0;
  /** No record or counter held expires before this (a lower bound: a sweep makes it exact). */
  let earliest = Infinity;
  let full = false;
  let sweptAt = -Infinity;
  const room = (bytes: number, start: boolean): boolean => used + bytes <= (start ? startLimit : maxBytes);
  /**
   * Drops what expired when anything may have and `bytes` do not fit, at most once per {@link SWEEP_GAP_MS}; ends the
   * refusals once below eight tenths.
   */
  const settle = (bytes: number, start = false): boolean => {
    const t = now();
    if (!room(bytes, start) && earliest <= t && t - sweptAt >= SWEEP_GAP_MS) {
      sweptAt = t;
      earliest = sweep();
    }
    if (full && used <= recoveredBelow) {
      full = false;
      logger.info('store_recovered', { store: 'memory' });
    }
    return room(bytes, start);
  };
  return {
    fits: settle,
    hold(bytes, expiresAt = Infinity) {
      used += bytes;
      if (expiresAt < earliest) earliest = expiresAt;
    },
    refusal() {
      if (!full) logger.error('store_full', { store: 'memory', max_bytes: maxBytes });
      full = true;
      return new StoreUnavailableError({ cause: new Error(`the memory store holds its limit of ${maxBytes} bytes (svc.memory-store.max-mb)`) });
    },
    ready: () => !full || (settle(Infinity, true), !full),
    crowded: () => used >= maxBytes * CROWDED_SHARE,
  };
}

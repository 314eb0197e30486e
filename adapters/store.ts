import type { Adapter } from 'oidc-provider';

import type { StoreInventory } from './inventory.js';

/**
 * A store holds all provider state for one provider (or for several processes sharing it, on
 * Redis). It hands oidc-provider one adapter per model, answers readiness probes, and closes.
 *
 * Semantics every store keeps (the contract suite in `test/adapters/` checks them):
 * - a record written with `expiresIn` is gone after that many seconds; indexes expire with it;
 * - `find` returns a copy, never a live reference;
 * - `consume` is atomic: of concurrent consumers exactly one succeeds, the others reject with
 *   `invalid_grant`;
 * - `unconsume` removes only the consumed mark, atomically, keeping the payload and the expiry;
 * - `revokeByGrantId` removes every record written with that `grantId`, whatever its model;
 * - `inventory.list` pages through the live records of a model, each live record at least once,
 *   never an id or `jti`; `inventory.destroy` and `revokeGrant` act by reference (SHA-256 of the id).
 */
export interface SvcStore {
  /** The oidc-provider adapter factory: one adapter per model name. */
  readonly adapter: (model: string) => Adapter;
  /**
   * Gives a consumed record back: removes its consumed mark (see `consume`) in one atomic step that
   * touches only that record and keeps its payload and remaining lifetime. Resolves `true` when the
   * record exists (now unconsumed, whether or not it was consumed), `false` when it is gone.
   * Single-use tokens use it when their request fails: unlike rewriting the whole record, it cannot
   * leave the record deleted or half written, and it never extends a lifetime.
   */
  unconsume(model: string, id: string): Promise<boolean>;
  /** Attempt counters for throttling (login, management), shared by every process on the store. */
  readonly attempts: AttemptCounter;
  /**
   * Enumerates and removes records by reference, for the operator's toolbox (both built-in stores
   * have it). A store without it serves everything but the toolbox's listings and revocations.
   */
  readonly inventory?: StoreInventory;
  /**
   * Runs `fn` (one request) as one unit of store work: writes of the models of a flow (interactions,
   * sessions, grants, codes, access tokens) may be deferred and sent together
   * when `fn` settles, reads inside `fn` see them, records read twice are read once, and commands
   * issued together go together. Resolves once every deferred write landed; rejects with a 503
   * `server_error` when one failed, even if `fn` succeeded, so a response is never sent for writes
   * that did not happen. Single-use claims (`consume`), revocations and everything of other models act
   * at once, after the writes deferred before them. Nested calls join the outer one. A store without
   * round trips (memory) need not have it.
   */
  batch?<T>(fn: () => Promise<T>): Promise<T>;
  /** Resolves when the store answers; rejects otherwise (used by `/readyz`). */
  ping(): Promise<void>;
  /** Releases connections and timers. */
  close(): Promise<void>;
}

/** Models whose records carry a `grantId` and are removed by `revokeByGrantId`. */
export const GRANTABLE_MODELS: ReadonlySet<string> = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'ClientCredentials',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

/**
 * An adapter that runs `overrides` and delegates everything else to `inner` (methods called on
 * `inner`, so class-based adapters keep their `this`).
 */
export function decorateAdapter(inner: Adapter, overrides: Partial<Adapter>): Adapter {
  return {
    upsert: overrides.upsert ?? ((id, payload, expiresIn) => inner.upsert(id, payload, expiresIn)),
    find: overrides.find ?? ((id) => inner.find(id)),
    findByUid: overrides.findByUid ?? ((uid) => inner.findByUid(uid)),
    findByUserCode: overrides.findByUserCode ?? ((code) => inner.findByUserCode(code)),
    consume: overrides.consume ?? ((id) => inner.consume(id)),
    destroy: overrides.destroy ?? ((id) => inner.destroy(id)),
    revokeByGrantId: overrides.revokeByGrantId ?? ((grantId) => inner.revokeByGrantId(grantId)),
  };
}

/** How a throttled key is counted (see {@link AttemptCounter}). */
export interface AttemptRule {
  /** Failures allowed within one window; the one that reaches it starts a cool-down. */
  limit: number;
  /** Length of a counting window, in seconds, from the first failure in it. */
  windowSeconds: number;
  /** Cool-down after the first lockout, in seconds; each further lockout doubles it. */
  coolDownSeconds: number;
  /** Longest cool-down, in seconds. */
  maxCoolDownSeconds: number;
  /**
   * Consecutive failures (across windows, remembered for {@link RUN_MEMORY_SECONDS}) after which
   * the key is refused until {@link AttemptCounter.leave} forgets it (NIST SP 800-63B 5.2.2).
   * Unset: no such limit.
   */
  consecutiveLimit?: number;
}

/**
 * Atomic failure counting in the store, so every provider process sees the same counts (C8).
 * Keys are opaque strings chosen by the caller (hash or MAC anything personal first); the store
 * keeps them only hashed.
 *
 * Only completed failures count: an attempt is checked before it is judged (nothing written), and
 * settled after, in one atomic step that decides whether its outcome may be revealed. Of any
 * number of concurrent wrong guesses, the first `limit` to settle are within the budget and the
 * one that reaches it starts the cool-down; a right guess is refused only when failures that
 * settled before it locked the key, never because of attempts still in flight.
 */
export interface AttemptCounter {
  /**
   * The pre-check: resolves 0 when `key` may try, otherwise the milliseconds until it may (its
   * cool-down, or `rule.consecutiveLimit` failures in a row). Writes nothing.
   */
  check(key: string, rule: AttemptRule): Promise<number>;
  /**
   * Settles a wrong guess: counts one failure (the one that reaches `rule.limit` starts the
   * cool-down, which doubles with each lockout up to `rule.maxCoolDownSeconds`; lockouts are
   * remembered for a day). Resolves 0 when it was within the budget (the caller may say the guess
   * was wrong), otherwise the milliseconds of the cool-down that failures settled before it started.
   */
  fail(key: string, rule: AttemptRule): Promise<number>;
  /**
   * Settles a right guess: resolves 0 when no failures settled before it have locked the key (the
   * caller may let it in), otherwise the milliseconds until the key may try. When 0 and `forget`,
   * the key's failures, cool-down and run of failures are forgotten.
   */
  succeed(key: string, rule: AttemptRule, forget: boolean): Promise<number>;
  /** Forgets everything about `key` (a sign-in proved elsewhere, an operator's reset). */
  forget(key: string): Promise<void>;
}

/** How long consecutive failures are remembered without a new one, in seconds (30 days). */
export const RUN_MEMORY_SECONDS = 2_592_000;

/** How long the number of lockouts of a key is remembered, in seconds. */
export const STRIKE_MEMORY_SECONDS = 86_400;

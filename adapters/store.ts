import type { Adapter, AdapterPayload } from 'oidc-provider';

import type { StoreInventory } from './inventory.js';

/**
 * A store holds all provider state for one provider (or for several processes sharing it, on
 * Redis). The contract suite in `test/adapters/` checks what every store keeps: records and their
 * indexes expire with `expiresIn`; `find` returns a copy; `findByUid` a session without its `jti` (her cookie's
 * value, which no index holds); `consume` and `insert` are atomic (of concurrent
 * consumers one wins, the others get `invalid_grant`; of concurrent inserts one writes); `revokeByGrantId` removes every record of
 * the grant, whatever its model.
 */
export interface SvcStore {
  /** The oidc-provider adapter factory: one adapter per model name. */
  readonly adapter: (model: string) => Adapter;
  /**
   * Removes a record's consumed mark in one atomic step, keeping its payload and remaining lifetime
   * (so a single-use token whose request failed can be given back without rewriting the record).
   * Resolves `true` when the record exists, `false` when it is gone.
   */
  unconsume(model: string, id: string): Promise<boolean>;
  /**
   * Writes a record only when none lives under `id`, in one atomic step: of concurrent inserts of one id
   * exactly one resolves `true`. For records that no index or cache holds (use marks, replay marks).
   */
  insert(model: string, id: string, payload: AdapterPayload, expiresIn?: number): Promise<boolean>;
  /** Attempt counters for throttling (login, management), shared by every process on the store. */
  readonly attempts: AttemptCounter;
  /** Listing and removal by reference for the operator's toolbox; without it only the toolbox is missing. */
  readonly inventory?: StoreInventory;
  /**
   * Runs `fn` (one request) as one unit of store work: writes of the {@link FLOW_MODELS} may be deferred
   * and sent together when `fn` settles (reads inside `fn` see them), and reads are remembered; their deletions
   * land only with its writes. Rejects with a 503 `server_error` when a deferred write failed or the store refused
   * one at its limit, even if `fn` succeeded, so no response is sent for writes that did not happen, and the request,
   * having deleted nothing (the interaction a resume ends, the session it replaces), can be sent again. `consume`,
   * revocations and other models act at once, after the writes deferred before them. Nested calls join the outer one.
   * Optional.
   */
  batch?<T>(fn: () => Promise<T>): Promise<T>;
  /**
   * Sends the current request's deferred writes (see {@link SvcStore.batch}) now, then runs `read` and resolves its
   * answer: a write checked against a mark after it (a grant against a deletion or revocation mark) must be in the store
   * before the mark is read, or a mark set in between is missed by the check, and the write reaches the store after the
   * scan the mark preceded. A store may send the commands `read` issues at once in the same round trip, after the
   * writes, where the store serves them in that order (one Redis server); it rejects when a write failed. Outside a
   * batch, and for a store that defers nothing, it only runs `read`.
   */
  flush?<T>(read: () => Promise<T>): Promise<T>;
  /**
   * Reads the record `id` of a {@link FLOW_MODELS} model ahead, within the current request's {@link SvcStore.batch}
   * (a store that sends reads together sends it with the others of this tick): a `find` of it later in the request is
   * answered from that read. Outside a batch it does nothing. Optional: a store whose reads cost no round trip needs none.
   */
  readAhead?(model: string, id: string): void;
  /**
   * Resolves when the store answers, takes writes (Redis: no master full or read-only) and keeps what it is given until
   * it expires (Redis: `maxmemory-policy noeviction`); rejects otherwise (used by `/readyz`).
   */
  ping(): Promise<void>;
  /**
   * Whether the store holds at least {@link CROWDED_SHARE} of its limit (the memory store's budget, a Redis master's
   * `maxmemory`), when new flows are shared out by client address; false without a limit or when it cannot tell.
   */
  crowded?(): Promise<boolean>;
  /**
   * Whether `upsert` would refuse `payload` as a new record of `model` under `id` for want of headroom now: one
   * {@link startsFlow} once the store holds nine tenths of its limit with it ({@link FLOW_HEADROOM}). Writes and
   * reserves nothing; whether a record lives under `id` already (rewritten whatever the headroom) is not asked. The
   * share by address of a crowded store asks it before counting, so a stranger refused anyway leaves no count behind.
   */
  refusesStart?(model: string, id: string, payload: AdapterPayload): Promise<boolean>;
  /** Releases connections and timers once the operations under way have settled: what was issued before it lands. */
  close(): Promise<void>;
}

/**
 * Runs `read` once the request's deferred writes are in `store` ({@link SvcStore.flush}) and answers what it read; a
 * store without `flush` defers none. A `flush` that resolves without running `read` fails it: its answer would read as
 * "no mark".
 */
export async function afterWrites<T>(store: Pick<SvcStore, 'flush'>, read: () => Promise<T>): Promise<T> {
  if (!store.flush) return read();
  let answer: Promise<T> | undefined;
  await store.flush(() => {
    answer = read();
    answer.catch(() => undefined);
    return answer;
  });
  if (!answer) throw new Error('the store flushed without running the read it was given');
  return answer;
}

/** Models whose writes a request may defer to its end and whose deletions land only with its writes (see {@link SvcStore.batch}). */
export const FLOW_MODELS: ReadonlySet<string> = new Set(['Interaction', 'Session', 'Grant', 'AuthorizationCode', 'AccessToken']);

/** Models whose records carry a `grantId` and are removed by `revokeByGrantId`. */
export const GRANTABLE_MODELS: ReadonlySet<string> = new Set(
  ['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'ClientCredentials', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode'],
);

/**
 * The share of a store's limit kept for flows under way: a record {@link startsFlow} is refused once the store holds
 * nine tenths of its limit (the memory store's budget, a Redis master's `maxmemory`), so a flood of strangers' requests
 * leaves room for people mid-flow to finish.
 */
export const FLOW_HEADROOM = 0.1;

/**
 * The share of a store's limit attempt counters may hold together (the memory store's budget, the masters' `maxmemory`);
 * beyond it a new counter replaces the one worth least. Failed sign-ins under ever new names, from more networks than
 * the address throttle holds back, would otherwise fill the store until nobody could sign in.
 */
export const COUNTER_SHARE = 0.25;

/** The pools of the counters' share ({@link counterPool}). */
export const COUNTER_POOLS = ['login', 'other'] as const;

/** One of {@link COUNTER_POOLS}. */
export type CounterPool = (typeof COUNTER_POOLS)[number];

/**
 * Which pool of the counters' share a counter replaces within, half the share each: a sign-in's name and address
 * counters (each failure a password judged, and bounded by the address throttle) and the rest (management logins, which
 * cost no hash to fail; device counters, which one address can make without end by signing in to its own account and
 * failing once per cookie; shares of a crowded store). So neither replaces a name's or address's counter.
 */
export function counterPool(key: string): CounterPool {
  return key.startsWith('login-name:') || key.startsWith('login-address:') ? 'login' : 'other';
}

/** The share of a store's limit from which each client address may start only so many flows an hour ({@link SvcStore.crowded}). */
export const CROWDED_SHARE = 0.5;

/**
 * Whether a new record of `model` is one a stranger may create: an interaction nobody signed in to, a pushed request
 * (and its use mark), a session nobody signed in to (a cookie-less `GET /logout` saves one holding the form's state).
 */
export function startsFlow(model: string, payload: AdapterPayload): boolean {
  if (model === 'Session') return !payload.accountId;
  return model.startsWith('PushedAuthorizationRequest') || (model === 'Interaction' && !(payload.session as { accountId?: unknown } | undefined)?.accountId);
}

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
   * Consecutive failures (a run remembered as {@link runMemoryMs} says) after which the key is refused
   * until it is forgotten (NIST SP 800-63B 5.2.2). Unset: no such limit.
   */
  consecutiveLimit?: number;
  /**
   * What it counts is a share, not guesses at a secret: where a store must make room among its counters (the memory
   * store's quarter), such counters go first, however many they counted.
   */
  expendable?: boolean;
}

/**
 * Atomic failure counting in the store, so every provider process sees the same counts (C8).
 * Keys are opaque strings (hash anything personal first); the store keeps them only hashed.
 *
 * An attempt is checked before it is judged (nothing written) and settled after, atomically. Of
 * concurrent wrong guesses the first `limit` to settle are within the budget; a right guess is
 * refused only when failures settled before it locked the key, never for attempts still in flight.
 */
export interface AttemptCounter {
  /**
   * Resolves 0 when `key` may try, otherwise the milliseconds until it may. Writes nothing. Asked before a
   * guess is judged, and again after a right one: failures settled meanwhile may have locked the key.
   */
  check(key: string, rule: AttemptRule): Promise<number>;
  /**
   * Counts a wrong guess (reaching `rule.limit` starts a cool-down that doubles per lockout up to
   * `rule.maxCoolDownSeconds`). Resolves 0 when it was within the budget, otherwise the
   * milliseconds of the cool-down that earlier failures started, or of `check`'s wait once earlier
   * failures ran to `rule.consecutiveLimit` (guesses judged side by side stop at the limit too).
   */
  fail(key: string, rule: AttemptRule): Promise<number>;
  /**
   * Forgets everything about `key` (a success, an operator's reset). With `afterSuccess`, inside
   * {@link SvcStore.batch} a store may send it with the request's writes, before the answer goes out, and a
   * failure there is only logged: a success that could not be forgotten is still a success.
   */
  forget(key: string, options?: { afterSuccess?: boolean }): Promise<void>;
}

/**
 * How long a run of consecutive failures that reached its limit is remembered without a new one, in seconds (30 days);
 * a shorter run is remembered in proportion ({@link runMemoryMs}).
 */
export const RUN_MEMORY_SECONDS = 2_592_000;

/**
 * How long a run of `run` consecutive failures is remembered after the last one, in ms: `run / consecutiveLimit` of
 * {@link RUN_MEMORY_SECONDS}, all of it from the limit on; 0 without a limit. A run paused until it is forgotten
 * thus allows at most `consecutiveLimit` guesses per {@link RUN_MEMORY_SECONDS}, as remembering every run for all of
 * it would, while a name tried once (a random one, say) is not kept for 30 days. The Redis scripts compute the same.
 */
export function runMemoryMs(run: number, consecutiveLimit: number | undefined): number {
  if (consecutiveLimit === undefined) return 0;
  const full = RUN_MEMORY_SECONDS * 1000;
  return consecutiveLimit > 0 ? Math.min(full, Math.floor((run * full) / consecutiveLimit)) : full;
}

/** How long after its last lockout ended the number of lockouts of a key is remembered (each doubles the next cool-down), in seconds. */
export const STRIKE_MEMORY_SECONDS = 86_400;

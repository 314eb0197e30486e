import type { Adapter } from 'oidc-provider';

import type { AttemptCounter, SvcStore } from '../../adapters/store.js';
import type { StoreInventory } from '../../adapters/inventory.js';
import { SettingsError, StoreUnavailableError } from '../errors.js';
import type { Logger } from '../logger.js';

/** The store model of the record naming the issuer a store belongs to, and of the marks of moves from an issuer. */
const STORE_ISSUER_MODEL = 'StoreIssuer';

/** The id of the record naming the store's issuer (kept without expiry). */
const OWNER = 'issuer';

/**
 * How long the mark of a move from an issuer keeps out a move from it to another issuer, in seconds: the starts of one move
 * come within it, and the processes of the old issuer, probed, learn where it went.
 */
const MOVE_MARK_SECONDS = 3600;

/** Who claims a store, built from the settings by the assembly. */
export interface StoreClaim {
  /** The issuer starting on the store. */
  issuer: string;
  /** The issuer of `svc.redis.previous-base-url`: a store recorded for it is moved to {@link StoreClaim.issuer}. */
  previousIssuer?: string;
  /** How a refusal names the store, e.g. `svc.redis.key-prefix "svc:"`. */
  store: string;
}

/** Why a start of `claim` is refused on a store recorded for `owner`. */
const refusal = (claim: StoreClaim, owner: unknown): SettingsError =>
  new SettingsError(
    `the store (${claim.store}) belongs to the issuer ${String(owner)}, not to this provider's ${claim.issuer}: each would honour the other's clients, codes, tokens and sessions. Give each issuer a key prefix of its own, or, to move the provider to a new svc.base-url, start it with svc.redis.previous-base-url set to the one it had (docs/operations/redis.md#one-issuer-per-key-prefix)`,
    ['svc.redis.key-prefix', 'svc.base-url'],
  );

/**
 * What a start of `claim` would find in the store, read only (`config check --connect`): the issuer recorded there, or
 * `undefined` when none is and the start records `claim.issuer`. The prefix of `claim.issuer`, or of `claim.previousIssuer`
 * (the start moves it), resolves.
 * @throws {@link SettingsError} as {@link claimStore} refuses the start when the store belongs to another issuer.
 */
export async function recordedIssuer(store: Pick<SvcStore, 'adapter'>, claim: StoreClaim): Promise<string | undefined> {
  const owner = (await store.adapter(STORE_ISSUER_MODEL).find(OWNER))?.issuer;
  if (owner === undefined || owner === claim.issuer || owner === claim.previousIssuer) return owner as string | undefined;
  throw refusal(claim, owner);
}

/**
 * Claims the store for `claim.issuer`, resolving to the issuer it then serves. The first claim of a store records its
 * issuer (atomically: of concurrent first claims one writes, and the others read it), and a claim of another issuer is
 * refused: every client, token, code, grant and session there would be honoured by both, a code or token of one redeemed
 * at the other for the person its accounts give that name. A store recorded for `claim.previousIssuer` is moved to
 * `claim.issuer`; of concurrent moves from it to different issuers one takes place. `serving`: the claim of a process
 * already serving the store, which serves on for the issuer its own was moved to.
 * @throws {@link SettingsError} naming `svc.redis.key-prefix` when the store belongs to another issuer.
 */
async function claimStore(store: Pick<SvcStore, 'adapter' | 'insert'>, claim: StoreClaim, serving = false): Promise<string> {
  const { issuer, previousIssuer } = claim;
  const records = store.adapter(STORE_ISSUER_MODEL);
  const moverFrom = async (from: string): Promise<unknown> => (await records.find(`moved-from:${from}`))?.issuer;
  let owner: unknown;
  // A record removed between the write refused and the read (an operator's) is claimed again.
  for (let tries = 0; owner === undefined && tries < 3; tries += 1) {
    if (await store.insert(STORE_ISSUER_MODEL, OWNER, { issuer })) return issuer;
    owner = (await records.find(OWNER))?.issuer;
  }
  if (owner === issuer) return issuer;
  if (serving && typeof owner === 'string' && (await moverFrom(issuer)) === owner) return owner;
  if (previousIssuer !== undefined && owner === previousIssuer) {
    const mover = (await store.insert(STORE_ISSUER_MODEL, `moved-from:${previousIssuer}`, { issuer }, MOVE_MARK_SECONDS)) ? issuer : await moverFrom(previousIssuer);
    if (mover === issuer) return (await records.upsert(OWNER, { issuer }), issuer);
    owner = mover ?? owner;
  }
  throw refusal(claim, owner);
}

const ADAPTER_METHODS = ['upsert', 'find', 'findByUid', 'findByUserCode', 'consume', 'destroy', 'revokeByGrantId'] as const;
const ATTEMPT_METHODS = ['check', 'fail', 'forget'] as const;
const INVENTORY_METHODS = ['list', 'destroy', 'revokeGrant'] as const;

/**
 * `store` serving once it is claimed ({@link claimStore}), the claim made now: a start refused for it rejects. A store
 * that did not answer (Redis away) is claimed at its next use, each use failing as the store does until it answers. Its
 * `ping` (`/readyz`) claims it again: a record gone (an operator's `DEL` or `FLUSHDB`, a Redis restarted empty) is
 * written anew. Once the store answers that it belongs to another issuer, every use fails (503) until a `ping` claims it,
 * and `store_claim_refused` is logged. Claimed, a use waits for nothing. Its `batch`, `flush` and `close` touch nothing
 * of the store's and are not held.
 */
export async function claimedStore(store: SvcStore, claim: StoreClaim, logger: Logger): Promise<SvcStore> {
  let claimed = false;
  let refusal: StoreUnavailableError | undefined;
  let pending: Promise<void> | undefined;
  const check = (started = true): Promise<void> =>
    (pending ??= claimStore(store, claim, claimed).then(
      (issuer) => void ([claim, claimed, refusal, pending] = [{ ...claim, issuer }, true, undefined, undefined]),
      (err: unknown) => {
        pending = undefined;
        if (!(err instanceof SettingsError) || !started) throw err;
        if (!refusal) logger.error('store_claim_refused', { reason: err.message });
        throw (refusal = new StoreUnavailableError({ cause: err }));
      },
    ));
  await check(false).catch((err: unknown) => {
    if (!(err instanceof StoreUnavailableError)) throw err;
  });
  const held = (): Promise<void> | undefined => (refusal ? Promise.reject(refusal) : claimed ? undefined : check());
  // Each method is called on its object, by name: class-based stores and adapters keep their `this`.
  const gated = <T extends object>(target: T, names: readonly (keyof T & string)[]): T =>
    Object.fromEntries(names.map((name) => [name, (...args: unknown[]) => {
      const call = (): unknown => (target[name] as (...a: unknown[]) => unknown).apply(target, args);
      const wait = held();
      return wait ? wait.then(call) : call();
    }])) as T;
  const own = gated(store, ['unconsume', 'insert', ...(store.crowded ? ['crowded' as const] : []), ...(store.refusesStart ? ['refusesStart' as const] : [])]);
  return {
    ...store,
    ...own,
    adapter: (model) => gated<Adapter>(store.adapter(model), ADAPTER_METHODS),
    attempts: gated<AttemptCounter>(store.attempts, ATTEMPT_METHODS),
    ...(store.inventory ? { inventory: gated<StoreInventory>(store.inventory, INVENTORY_METHODS) } : {}),
    ...(store.batch ? { batch: store.batch.bind(store) } : {}),
    ...(store.flush ? { flush: store.flush.bind(store) } : {}),
    ping: async () => {
      await store.ping();
      await check();
    },
    close: store.close.bind(store),
  };
}

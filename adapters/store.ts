import type { Adapter } from 'oidc-provider';

/**
 * A store holds all provider state for one provider (or for several processes sharing it, on
 * Redis). It hands oidc-provider one adapter per model, answers readiness probes, and closes.
 *
 * Semantics every store keeps (the contract suite in `test/adapters/` checks them):
 * - a record written with `expiresIn` is gone after that many seconds; indexes expire with it;
 * - `find` returns a copy, never a live reference;
 * - `consume` is atomic: of concurrent consumers exactly one succeeds, the others reject with
 *   `invalid_grant`;
 * - `revokeByGrantId` removes every record written with that `grantId`, whatever its model.
 */
export interface SvcStore {
  /** The oidc-provider adapter factory: one adapter per model name. */
  readonly adapter: (model: string) => Adapter;
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

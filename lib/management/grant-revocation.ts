import { errors, type Adapter } from 'oidc-provider';

import { refOf } from '../../adapters/inventory.js';
import { afterWrites, type SvcStore } from '../../adapters/store.js';
import { currentRequest, ROUTE_NAMES } from '../seams.js';

/**
 * The store model of the marks left on each grant revoked, by the toolbox or by oidc-provider (a logout): one record
 * per grant, named by the reference of its id (as the inventory lists it), kept {@link GRANT_REVOCATION_MARK_SECONDS}.
 * A token request that loaded the grant before it was revoked finds the mark once served, and its answer is withdrawn.
 */
export const GRANT_REVOCATION_MODEL = 'GrantRevocation';

/** How long a revocation mark is kept: far longer than a token request that loaded the grant can still be served. */
const GRANT_REVOCATION_MARK_SECONDS = 3600;

/** Marks the grant whose id has the reference `ref` revoked (before it is removed). */
export async function markGrantRevoked(marks: Adapter, ref: string): Promise<void> {
  await marks.upsert(ref, { revoked_at: Math.floor(Date.now() / 1000) }, GRANT_REVOCATION_MARK_SECONDS);
}

/**
 * The `Grant` adapter's `destroy` marks the grant revoked first (in `marks`), unless a token request destroys it: that
 * is oidc-provider revoking the grant of a replayed code, and of two redemptions that race one still wins (C3), as
 * without the mark (its access token is revoked with the grant). Its `upsert` of a marked grant (a consent or undo that
 * loaded the grant before it was revoked, writing it back after) removes what it wrote again and answers
 * `invalid_grant`: written back, the grant would outlive its mark and serve the session's next authorization. The mark is
 * read once `store` holds the request's deferred writes (`SvcStore.flush`).
 */
export function markedGrantRevocations(inner: Adapter, marks: Adapter, store: Pick<SvcStore, 'flush'> = {}): Partial<Adapter> {
  return {
    destroy: async (id) => {
      if (currentRequest()?.oidc?.route !== ROUTE_NAMES.token) await markGrantRevoked(marks, refOf(id));
      await inner.destroy(id);
    },
    upsert: async (id, payload, expiresIn) => {
      await inner.upsert(id, payload, expiresIn);
      // Deferred in the request's batch, the write must be stored before the mark is read.
      if (!(await afterWrites(store, () => marks.find(refOf(id))))) return;
      await inner.destroy(id);
      throw new errors.InvalidGrant('grant revoked');
    },
  };
}

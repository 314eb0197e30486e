import { decodeJwt } from 'jose';
import type { AdapterPayload } from 'oidc-provider';

import type { ListedRecord, StoreInventory } from '../../adapters/inventory.js';
import type { SvcStore } from '../../adapters/store.js';
import { REISSUE_MODEL } from '../registration/token-reissue.js';
import { MODEL_NAMES } from '../seams.js';
import { DELETION_MARK_SECONDS, DELETION_MODEL, SUSPENSION_MODEL } from './client-suspension.js';
import { GRANT_REVOCATION_MODEL, markGrantRevoked } from './grant-revocation.js';

const PAGE_ALL = 500;

/** The client that pushed a stored pushed request: the `iss` of its unsecured JWT (see lib/provider/pushed-requests.ts), or undefined when unreadable. */
export function pusherOf(payload: AdapterPayload): string | undefined {
  try {
    const { iss } = decodeJwt(String(payload.request));
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/** Visits every live record of `model`, page by page. */
export async function eachRecord(inventory: StoreInventory, model: string, visit: (record: ListedRecord) => Promise<void>): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await inventory.list(model, { cursor, limit: PAGE_ALL });
    for (const record of page.records) await visit(record);
    cursor = page.cursor;
  } while (cursor !== undefined);
}

/** What a revocation removed. */
export type Revoked = { revoked_grants: number; revoked_tokens: number };

/**
 * Revokes the grants whose payload satisfies `match`: a revocation mark first (a token request that loaded the grant
 * before is withdrawn when it finds it), then every token of the grant, then the grant.
 */
export async function revokeGrantsWhere(store: Pick<SvcStore, 'adapter'>, inventory: StoreInventory, match: (grant: AdapterPayload) => boolean): Promise<Revoked> {
  const seen = new Set<string>();
  const revoked = { revoked_grants: 0, revoked_tokens: 0 };
  const marks = store.adapter(GRANT_REVOCATION_MODEL);
  await eachRecord(inventory, MODEL_NAMES.grant, async ({ ref, payload }) => {
    if (seen.has(ref) || !match(payload)) return;
    seen.add(ref);
    await markGrantRevoked(marks, ref);
    revoked.revoked_tokens += await inventory.revokeGrant(ref);
    if (await inventory.destroy(MODEL_NAMES.grant, ref)) revoked.revoked_grants += 1;
  });
  return revoked;
}

/**
 * Deletes client `clientId`, by the toolbox or by itself (RFC 7592), with `destroyClient` removing its record: a
 * deletion mark first (a request that loaded the client before cannot write it, its grant or its registration access
 * token back, and its token answer is withdrawn), then its grants (so no token or code of it, nor her consent to it,
 * outlives it), the client, its registration access tokens (stored without expiry), pushed requests, disabling
 * mark and reissue mark. Without an inventory only the mark is set and the client removed.
 */
export async function deleteClientRecords(store: Pick<SvcStore, 'adapter' | 'inventory'>, clientId: string, by: string, destroyClient: () => Promise<unknown>): Promise<Revoked> {
  const { inventory } = store;
  await store.adapter(DELETION_MODEL).upsert(clientId, { deleted_at: Math.floor(Date.now() / 1000), deleted_by: by }, DELETION_MARK_SECONDS);
  const revoked = inventory ? await revokeGrantsWhere(store, inventory, (grant) => grant.clientId === clientId) : { revoked_grants: 0, revoked_tokens: 0 };
  await destroyClient();
  if (inventory) {
    const owned = { [MODEL_NAMES.registrationAccessToken]: (p: AdapterPayload) => p.clientId, [MODEL_NAMES.pushedAuthorizationRequest]: pusherOf };
    for (const [model, owner] of Object.entries(owned)) {
      await eachRecord(inventory, model, async ({ ref, payload }) => void (owner(payload) === clientId && (await inventory.destroy(model, ref))));
    }
  }
  await store.adapter(SUSPENSION_MODEL).destroy(clientId);
  // Read first: nearly no client has a reissue mark, and on Redis the read is mostly cached, a write never.
  const reissues = store.adapter(REISSUE_MODEL);
  if (await reissues.find(clientId)) await reissues.destroy(clientId);
  return revoked;
}

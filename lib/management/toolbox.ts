import type { AdapterPayload, ClientMetadata } from 'oidc-provider';

import type { StoreInventory } from '../../adapters/inventory.js';
import type { SvcStore } from '../../adapters/store.js';
import { clientSummary, clientView } from './client-view.js';
import { deleteClientRecords, eachRecord, revokeGrantsWhere, type Revoked } from './client-deletion.js';
import { DELETION_MODEL, SUSPENSION_MODEL, suspensionOf } from './client-suspension.js';
import { ToolboxError } from '../errors.js';
import { REVOCATION_MODEL, SIGN_IN_SECONDS } from './subject-revocation.js';
import { pairwiseSub, sectorOf, subjectTypeFor, type SubjectType } from '../../policies/subjects.js';
import { recordedDelivery } from '../claims/delivery.js';
import { outdated, reissueRegistrationAccessToken, REISSUE_MODEL } from '../registration/token-reissue.js';
import { MODEL_NAMES } from '../seams.js';

/** What the toolbox acts on. */
export interface Toolbox {
  /** The store as it is (not oidc-provider's wrapped adapters: a disabled client is still shown). */
  store: SvcStore;
  /** Clients provisioned in code or `svc.clients.file`: shown, never disabled or deleted here. */
  staticClients: readonly ClientMetadata[];
  /** How `sub`s are made: the pairwise key and the default type, for a `sub` given with its client. */
  subjects: { pairwiseKey: string; defaultType: SubjectType };
}

function inventoryOf(toolbox: Toolbox): StoreInventory {
  if (!toolbox.store.inventory) throw new ToolboxError(501, 'not_supported', 'this store cannot list or remove records (it has no inventory)');
  return toolbox.store.inventory;
}

const staticClient = (toolbox: Toolbox, clientId: string): ClientMetadata | undefined => toolbox.staticClients.find((c) => c.client_id === clientId);

/** 404 for an id that names no client; the id is not repeated: it may be a token pasted in the wrong place. */
const noSuchClient = (): ToolboxError => new ToolboxError(404, 'not_found', 'no client with this id');

/** The stored client `clientId`; 404 when there is none. */
async function findStored(toolbox: Toolbox, clientId: string): Promise<AdapterPayload> {
  const payload = await toolbox.store.adapter('Client').find(clientId);
  if (!payload) throw noSuchClient();
  return payload;
}

/** The client `clientId`, static or stored; 404 when there is none. */
async function anyClient(toolbox: Toolbox, clientId: string): Promise<ClientMetadata | AdapterPayload> {
  return staticClient(toolbox, clientId) ?? findStored(toolbox, clientId);
}

/** A client the toolbox may change: stored, not provisioned statically (409). */
async function storedClient(toolbox: Toolbox, clientId: string): Promise<AdapterPayload> {
  if (staticClient(toolbox, clientId)) {
    throw new ToolboxError(409, 'static_client', `client ${clientId} is provisioned statically (svc.clients.file or code); change it there`);
  }
  return findStored(toolbox, clientId);
}

type Listed = Record<string, unknown>[];
/** A page of a listing as the API answers it, and what it was asked for. */
type PageOf<K extends string> = { [key in K]: Listed } & { next_cursor?: string };
type PageRequest = { cursor?: string; limit: number };

/** One page of the stored clients as the API answers it; the first page also names the static ones apart. */
export async function listClients(toolbox: Toolbox, page: PageRequest): Promise<PageOf<'clients'> & { static_clients?: Listed }> {
  const result = await inventoryOf(toolbox).list('Client', page);
  const marks = toolbox.store.adapter(SUSPENSION_MODEL);
  const summary = async (payload: AdapterPayload) => ({ ...clientSummary(payload), disabled: !!(await marks.find(String(payload.client_id))) });
  const clients = await Promise.all(result.records.map(({ payload }) => summary(payload)));
  return {
    clients,
    ...(page.cursor === undefined ? { static_clients: toolbox.staticClients.map((c) => ({ ...clientSummary(c), disabled: false, static: true })) } : {}),
    ...(result.cursor ? { next_cursor: result.cursor } : {}),
  };
}

/** A client's metadata without secrets, and whether it is disabled or static. */
export async function showClient(toolbox: Toolbox, clientId: string): Promise<Record<string, unknown>> {
  const provisioned = staticClient(toolbox, clientId);
  if (provisioned) return { client: clientView(provisioned), disabled: false, static: true };
  const payload = await findStored(toolbox, clientId);
  const mark = suspensionOf(await toolbox.store.adapter(SUSPENSION_MODEL).find(clientId));
  return { client: clientView(payload), disabled: !!mark, ...(mark ?? {}), static: false };
}

/**
 * Disables or enables a stored client; `changed` is false when it already was so. A disabling mark is checked against
 * a {@link DELETION_MODEL} mark after it is written (a delete writes its mark, removes the client, then the disabling
 * mark): when the client is gone too, the mark is removed again and the answer is 404, as after the delete. A client
 * still stored beside a deletion mark (a delete under way removes the mark after it; one that failed part-way leaves
 * the client) stays disabled.
 */
export async function setClientDisabled(toolbox: Toolbox, clientId: string, disabled: boolean, user: string): Promise<{ client_id: string; disabled: boolean; changed: boolean }> {
  await storedClient(toolbox, clientId);
  const marks = toolbox.store.adapter(SUSPENSION_MODEL);
  const before = !!(await marks.find(clientId));
  if (disabled && !before) {
    await marks.upsert(clientId, { disabled_at: Math.floor(Date.now() / 1000), disabled_by: user });
    if ((await toolbox.store.adapter(DELETION_MODEL).find(clientId)) && !(await toolbox.store.adapter('Client').find(clientId))) {
      await marks.destroy(clientId);
      throw noSuchClient();
    }
  }
  if (!disabled && before) await marks.destroy(clientId);
  return { client_id: clientId, disabled, changed: before !== disabled };
}

/** Revokes every grant of a client (static ones included): its codes and access tokens stop working. */
export async function revokeClientGrants(toolbox: Toolbox, clientId: string): Promise<{ client_id: string } & Revoked> {
  const inventory = inventoryOf(toolbox);
  await anyClient(toolbox, clientId);
  return { client_id: clientId, ...(await revokeGrantsWhere(toolbox.store, inventory, (grant) => grant.clientId === clientId)) };
}

/** Deletes a stored client ({@link deleteClientRecords}): no grant, token or code of it outlives it. */
export async function deleteClient(toolbox: Toolbox, clientId: string, user: string): Promise<{ client_id: string; deleted: true } & Revoked> {
  inventoryOf(toolbox);
  await storedClient(toolbox, clientId);
  const revoked = await deleteClientRecords(toolbox.store, clientId, user, () => toolbox.store.adapter('Client').destroy(clientId));
  return { client_id: clientId, deleted: true, ...revoked };
}

/**
 * Issues a stored client a new registration access token ({@link reissueRegistrationAccessToken}): every earlier one
 * stops working at once, and their records are removed (each judged {@link outdated} as it is removed, so a reissue
 * answered meanwhile keeps its token). A client a delete removed meanwhile gets none (404, its marks
 * cleared, as {@link setClientDisabled} does); of two reissues at once, the one whose mark was overwritten answers 409.
 */
export async function newRegistrationAccessToken(toolbox: Toolbox, clientId: string, user: string): Promise<{ client_id: string; registration_access_token: string }> {
  await storedClient(toolbox, clientId);
  const { store } = toolbox;
  const model = MODEL_NAMES.registrationAccessToken;
  const token = await reissueRegistrationAccessToken(store, clientId, user);
  if (token === undefined) throw new ToolboxError(409, 'conflict', 'another new registration access token was issued to this client at the same time: that one is its token');
  if ((await store.adapter(DELETION_MODEL).find(clientId)) && !(await store.adapter('Client').find(clientId))) {
    await store.adapter(model).destroy(token);
    await store.adapter(REISSUE_MODEL).destroy(clientId);
    throw noSuchClient();
  }
  const [marks, { inventory }] = [store.adapter(REISSUE_MODEL), store];
  if (inventory) await eachRecord(inventory, model, async ({ ref, payload }) => void (payload.clientId === clientId && (await outdated(payload, marks)) && (await inventory.destroy(model, ref))));
  return { client_id: clientId, registration_access_token: token };
}

/** Invitation ids are `inv_` and the reference, so an id is never mistaken for (or logged as) a token. */
const INVITATION_ID = /^inv_([A-Za-z0-9_-]{43})$/;

/** The id an invitation is shown under. */
export const invitationId = (ref: string): string => `inv_${ref}`;

/** True for a well-formed invitation id. */
export const isInvitationId = (value: string): boolean => INVITATION_ID.test(value);

/** A page of pending invitations (unused initial access tokens), named `inv_` and the token's SHA-256, which cannot register. */
export async function listInvitations(toolbox: Toolbox, page: PageRequest): Promise<PageOf<'invitations'>> {
  const result = await inventoryOf(toolbox).list('InitialAccessToken', page);
  const live = result.records.filter(({ payload }) => !payload.consumed);
  const invitations = live.map(({ ref, payload }) => ({ id: invitationId(ref), issued_at: payload.iat, expires_at: payload.exp }));
  return { invitations, ...(result.cursor ? { next_cursor: result.cursor } : {}) };
}

/** Revokes a pending invitation by its id (reference): the mailed token stops working. */
export async function revokeInvitation(toolbox: Toolbox, id: string): Promise<{ id: string; revoked: true }> {
  const inventory = inventoryOf(toolbox);
  const ref = INVITATION_ID.exec(id)?.[1];
  if (!ref) throw new ToolboxError(400, 'invalid_request', 'an invitation id is inv_ and 43 base64url characters (from the invitation list); never the token itself');
  if (!(await inventory.destroy('InitialAccessToken', ref))) throw new ToolboxError(404, 'not_found', 'no pending invitation with this id');
  return { id, revoked: true };
}

/**
 * The account ids `sub` names: itself, or with `clientId` each person whose `sub` at that client it is, or was, so the
 * `sub`s a static client kept after the operator changed its subject type still find her: a pairwise one in its
 * sector (among the accounts of live sessions and grants: the derivation is one-way; only the key derives it, so
 * only that sector was given it), and her account id while it is public, or where a grant of hers to it records a
 * public subject. Not a pairwise client naming an account id it was never given.
 */
async function accountsOf(toolbox: Toolbox, inventory: StoreInventory, sub: string, clientId?: string): Promise<Set<string>> {
  if (clientId === undefined) return new Set([sub]);
  const provisioned = staticClient(toolbox, clientId);
  const metadata = provisioned ?? (await findStored(toolbox, clientId));
  // As oidc-provider reads them: a static client gets the default, a stored one without subject_type (older than pairwise subjects) is public.
  const type = provisioned ? subjectTypeFor(provisioned, toolbox.subjects.defaultType) : (metadata.subject_type ?? 'public');
  const sector = sectorOf(metadata);
  if (type === 'pairwise' && sector === undefined) throw new ToolboxError(409, 'no_sector', `client ${clientId} has no pairwise sector`);
  const accounts = new Set(type === 'pairwise' ? [] : [sub]);
  for (const model of ['Session', 'Grant']) {
    await eachRecord(inventory, model, async ({ payload }) => {
      const account = payload.accountId;
      if (typeof account !== 'string' || accounts.has(account)) return;
      const wasPublic = account === sub && payload.clientId === clientId && recordedDelivery(payload)?.subject === 'public';
      if (wasPublic || (sector !== undefined && pairwiseSub(toolbox.subjects.pairwiseKey, sector, account) === sub)) accounts.add(account);
    });
  }
  return accounts;
}

/**
 * Ends every session of a person and revokes every grant they gave; `sub` as `clientId` received it, or the account
 * id. Each session is marked revoked before it is removed, so a request in flight that writes it back signs nobody in.
 */
export async function revokeSubject(toolbox: Toolbox, sub: string, clientId?: string): Promise<{ revoked_sessions: number } & Revoked> {
  const inventory = inventoryOf(toolbox);
  const accounts = await accountsOf(toolbox, inventory, sub, clientId);
  const named = (payload: AdapterPayload): boolean => typeof payload.accountId === 'string' && accounts.has(payload.accountId);
  const marks = toolbox.store.adapter(REVOCATION_MODEL);
  let sessions = 0;
  await eachRecord(inventory, 'Session', async ({ ref, payload }) => {
    if (!named(payload)) return;
    if (typeof payload.uid === 'string') await marks.upsert(payload.uid, { revoked_at: Math.floor(Date.now() / 1000) }, SIGN_IN_SECONDS);
    if (await inventory.destroy('Session', ref)) sessions += 1;
  });
  return { revoked_sessions: sessions, ...(await revokeGrantsWhere(toolbox.store, inventory, named)) };
}

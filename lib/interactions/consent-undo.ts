import type Provider from 'oidc-provider';
import type { Adapter, AdapterPayload, Grant, Interaction } from 'oidc-provider';

/** The store model of what the Allows of an interaction hold of the grant they extended in place, and of who holds them. */
export const CONSENT_UNDO_MODEL = 'ConsentUndo';

/** OpenID scope and claim names of a grant, or added to one. */
export interface GrantNames {
  scope: string;
  names: string[];
}

/** The store's `ConsentUndo` records. */
export interface ConsentUndoRecords {
  /** The model's adapter. */
  adapter: Adapter;
  /** `SvcStore.insert` of the model: writes only when no record lives under `id`; of concurrent inserts one resolves `true`. */
  insert(id: string, payload: AdapterPayload, expiresIn: number): Promise<boolean>;
}

/** Withdraws an Allow that she followed with another answer on the same interaction. */
export interface ConsentUndo {
  /**
   * Before an Allow saves her earlier grant of the client extended in place: notes what this interaction now holds
   * of it, namely what the Allow added to the grant as `before` had it, and of what another interaction's Allow
   * added (and holds) what this one's page showed her and she approved (`approved`).
   */
  extending(details: Interaction, before: GrantNames, after: Grant, approved: GrantNames): Promise<void>;
  /**
   * Before another Allow or a Deny: drops the grant an earlier Allow saved of its own; a Deny also takes out of the
   * grant it extended what this interaction holds and no other interaction's Allow holds.
   */
  withdraw(details: Interaction, denied: boolean): Promise<void>;
}

/** A `ConsentUndo` record under an interaction's uid: what its Allows hold of `grant`; `denied` once she denied there. */
interface Holding extends GrantNames {
  grant: string;
  denied?: boolean;
}

/**
 * How many interactions of one grant can hold names at once. Beyond them an Allow's holding goes unseen by the other
 * interactions, so their Deny takes out what it approved too: she is asked again, nothing she denied stays.
 */
const HOLDER_SLOTS = 16;
const SLOTS = [...Array(HOLDER_SLOTS).keys()];
/** A slot (`{ holder: uid }`) names one interaction holding names of the grant; claimed with the store's atomic insert, never rewritten. */
const slotId = (grantId: string, slot: number): string => `${grantId}:${slot}`;

const scopeSet = (scope: string): Set<string> => new Set(scope.split(' ').filter(Boolean));
const without = <T>(from: Iterable<T>, out: ReadonlySet<T>): T[] => [...from].filter((n) => !out.has(n));

/**
 * A consent sent again (a double click, the back button) or followed by Deny keeps only what her last answer
 * approved: a grant an earlier Allow saved is destroyed (never the session's own), and from her earlier grant that an
 * Allow extended in place a Deny takes out what that interaction holds, unless the Allow of another interaction of
 * the grant, which she has not denied, holds it too: it showed her that name and she approved it there.
 *
 * Each interaction's holding is written only by that interaction's own requests, and a Deny marks its own before it
 * reads the others', so of two Denies at once at least one sees the other and neither keeps a name for the other. The
 * interactions holding names of a grant are found through slots claimed with the store's atomic insert: a holding
 * that goes unseen (every slot taken, or expired) makes a Deny take out more, never less.
 */
export function consentUndo(provider: Provider, records: ConsentUndoRecords): ConsentUndo {
  const { adapter } = records;
  const holdingOf = async (uid: string, grantId: string): Promise<Holding | undefined> => {
    const held = (await adapter.find(uid)) as Holding | undefined;
    return held?.grant === grantId ? held : undefined;
  };
  const slotsOf = async (grantId: string): Promise<(string | undefined)[]> =>
    (await Promise.all(SLOTS.map((slot) => adapter.find(slotId(grantId, slot))))).map((s) => (typeof s?.holder === 'string' ? s.holder : undefined));
  /** The names that the Allows of the grant's other interactions hold and she did not deny there. */
  const heldByOthers = async (grantId: string, uid: string, slots: (string | undefined)[]): Promise<{ scope: Set<string>; names: Set<string> }> => {
    const others = [...new Set(slots)].filter((u): u is string => u !== undefined && u !== uid);
    const held = (await Promise.all(others.map((u) => holdingOf(u, grantId)))).filter((h): h is Holding => h !== undefined && !h.denied);
    return { scope: new Set(held.flatMap((h) => [...scopeSet(h.scope)])), names: new Set(held.flatMap((h) => h.names)) };
  };
  // Until her interaction expires and one interaction lifetime more: every interaction open when she answered here
  // sees this holding to its own end.
  const lifetimeOf = (details: Interaction): number => Math.max(1, details.exp - Math.floor(Date.now() / 1000)) + Math.max(0, details.exp - details.iat);

  return {
    async extending(details, before, after, approved) {
      const grantId = details.grantId;
      if (!grantId) return;
      const slots = await slotsOf(grantId);
      const others = await heldByOthers(grantId, details.uid, slots);
      const own = await holdingOf(details.uid, grantId);
      const held = own && !own.denied ? own : { scope: '', names: [] };
      const had = { scope: scopeSet(before.scope), names: new Set(before.names) };
      const scope = new Set([
        ...scopeSet(held.scope),
        ...without(scopeSet(after.getOIDCScope()), had.scope),
        ...[...scopeSet(approved.scope)].filter((s) => others.scope.has(s)),
      ]);
      const names = new Set([...held.names, ...without(after.getOIDCClaims(), had.names), ...approved.names.filter((n) => others.names.has(n))]);
      if (scope.size === 0 && names.size === 0) return;
      const lifetime = lifetimeOf(details);
      const holding: Holding = { grant: grantId, scope: [...scope].join(' '), names: [...names] };
      await adapter.upsert(details.uid, { ...holding }, lifetime);
      if (slots.includes(details.uid)) return;
      for (const slot of SLOTS) {
        if (slots[slot] === undefined && (await records.insert(slotId(grantId, slot), { holder: details.uid }, lifetime))) return;
      }
    },
    async withdraw(details, denied) {
      const earlier = details.result?.consent?.grantId;
      if (earlier && earlier !== details.grantId) await (await provider.Grant.find(earlier))?.destroy();
      const grantId = details.grantId;
      if (!denied || !grantId) return;
      const own = await holdingOf(details.uid, grantId);
      if (!own) return;
      // Marked before the others are read; kept (not destroyed) so a Deny sent again, after a failed one, takes it out again.
      if (!own.denied) await adapter.upsert(details.uid, { ...own, denied: true }, lifetimeOf(details));
      const others = await heldByOthers(grantId, details.uid, await slotsOf(grantId));
      const scope = new Set(without(scopeSet(own.scope), others.scope));
      const names = new Set(without(own.names, others.names));
      if (scope.size === 0 && names.size === 0) return;
      // Read last, right before it is written: what another answer wrote to the grant until then is kept.
      const grant = await provider.Grant.find(grantId);
      if (!grant) return;
      grant.openid = { scope: without(scopeSet(grant.getOIDCScope()), scope).join(' '), claims: without(grant.getOIDCClaims(), names) };
      await grant.save();
    },
  };
}

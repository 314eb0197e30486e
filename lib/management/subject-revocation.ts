import type { Adapter, AdapterPayload } from 'oidc-provider';

/** How long a sign-in lasts: 14 days from the sign-in, however often the session is used. */
export const SIGN_IN_SECONDS = 14 * 24 * 3600;

/**
 * The store model of the marks `subjects revoke` leaves, one record per session it ended (by the session's `uid`,
 * which a session keeps when its id changes), kept {@link SIGN_IN_SECONDS}.
 */
export const REVOCATION_MODEL = 'SessionRevocation';

/**
 * The `Session` adapter finds no session (and removes it) that `subjects revoke` ended: a request in flight while she
 * was revoked, having read her session before, writes it back when it ends (a resumed authorization under a new id),
 * so removing her sessions alone left the one in use signed in.
 */
export function revokedSessions(inner: Adapter, marks: Adapter): Partial<Adapter> {
  const live = async (payload: AdapterPayload | undefined | void): Promise<AdapterPayload | undefined> => {
    if (!payload || typeof payload.uid !== 'string' || typeof payload.accountId !== 'string' || !(await marks.find(payload.uid))) return payload ?? undefined;
    if (typeof payload.jti === 'string') await inner.destroy(payload.jti);
    return undefined;
  };
  return { find: async (id) => live(await inner.find(id)), findByUid: async (uid) => live(await inner.findByUid(uid)) };
}

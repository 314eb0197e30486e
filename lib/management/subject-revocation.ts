import type { Adapter, AdapterPayload } from 'oidc-provider';

import { currentRequest } from '../seams.js';

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
 * so removing her sessions alone left the one in use signed in. Her logout (oidc-provider destroying the session of
 * the request itself, not an id it replaced) leaves the same mark: a silent renew or a consent in another tab, in
 * flight as she signed out, wrote her session back signed in.
 */
export function revokedSessions(inner: Adapter, marks: Adapter): Partial<Adapter> {
  const live = async (payload: AdapterPayload | undefined | void): Promise<AdapterPayload | undefined> => {
    if (!payload || typeof payload.uid !== 'string' || typeof payload.accountId !== 'string' || !(await marks.find(payload.uid))) return payload ?? undefined;
    if (typeof payload.jti === 'string') await inner.destroy(payload.jti);
    return undefined;
  };
  const destroy = async (id: string): Promise<void> => {
    const session = currentRequest()?.oidc?.session;
    if (session?.jti === id && typeof session.uid === 'string' && typeof session.accountId === 'string') await marks.upsert(session.uid, { revoked_at: Math.floor(Date.now() / 1000) }, SIGN_IN_SECONDS);
    await inner.destroy(id);
  };
  return { find: async (id) => live(await inner.find(id)), findByUid: async (uid) => live(await inner.findByUid(uid)), destroy };
}

/**
 * The `Session` adapter finds no session whose sign-in is {@link SIGN_IN_SECONDS} old or older: its store lifetime, set
 * at each save to what is left of them, is at least one second (and runs up to a second past their end), so a cookie
 * used again and again across that instant was saved with one second more each time and stayed signed in for good.
 */
export function endedSignIns(inner: Adapter): Partial<Adapter> {
  const live = (payload: AdapterPayload | undefined | void): AdapterPayload | undefined =>
    payload && typeof payload.accountId === 'string' && !(Math.floor(Date.now() / 1000) < Number(payload.loginTs) + SIGN_IN_SECONDS) ? undefined : (payload ?? undefined);
  return { find: async (id) => live(await inner.find(id)), findByUid: async (uid) => live(await inner.findByUid(uid)) };
}

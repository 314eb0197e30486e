import { createHash, randomBytes } from 'node:crypto';

import type { Context } from 'koa';
import type { Adapter, AdapterPayload } from 'oidc-provider';

import { currentRequest, ROUTE_NAMES } from '../seams.js';

/** The cookie that ties a sign-in to the browser that signed in, at the path of the interaction's resume URL. */
export const SIGN_IN_COOKIE = 'svc.signin';

/** Where the interaction result keeps the SHA-256 of that cookie's value. */
const BINDING = 'svc_browser';

const hashOf = (value: string): string => createHash('sha256').update(value, 'utf8').digest('base64url');

/**
 * Gives the browser that signed in a fresh secret cookie for `returnTo` (the resume URL) and returns what the login
 * result carries of it: only that browser resumes the sign-in, not one that started the interaction and planted its
 * cookie in hers (a sibling subdomain's `Domain=` cookie, an http response on her network).
 */
export function bindSignIn(ctx: Context, returnTo: string, expiresAt: number): Record<typeof BINDING, string> {
  const secret = randomBytes(32).toString('base64url');
  ctx.cookies.set(SIGN_IN_COOKIE, secret, { path: new URL(returnTo).pathname, httpOnly: true, sameSite: 'lax', signed: false, overwrite: true, expires: new Date(expiresAt * 1000) });
  return { [BINDING]: hashOf(secret) };
}

/**
 * The `Interaction` adapter: at oidc-provider's resume, an interaction whose result signs a person in to a session it
 * was not opened in (none, or one a principal change left it) is not found unless the request carries the cookie of
 * {@link bindSignIn}. A session-bound interaction is left to oidc-provider's own session check.
 */
export function boundSignIns(inner: Adapter): Partial<Adapter> {
  return {
    find: async (id) => {
      const payload = await inner.find(id);
      const ctx = currentRequest();
      if (!payload || ctx?.oidc?.route !== ROUTE_NAMES.resume) return payload;
      const { result, session } = payload as AdapterPayload & { result?: Record<string, unknown>; session?: { uid?: string } };
      if (!result?.login || session?.uid) return payload;
      const cookie = ctx.cookies.get(SIGN_IN_COOKIE, { signed: false });
      return cookie && result[BINDING] === hashOf(cookie) ? payload : undefined;
    },
  };
}

import { createHash, randomBytes } from 'node:crypto';

import type { Context } from 'koa';
import type { Adapter, AdapterPayload, Interaction, KoaContextWithOIDC } from 'oidc-provider';

import { currentRequest, ROUTE_NAMES } from '../seams.js';
import { PROVIDER_PATH } from '../settings/paths.js';

/** On an http base URL, the cookie that ties a sign-in to the browser that signed in, at the path of the interaction's resume URL. */
export const SIGN_IN_COOKIE = 'svc.signin';

/**
 * The name of the cookie that ties the sign-in of interaction `uid` to the browser that signed in. Over https it is
 * `__Host-svc.signin.{uid}`, at `/`: browsers take a `__Host-` cookie only from this host over https, so no sibling
 * subdomain or http answer can plant it, and his sign-in, finished in his browser, cannot be resumed in hers with the
 * cookies he planted there (she would be signed in as him). Its name is the interaction's, as two tabs may sign in at once.
 */
const signInCookieName = (secure: boolean, uid: string): string => (secure ? `__Host-${SIGN_IN_COOKIE}.${uid}` : SIGN_IN_COOKIE);

/** Where the interaction result keeps the SHA-256 of that cookie's value, and a signed-in session that of {@link BROWSER_COOKIE}. */
const BINDING = 'svc_browser';

/**
 * On https, the cookie naming the browser a session was signed in in, for a provider at the root of its host. Its
 * `__Host-` prefix makes browsers refuse it unless this host set it over https, `Secure`, at `/`, without `Domain`: no
 * sibling subdomain and no http answer can.
 */
export const BROWSER_COOKIE = '__Host-svc.browser';

const hashOf = (value: string): string => createHash('sha256').update(value, 'utf8').digest('base64url');

/**
 * The name of {@link BROWSER_COOKIE} for the provider of `issuer`: that name at the root of its host, and under a path
 * one of its own (`.` and 16 characters of the SHA-256 of the issuer's path), since every provider on the host receives
 * a cookie at `/`: a sign-in at one, which mints it afresh, would otherwise sign her out of the other.
 */
export function browserCookieName(issuer: string): string {
  const path = new URL(issuer).pathname;
  return path === PROVIDER_PATH ? BROWSER_COOKIE : `${BROWSER_COOKIE}.${hashOf(path).slice(0, 16)}`;
}

/**
 * Gives the browser that signed in on `interaction` a fresh secret cookie for its resume and returns what the login
 * result carries of it: only that browser resumes the sign-in, not one that started the interaction and planted its
 * cookie in hers (a sibling subdomain's `Domain=` cookie, an http response on her network), nor, over https, hers
 * when he signed in and planted all his browser holds for the resume.
 */
export function bindSignIn(ctx: Context, interaction: Pick<Interaction, 'uid' | 'returnTo' | 'exp'>): Record<typeof BINDING, string> {
  const secret = randomBytes(32).toString('base64url');
  const path = ctx.secure ? '/' : new URL(interaction.returnTo).pathname;
  ctx.cookies.set(signInCookieName(ctx.secure, interaction.uid), secret, { path, secure: ctx.secure, httpOnly: true, sameSite: 'lax', signed: false, overwrite: true, expires: new Date(interaction.exp * 1000) });
  return { [BINDING]: hashOf(secret) };
}

/**
 * The {@link BROWSER_COOKIE} value a request set, by request: kept off `ctx.state`, which the host app's middleware
 * shares (its logger may write it, and what it puts there must not choose a browser's secret).
 */
const setSecrets = new WeakMap<object, string>();

/** The browser's {@link BROWSER_COOKIE} value, as this request set or received it. */
function browserSecret(ctx: KoaContextWithOIDC): string | undefined {
  const value = setSecrets.get(ctx) ?? ctx.cookies.get(browserCookieName(ctx.oidc.provider.issuer), { signed: false });
  return value && /^[\w-]{43}$/.test(value) ? value : undefined;
}

/**
 * Sets {@link BROWSER_COOKIE} for as long as the session written now lasts, and returns its value: the one this request
 * set or received, or, `fresh` (a sign-in), one this request minted, never the browser's: a value he read once in a
 * browser he shared with her, set in his own, would otherwise bind the sessions he signs in to there to hers.
 */
function renewBrowserSecret(ctx: KoaContextWithOIDC, seconds: number | undefined, fresh = false): string {
  const secret = (fresh ? setSecrets.get(ctx) : browserSecret(ctx)) ?? randomBytes(32).toString('base64url');
  setSecrets.set(ctx, secret);
  // SameSite=None as the session cookie: a relying party's form posted to /authorize or /logout carries both.
  ctx.cookies.set(browserCookieName(ctx.oidc.provider.issuer), secret, { path: '/', secure: true, httpOnly: true, sameSite: 'none', signed: false, overwrite: true, maxAge: seconds === undefined ? undefined : seconds * 1000 });
  return secret;
}

/**
 * The `Session` adapter, over https: a signed-in session is written with the SHA-256 of its browser's
 * {@link BROWSER_COOKIE} (set at the sign-in), and found by its cookie only in a browser holding that cookie. A session
 * cookie planted in her browser (a sibling subdomain's `Domain=` cookie, an http answer for a name of her site) finds
 * nothing there, so she is not signed in as the person whose browser it came from.
 */
export function boundSessions(inner: Adapter): Partial<Adapter> {
  return {
    find: async (id) => {
      const payload = await inner.find(id);
      const ctx = currentRequest();
      if (!payload?.accountId || !ctx?.secure) return payload;
      const secret = browserSecret(ctx);
      return secret && payload[BINDING] === hashOf(secret) ? payload : undefined;
    },
    upsert: (id, payload, expiresIn) => {
      const ctx = currentRequest();
      if (!payload.accountId || !ctx?.secure) return inner.upsert(id, payload, expiresIn);
      const secret = ctx.oidc?.route === ROUTE_NAMES.resume ? renewBrowserSecret(ctx, expiresIn, Boolean(ctx.oidc.result?.login)) : (browserSecret(ctx) ?? renewBrowserSecret(ctx, expiresIn));
      return inner.upsert(id, { ...payload, [BINDING]: hashOf(secret) }, expiresIn);
    },
  };
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
      const cookie = ctx.cookies.get(signInCookieName(ctx.secure, id), { signed: false });
      return cookie && result[BINDING] === hashOf(cookie) ? payload : undefined;
    },
    // Resumed (oidc-provider destroys it then): its `__Host-` cookie, sent to every path of the host, goes with it.
    destroy: async (id) => {
      const ctx = currentRequest();
      const name = signInCookieName(true, id);
      if (ctx?.secure && ctx.oidc?.route === ROUTE_NAMES.resume && ctx.cookies.get(name, { signed: false })) ctx.cookies.set(name, null, { path: '/', secure: true, httpOnly: true, sameSite: 'lax', signed: false, overwrite: true });
      await inner.destroy(id);
    },
  };
}

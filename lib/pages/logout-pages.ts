import type { Adapter, Client, KoaContextWithOIDC } from 'oidc-provider';

import { currentRequest, ROUTE_NAMES } from '../seams.js';
import { escapeHtml, formTargetsOf, renderPage, sendPage } from './html.js';

/** The member of a sign-out page's `session.state` naming the client its request named (oidc-provider's `clientId` is cleared unless the hint was hers). */
const PAGE_CLIENT = 'svcClientId';

/** Her `sub` at `client`, as her ID tokens for it carry it (pairwise or public). */
export type SubjectAt = (ctx: KoaContextWithOIDC, accountId: string, client: Client) => Promise<string> | string;

/**
 * The RP-initiated logout confirmation page (oidc-provider's `logoutSource`). "No" ends nothing; oidc-provider reads
 * it as "sign out of this client only" and revokes the client's grant, so the client is forgotten unless a valid
 * `id_token_hint` of hers named it (its `sub` is hers at that client): a bare `client_id` is public, and anyone's ID
 * token for the client validates, so any site could otherwise make her "No" withdraw her consent. The client is noted
 * apart for {@link retractedLogoutTargets}.
 */
export function logoutPage(subjectAt: SubjectAt): (ctx: KoaContextWithOIDC, form: string) => Promise<void> {
  return async (ctx, form) => {
    const { session, client, entities } = ctx.oidc;
    const hinted = entities.IdTokenHint?.payload.sub;
    const hers = hinted !== undefined && session?.accountId !== undefined && client !== undefined && hinted === (await subjectAt(ctx, session.accountId, client));
    if (session?.state) {
      session.state[PAGE_CLIENT] = client?.clientId;
      if (!hers) session.state.clientId = undefined;
    }
    // `form` is oidc-provider's hidden form (id "op.logoutForm") carrying its xsrf token.
    const body = `<h1>Sign out?</h1>
<p>Do you want to sign out of ${escapeHtml(ctx.host)}?</p>
${form}
<div class="actions">
<button class="primary" type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button class="secondary" type="submit" form="op.logoutForm">No, stay signed in</button>
</div>`;
    sendPage(ctx, renderPage({ title: 'Sign out', body, formTargets: formTargetsOf(session?.state?.postLogoutRedirectUri) }));
  };
}

/** The page shown after the logout page without `post_logout_redirect_uri`: what she chose there is what it says. */
export async function postLogoutPage(ctx: KoaContextWithOIDC): Promise<void> {
  const signedIn = Boolean((await ctx.oidc.provider.Session.get(ctx)).accountId);
  const [title, text] = signedIn ? ['Still signed in', `You are still signed in to ${escapeHtml(ctx.host)}.`] : ['Signed out', 'You are signed out.'];
  sendPage(ctx, renderPage({ title, body: `<h1>${title}</h1><p>${text}</p>` }));
}

/**
 * For oidc-provider's `renderError`: a browser whose sign-out request was refused (a hint signed by a key rotated out
 * since, or naming a client disabled or deleted since, an unregistered `post_logout_redirect_uri`) while she is signed
 * in is sent to the bare logout page instead, which asks her and redirects nowhere: whatever the request named is not
 * used, and the bare page is what any link may open. An answer that cannot be honoured (a sign-out page she kept open
 * while another replaced its form, or whose session ended since) is asked again when it was "Yes" and she is signed
 * in, and otherwise sent to the page that says what holds, rather than an error that leaves her signed in unawares.
 * True when it answered.
 */
export function offerSignOutInstead(ctx: KoaContextWithOIDC, out: { error?: string }): boolean {
  const route = ctx.oidc?.route;
  if (out.error === 'server_error' || (route !== ROUTE_NAMES.endSession && route !== ROUTE_NAMES.endSessionConfirm)) return false;
  const signedIn = Boolean(ctx.oidc.session?.accountId);
  if (route === ROUTE_NAMES.endSessionConfirm) {
    ctx.status = 303;
    ctx.redirect(ctx.oidc.urlFor(signedIn && ctx.oidc.params?.logout !== undefined ? ROUTE_NAMES.endSession : 'end_session_success'));
    return true;
  }
  if (!signedIn || !Object.values(ctx.oidc.params ?? {}).some((value) => value !== undefined)) return false;
  ctx.status = 303;
  ctx.redirect(ctx.oidc.urlFor(ROUTE_NAMES.endSession));
  return true;
}

/**
 * The `Session` adapter, at her answer on a sign-out page: oidc-provider sends her to the post-logout redirect URI the
 * page was shown with, unchecked. When its client took the URI out of its registration since (RFC 7592), it is
 * dropped; when the client is no longer found (disabled or deleted since), the client is dropped too, so her "No"
 * ends nothing of it. She lands on the page saying what holds.
 */
export function retractedLogoutTargets(inner: Adapter): Partial<Adapter> {
  return {
    find: async (id) => {
      const payload = await inner.find(id);
      const ctx = currentRequest();
      const state = payload?.state;
      const named = state?.[PAGE_CLIENT];
      if (!payload || !state || typeof named !== 'string' || ctx?.oidc?.route !== ROUTE_NAMES.endSessionConfirm) return payload ?? undefined;
      const client = await ctx.oidc.provider.Client.find(named);
      const uri = state.postLogoutRedirectUri;
      const kept = typeof uri === 'string' && client?.postLogoutRedirectUriAllowed(uri) ? uri : undefined;
      return { ...payload, state: { ...state, postLogoutRedirectUri: kept, clientId: client ? state.clientId : undefined } };
    },
  };
}

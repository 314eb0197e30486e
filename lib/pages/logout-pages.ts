import type { KoaContextWithOIDC } from 'oidc-provider';

import { escapeHtml, renderPage, sendPage } from './html.js';

/**
 * The RP-initiated logout confirmation page (oidc-provider's `logoutSource`). "No" ends nothing; oidc-provider reads
 * it as "sign out of this client only" and revokes the client's grant, so the client is forgotten unless a valid
 * `id_token_hint` named it: a bare `client_id` is public, and any site could make her "No" withdraw her consent.
 */
export async function logoutPage(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  if (!ctx.oidc.entities.IdTokenHint && ctx.oidc.session?.state) ctx.oidc.session.state.clientId = undefined;
  // `form` is oidc-provider's hidden form (id "op.logoutForm") carrying its xsrf token.
  const body = `<h1>Sign out?</h1>
<p>Do you want to sign out of ${escapeHtml(ctx.host)}?</p>
${form}
<div class="actions">
<button class="primary" type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button class="secondary" type="submit" form="op.logoutForm">No, stay signed in</button>
</div>`;
  sendPage(ctx, renderPage({ title: 'Sign out', body, formTargets: ['*'] }));
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
 * used, and the bare page is what any link may open. True when it answered.
 */
export function offerSignOutInstead(ctx: KoaContextWithOIDC, out: { error?: string }): boolean {
  if (ctx.oidc?.route !== 'end_session' || out.error === 'server_error' || !ctx.oidc.session?.accountId) return false;
  if (!Object.values(ctx.oidc.params ?? {}).some((value) => value !== undefined)) return false;
  ctx.status = 303;
  ctx.redirect(ctx.oidc.urlFor('end_session'));
  return true;
}

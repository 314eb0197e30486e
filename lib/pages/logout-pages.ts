import type { KoaContextWithOIDC } from 'oidc-provider';

import { escapeHtml, renderPage, sendPage } from './html.js';

/** The RP-initiated logout confirmation page (oidc-provider's `logoutSource`). */
export async function logoutPage(ctx: KoaContextWithOIDC, form: string): Promise<void> {
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

/** The page shown after a logout without `post_logout_redirect_uri`. */
export async function postLogoutPage(ctx: KoaContextWithOIDC): Promise<void> {
  sendPage(ctx, renderPage({ title: 'Signed out', body: '<h1>Signed out</h1><p>You are signed out.</p>' }));
}

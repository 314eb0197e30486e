import { escapeHtml, renderPage, type RenderedPage } from '../http/html.js';

/** What the login page needs to know. */
export interface LoginPageModel {
  /** Form action for the login POST. */
  action: string;
  /** The name the client registered, or its id. */
  clientName: string;
  /** Show the generic failure message. */
  failed?: boolean;
  /** The login the person typed (re-filled after a failure). */
  login?: string;
  /** Origin of the client's redirect URI (allowed as a form target after the POST's redirects). */
  redirectOrigin?: string;
}

/** The login page (C8): form `#login-form` with inputs `login` and `password`. */
export function loginPage(model: LoginPageModel): RenderedPage {
  return renderPage({
    title: 'Sign in',
    formTargets: model.redirectOrigin ? [model.redirectOrigin] : [],
    body: `<h1>Sign in</h1>
<p>to continue to <strong>${escapeHtml(model.clientName)}</strong></p>
${model.failed ? '<p class="error" role="alert" id="login-error">The login or password is not correct.</p>' : ''}
<form id="login-form" method="post" action="${escapeHtml(model.action)}" autocomplete="on">
<label for="login">Login</label>
<input id="login" name="login" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus value="${escapeHtml(model.login ?? '')}"${model.failed ? ' aria-describedby="login-error"' : ''}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`,
  });
}

/** What the consent page needs to know. */
export interface ConsentPageModel {
  /** Form action approving the request. */
  allowAction: string;
  /** Form action denying the request. */
  denyAction: string;
  clientName: string;
  /** Scopes being asked for. */
  scopes: string[];
  /** Claims being asked for, by name. */
  claims: string[];
  /** Origin of the client's redirect URI (allowed as a form target after the POST's redirects). */
  redirectOrigin?: string;
}

/** The consent page (C8): form `#consent-allow` approves, form `#consent-deny` denies. */
export function consentPage(model: ConsentPageModel): RenderedPage {
  const items = [...model.scopes.map((s) => `scope <code>${escapeHtml(s)}</code>`), ...model.claims.map((c) => `claim <code>${escapeHtml(c)}</code>`)];
  return renderPage({
    title: 'Allow access?',
    formTargets: model.redirectOrigin ? [model.redirectOrigin] : [],
    body: `<h1>Allow access?</h1>
<p><strong>${escapeHtml(model.clientName)}</strong> asks for:</p>
<ul>${items.map((i) => `<li>${i}</li>`).join('')}</ul>
<div class="actions">
<form id="consent-allow" method="post" action="${escapeHtml(model.allowAction)}"><button class="primary" type="submit">Allow</button></form>
<form id="consent-deny" method="post" action="${escapeHtml(model.denyAction)}"><button class="secondary" type="submit">Deny</button></form>
</div>`,
  });
}

import type { Context } from 'koa';

import { sendError, type OAuthErrorAnswer } from '../web/error-response.js';
import { escapeHtml, renderPage, sendPage } from './html.js';

/** Friendly sentences for the errors a person meets in a browser. */
const EXPLANATIONS: Record<string, string> = {
  invalid_redirect_uri: 'The application sent you here with a return address it has not registered, so you were not sent back.',
  invalid_client: 'The application that sent you here is not known to this provider.',
  invalid_request: 'The application that sent you here made a request this provider cannot accept.',
  session_not_found: 'Your sign-in expired, was finished already (the back button, another tab, another person signing in in this browser) or was opened in another browser. Start again from the application.',
  no_cookies: 'Your sign-in expired or was opened in another browser, or this browser blocks cookies for this site: signing in needs them, so allow them if it does. Start again from the application.',
};

/**
 * The explanation's key: oidc-provider's `SessionNotFound` (an interaction or sign-in that expired, ended, or
 * belongs to another browser, as after the back button or another sign-in in another tab) is answered `invalid_request`, which is not her application's doing.
 * Without any cookie in the request it may as well be a browser that blocks cookies for the site, which would meet it at every attempt.
 */
const explanationKey = (ctx: Context, code: string, caught: unknown): string => {
  if ((caught as { name?: unknown } | undefined)?.name !== 'SessionNotFound') return code;
  return ctx.get('cookie') ? 'session_not_found' : 'no_cookies';
};

/** oidc-provider's `renderError`: errors it cannot redirect back to the client, code and description only. */
export async function renderErrorPage(ctx: Context, out: { error?: string; error_description?: string }, caught?: unknown): Promise<void> {
  const code = out.error ?? 'server_error';
  const explanation = EXPLANATIONS[explanationKey(ctx, code, caught)] ?? 'Something went wrong while signing you in. Start again from the application.';
  const page = renderPage({
    title: 'Sign-in could not continue',
    body: `<h1>Sign-in could not continue</h1>
<p>${escapeHtml(explanation)}</p>
<p>Error: <code>${escapeHtml(code)}</code></p>
${out.error_description ? `<p>Details: ${escapeHtml(out.error_description)}</p>` : ''}`,
  });
  sendPage(ctx, page, ctx.status >= 400 ? ctx.status : 400);
}

/** Answers an error with the error page to a browser, as OAuth JSON to anything else; `caught` is the error thrown, if any. */
export async function answerError(ctx: Context, out: OAuthErrorAnswer, caught?: unknown): Promise<void> {
  if (ctx.accepts('json', 'html') === 'html') {
    ctx.status = out.status;
    await renderErrorPage(ctx, out, caught);
    ctx.status = out.status;
  } else sendError(ctx, out.status, out.error, out.error_description);
}

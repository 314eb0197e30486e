import type { Context, Next } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

import { escapeHtml } from '../pages/html.js';
import { formPostOpening, ROUTE_NAMES } from '../seams.js';

const FRAME_ANCESTORS = /frame-ancestors [^;]*/;

const stringOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * `provider.use` middleware: the `form_post` answer of `/authorize` itself (a code, or an error such as
 * `login_required` with the `state`, posted to a redirect URI the client registered) may be framed by that redirect
 * URI's origin, and only by it: a relying party's silent renew in a hidden iframe (`prompt=none`) hears its answer by
 * `form_post` as it does by query, and who may frame the page receives what it posts anyway. Every other page,
 * answers after our login or consent pages (`/authorize/{uid}`) included, still refuses to be framed.
 */
export function framedFormPostAnswers(): (ctx: Context, next: Next) => Promise<void> {
  return async (ctx, next) => {
    await next();
    const { oidc } = ctx as KoaContextWithOIDC;
    if (oidc?.route !== ROUTE_NAMES.authorization || typeof ctx.body !== 'string' || !ctx.response.is('html')) return;
    // The parameters oidc-provider answered by: those it resolved, else (refused before) those sent.
    const params: Record<string, unknown> | undefined = oidc.params ?? (ctx.method === 'POST' ? oidc.body : ctx.query);
    const redirectUri = stringOf(params?.redirect_uri);
    if (stringOf(params?.response_mode) !== 'form_post' || !redirectUri || !oidc.client?.redirectUriAllowed(redirectUri)) return;
    if (!ctx.body.includes(formPostOpening(escapeHtml(redirectUri)))) return;
    const { origin } = new URL(redirectUri);
    const csp = ctx.response.get('Content-Security-Policy');
    if (origin === 'null' || !FRAME_ANCESTORS.test(csp)) return;
    ctx.set('Content-Security-Policy', csp.replace(FRAME_ANCESTORS, `frame-ancestors ${origin}`));
    ctx.remove('X-Frame-Options');
  };
}

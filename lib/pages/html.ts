import { randomBytes } from 'node:crypto';

import type { Context } from 'koa';

import { noStore } from '../web/error-response.js';

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and double-quoted attribute values. */
export const escapeHtml = (value: unknown): string => String(value).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

const STYLE = `
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;padding:1rem;background:#f4f5f7;color:#1b1d21;line-height:1.5}
main{max-width:28rem;margin:2rem auto;background:#fff;border-radius:8px;padding:1.5rem;box-shadow:0 1px 3px rgba(0,0,0,.15);overflow-wrap:anywhere}
h1{font-size:1.4rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=password]{width:100%;padding:.6rem;font-size:1rem;border:1px solid #8a8f98;border-radius:4px}
input:focus,button:focus,textarea:focus,select:focus{outline:3px solid #1a5fb4;outline-offset:2px}
button{font-size:1rem;padding:.6rem 1.2rem;border-radius:4px;border:1px solid #1a5fb4;cursor:pointer;margin-top:1rem}
button.primary{background:#1a5fb4;color:#fff}
button.secondary{background:#fff;color:#1a5fb4}
button:disabled{opacity:.55;cursor:default}
.error{color:#a51d2d;font-weight:600}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
code{word-break:break-all}
pre{background:#f4f5f7;padding:.75rem;border-radius:4px;overflow-x:auto;white-space:pre-wrap;word-break:break-all;font-size:.85rem}
fieldset{border:1px solid #c0c4cc;border-radius:4px;margin:.75rem 0;padding:.5rem .75rem}
fieldset label{display:block;font-weight:400;margin:.25rem 0}
textarea,select{width:100%;font:inherit;padding:.5rem;border:1px solid #8a8f98;border-radius:4px}
main.wide{max-width:48rem}
`;

/**
 * The `form-action` sources that let a form of our pages end at a client's redirect or post-logout redirect URI and
 * wherever its endpoint sends her on (browsers check `form-action` on every redirect after the post; a callback on
 * one host commonly redirects to the app on another): any web origin (`*`), and a private-use scheme (RFC 8252 7.1:
 * `com.example.app:/cb`, which `*` does not match) besides.
 */
export const formTargetsOf = (uri: unknown): string[] => {
  const url = typeof uri === 'string' && URL.canParse(uri) ? new URL(uri) : undefined;
  return url?.origin === 'null' ? ['*', url.protocol] : ['*'];
};

/** A rendered page and the Content-Security-Policy that goes with it. */
export interface RenderedPage {
  html: string;
  csp: string;
}

/** A self-contained page: style and its one `script` (if any) by nonce, no frames, forms only to `'self'` and `formTargets`. */
export function renderPage(options: { title: string; body: string; formTargets?: string[]; wide?: boolean; script?: string }): RenderedPage {
  const nonce = randomBytes(16).toString('base64');
  const targets = ["'self'", ...(options.formTargets ?? [])].join(' ');
  const scripts = options.script === undefined ? '' : ` script-src 'nonce-${nonce}';`;
  const csp = `default-src 'none';${scripts} style-src 'nonce-${nonce}'; img-src 'self' data:; form-action ${targets}; frame-ancestors 'none'; base-uri 'none'`;
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(options.title)}</title>
<style nonce="${nonce}">${STYLE}</style>${options.script === undefined ? '' : `\n<script nonce="${nonce}">${options.script}</script>`}
</head>
<body>
<main${options.wide ? ' class="wide"' : ''}>
${options.body}
</main>
</body>
</html>`;
  return { html, csp };
}

/** Sends a rendered page with its CSP and `Cache-Control: no-store`. */
export function sendPage(ctx: Context, page: RenderedPage, status = 200): void {
  ctx.status = status;
  ctx.type = 'html';
  ctx.set('Content-Security-Policy', page.csp);
  noStore(ctx);
  ctx.body = page.html;
}

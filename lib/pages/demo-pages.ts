import { decodeJwt, type JWTPayload } from 'jose';

import { escapeHtml, renderPage, type RenderedPage } from './html.js';

/** How the demo page sends its authorization request: in the query, pushed to `/par`, or pushed encrypted. */
export type DemoRequestMode = 'query' | 'par' | 'par-encrypted';

/** What a finished demo flow shows. */
export interface DemoResult {
  tokenResponse: Record<string, unknown>;
  idToken: { jweHeader: Record<string, unknown>; jwsHeader: Record<string, unknown>; claims: JWTPayload };
  userinfo: { contentType: string; jweHeader?: Record<string, unknown>; claims: Record<string, unknown> };
}

/** Scopes the demo page offers to tick (`openid` is always sent). */
export const DEMO_SCOPES = ['profile', 'email', 'svc.insurance', 'svc.insurance.verified'] as const;

const EXAMPLE_CLAIMS = '{"userinfo": {"svc.ver.[idcard.l3.nfc,email.l2]": {"essential": true}}}';

/** The `verified_claims` request the demo's switch adds to UserInfo: name and birthdate verified with a document. */
export const DEMO_VERIFIED_CLAIMS = {
  verification: { trust_framework: null, time: null, evidence: [{ type: { value: 'document' }, document_details: null, check_details: null }] },
  claims: { given_name: null, family_name: null, birthdate: null },
} as const;

/** What she chose on the demo form, shown again with an error so she mends it rather than starts over. */
export interface DemoFormChoices {
  scopes: readonly string[];
  claims: string;
  verified: boolean;
  prompt: string;
  par: boolean;
}

const PROMPTS = ['login', 'consent', 'none'] as const;
const checked = (on: boolean): string => (on ? ' checked' : '');

/** The demo form: scopes, a `claims` request and the prompt; with an error about the claims request, her choices kept. */
export function demoFormPage(action: string, error?: string, chosen?: DemoFormChoices): RenderedPage {
  const invalid = error ? ' aria-invalid="true" aria-describedby="demo-form-error"' : '';
  return renderPage({
    title: 'svc-connect demo',
    wide: true,
    body: `<h1>Try svc-connect</h1>
<p>Run a real authorization code flow as a registered demo application with its own encryption key.
Sign in as <code>demo</code>/<code>demo</code> (every demo claim) or <code>demo-basic</code>/<code>demo-basic</code>.</p>
${error ? `<p class="error" role="alert" id="demo-form-error">${escapeHtml(error)}</p>` : ''}
<form id="demo-form" method="post" action="${escapeHtml(action)}">
<fieldset><legend>Scopes (openid is always requested)</legend>
${DEMO_SCOPES.map((s) => `<label><input type="checkbox" name="scope" value="${s}"${checked(chosen?.scopes.includes(s) ?? false)}> ${s}</label>`).join('\n')}
</fieldset>
<p>Each claim travels once: the claims of the ticked scopes in the ID token (in UserInfo when the
provider sets <code>svc.stage.include-scopes-in-user-info</code>), a claims request's claims where it names them.</p>
<label for="claims">claims request (JSON, optional)</label>
<textarea id="claims" name="claims" rows="5" cols="60" placeholder="${escapeHtml(EXAMPLE_CLAIMS)}"${invalid}>${escapeHtml(chosen?.claims ?? '')}</textarea>
<label><input type="checkbox" id="verified" name="verified" value="yes"${checked(chosen?.verified ?? false)}> Also ask for the verified name and date of birth, with how they were verified
(<code>verified_claims</code> of OpenID Connect for Identity Assurance, in UserInfo):</label>
<pre id="verified-example">${escapeHtml(JSON.stringify({ userinfo: { verified_claims: DEMO_VERIFIED_CLAIMS } }))}</pre>
<label for="prompt">prompt</label>
<select id="prompt" name="prompt"><option value="">(none)</option>${PROMPTS.map((p) => `<option${chosen?.prompt === p ? ' selected' : ''}>${p}</option>`).join('')}</select>
<fieldset><legend>How the request travels</legend>
<label><input type="checkbox" id="par" name="par" value="encrypted"${checked(chosen?.par ?? false)}> As a signed request object, encrypted to the provider, through a pushed authorization request (PAR)</label>
<p>The browser URL then holds only <code>client_id</code> and <code>request_uri</code>: the claims request never passes through the browser, its history or any log on the way.</p>
</fieldset>
<div class="actions"><button class="primary" type="submit">Run the flow</button></div>
</form>`,
  });
}

const json = (value: unknown): string => escapeHtml(JSON.stringify(value, null, 2));

const HOW_SENT: Record<DemoRequestMode, string> = {
  query: 'Every parameter, the claims request included, travelled in the URL as a signed request object (PS256): nobody could change it on the way, but anyone who sees the URL reads it (browser history, logs, Referer).',
  par: 'The parameters were signed (PS256) as a request object and pushed to /par first (this client must use PAR); the URL holds only client_id and request_uri.',
  'par-encrypted':
    'The parameters were signed (PS256) and encrypted (RSA-OAEP-256, A256GCM) to the provider as a request object and pushed to /par; the URL holds only client_id and request_uri.',
};

/** The JWT claims of a signed request object that are authorization parameters (not its iss, aud, times or jti). */
function requestObjectParameters(request: string | null): string[] {
  if (!request) return [];
  try {
    return Object.keys(decodeJwt(request)).filter((name) => !['iss', 'aud', 'iat', 'nbf', 'exp', 'jti'].includes(name));
  } catch {
    return [];
  }
}

/** What the relying party sent, and what it received, decrypted and verified. */
export function demoResultPage(result: DemoResult, again: string, request: { sentTo: string; mode: DemoRequestMode }): RenderedPage {
  const sent = new URL(request.sentTo).searchParams;
  const names = [...sent.keys()];
  const inRequest = requestObjectParameters(sent.get('request'));
  return renderPage({
    title: 'svc-connect demo: result',
    wide: true,
    body: `<h1>What the application received</h1>
<h2>Authorization request</h2>
<p id="authorization-mode">${escapeHtml(HOW_SENT[request.mode])}</p>
<p>The browser was sent to:</p>
<pre id="authorization-url">${escapeHtml(request.sentTo)}</pre>
<p>Parameters in that URL: <code id="authorization-url-parameters">${escapeHtml(names.join(' '))}</code></p>
${inRequest.length ? `<p>Parameters in its request object, readable by anyone who sees the URL: <code id="request-object-parameters">${escapeHtml(inRequest.join(' '))}</code></p>` : ''}
<h2>ID token</h2>
<p>Encrypted (JWE header) → signed (JWS header) → verified claims:</p>
<pre id="id-token-jwe-header">${json(result.idToken.jweHeader)}</pre>
<pre id="id-token-jws-header">${json(result.idToken.jwsHeader)}</pre>
<pre id="id-token-claims">${json(result.idToken.claims)}</pre>
<h2>UserInfo</h2>
<p>Content-Type <code>${escapeHtml(result.userinfo.contentType)}</code>${result.userinfo.jweHeader ? ', decrypted and verified:' : ':'}</p>
${result.userinfo.jweHeader ? `<pre id="userinfo-jwe-header">${json(result.userinfo.jweHeader)}</pre>` : ''}
<pre id="userinfo-claims">${json(result.userinfo.claims)}</pre>
<h2>Raw token response</h2>
<pre id="token-response">${json(result.tokenResponse)}</pre>
<p><a href="${escapeHtml(again)}">Run another flow</a></p>`,
  });
}

const EXPLAIN: Record<string, string> = {
  access_denied: 'Access was denied: either consent was refused, or the account lacks a claim the request marked essential.',
  invalid_request: 'The provider refused the request as malformed or not allowed; the description says why.',
  invalid_scope: 'The scope was not accepted.',
  login_required: 'prompt=none was sent, but nobody is signed in.',
  consent_required: 'prompt=none was sent, but this application has no consent yet.',
  interaction_required: 'prompt=none was sent, but the provider needs to show a page.',
  invalid_grant: 'The authorization code could not be redeemed (used already or expired).',
};

/** The error the provider returned (or the flow hit), explained. */
export function demoErrorPage(error: string, description: string, again: string): RenderedPage {
  return renderPage({
    title: 'svc-connect demo: error',
    body: `<h1>The flow ended with an error</h1>
<p id="demo-error">Error: <code>${escapeHtml(error)}</code></p>
${description ? `<p id="demo-error-description">${escapeHtml(description)}</p>` : ''}
<p>${escapeHtml(EXPLAIN[error] ?? 'See the description above.')}</p>
<p><a href="${escapeHtml(again)}">Try again</a></p>`,
  });
}

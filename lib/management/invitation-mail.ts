import { escapeHtml } from '../http/html.js';
import type { MailMessage } from './mailer.js';

/** What an invitation mail says. */
export interface InvitationMail {
  from: string;
  to: string;
  token: string;
  expiresAt: number;
  registrationEndpoint: string;
}

/**
 * The invitation mail (plain text and HTML): the initial access token in plaintext (spec 2.3), its
 * expiry, the registration endpoint and a ready-to-run registration request.
 */
export function invitationMail(mail: InvitationMail): MailMessage {
  const expires = new Date(mail.expiresAt * 1000).toISOString();
  const curl = [
    `curl -s ${mail.registrationEndpoint} \\`,
    `  -H 'Authorization: Bearer ${mail.token}' \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d '{"redirect_uris": ["https://your-app.example/callback"], "client_name": "Your app"}'`,
  ].join('\n');
  const text = `You are invited to register a relying party (an application) with this OpenID Connect provider.

Initial access token (works for one registration, until ${expires}):

${mail.token}

Registration endpoint: ${mail.registrationEndpoint}

Ready-to-run request (replace the redirect URI and name; add your encryption key to receive user data):

${curl}

User data is delivered only encrypted to your application's own key: register
id_token_encrypted_response_alg / userinfo_encrypted_response_alg (e.g. RSA-OAEP-256) with your
public key in "jwks" or "jwks_uri".
`;
  const html = `<!DOCTYPE html><html lang="en"><body>
<p>You are invited to register a relying party (an application) with this OpenID Connect provider.</p>
<p>Initial access token (works for <strong>one</strong> registration, until ${escapeHtml(expires)}):</p>
<pre>${escapeHtml(mail.token)}</pre>
<p>Registration endpoint: <code>${escapeHtml(mail.registrationEndpoint)}</code></p>
<p>Ready-to-run request (replace the redirect URI and name; add your encryption key to receive user data):</p>
<pre>${escapeHtml(curl)}</pre>
<p>User data is delivered only encrypted to your application's own key: register
<code>id_token_encrypted_response_alg</code> / <code>userinfo_encrypted_response_alg</code> (e.g. RSA-OAEP-256)
with your public key in <code>jwks</code> or <code>jwks_uri</code>.</p>
</body></html>`;
  return { from: mail.from, to: mail.to, subject: 'Your invitation to register an application', text, html };
}

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
 * Longest line of an invitation mail. Plain ASCII text whose lines all fit 76 characters is sent as
 * `Content-Transfer-Encoding: 7bit` (nodemailer's rule), so the raw `.eml` holds every line exactly
 * as written: no quoted-printable soft line break can land inside the token or the curl command.
 */
export const MAIL_LINE_LIMIT = 76;

/** Quotes a word for a POSIX shell: `'…'`, with `'` written as `'\''`. */
function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A quoted shell word split over lines of at most {@link MAIL_LINE_LIMIT} characters: adjacent
 * quoted pieces joined by `\` line continuations, which the shell glues back into one word.
 */
function splitShellWord(word: string, indent: string, suffix: string): string[] {
  const whole = `${indent}${shellQuote(word)}${suffix}`;
  if (whole.length <= MAIL_LINE_LIMIT) return [whole];
  const lines: string[] = [];
  let rest = word;
  let prefix = indent;
  while (rest.length > 0) {
    // Room on this line: the prefix, two quotes, and ` \` (continuation) or the suffix.
    const room = MAIL_LINE_LIMIT - prefix.length - 2 - Math.max(1, suffix.length);
    let piece = rest.slice(0, Math.max(1, room));
    // A quote costs three more characters when quoted; keep pieces from growing past the limit.
    while (piece.length > 1 && `${prefix}${shellQuote(piece)}\\`.length > MAIL_LINE_LIMIT) piece = piece.slice(0, -1);
    rest = rest.slice(piece.length);
    lines.push(`${prefix}${shellQuote(piece)}${rest.length > 0 ? '\\' : suffix}`);
    // A continuation line starts at column 0: leading blanks would end the word.
    prefix = '';
  }
  return lines;
}

/**
 * The ready-to-run registration request, one shell command over several lines (each within
 * {@link MAIL_LINE_LIMIT}): the JSON body spans two lines inside its quotes, the endpoint comes last
 * and is split into glued quoted pieces when it is long.
 */
function registrationCommand(token: string, registrationEndpoint: string): string[] {
  return [
    'curl -s -X POST \\',
    `  -H ${shellQuote(`Authorization: Bearer ${token}`)} \\`,
    "  -H 'Content-Type: application/json' \\",
    `  -d '{"redirect_uris": ["https://your-app.example/callback"],`,
    `       "client_name": "Your app"}' \\`,
    ...splitShellWord(registrationEndpoint, '  ', ''),
  ];
}

/**
 * The endpoint for reading: on one line when it fits {@link MAIL_LINE_LIMIT}, else in pieces under a
 * note saying to join them (a longer line would turn the whole part into quoted-printable).
 */
function endpointLines(endpoint: string): { note: string; lines: string[] } {
  if (endpoint.length <= MAIL_LINE_LIMIT) return { note: 'Registration endpoint:', lines: [endpoint] };
  const lines: string[] = [];
  for (let i = 0; i < endpoint.length; i += MAIL_LINE_LIMIT) lines.push(endpoint.slice(i, i + MAIL_LINE_LIMIT));
  return { note: `Registration endpoint (one URL: join these ${lines.length} lines without spaces):`, lines };
}

/** Escapes text content for HTML (`'` and `"` need no escape outside attributes, and stay copyable). */
function escapeText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The invitation mail (plain text and HTML): the initial access token in plaintext (spec 2.3) on a
 * line of its own, its expiry, the registration endpoint and a ready-to-run registration request.
 * Every line fits {@link MAIL_LINE_LIMIT} characters (a very long endpoint URL is written in pieces),
 * so the mail travels as 7bit text and survives copying from the raw message.
 */
export function invitationMail(mail: InvitationMail): MailMessage {
  const expires = new Date(mail.expiresAt * 1000).toISOString();
  const curl = registrationCommand(mail.token, mail.registrationEndpoint);
  const endpoint = endpointLines(mail.registrationEndpoint);
  const text = [
    'You are invited to register a relying party (an application) with this',
    'OpenID Connect provider.',
    '',
    `Initial access token (one registration, until ${expires}):`,
    '',
    mail.token,
    '',
    endpoint.note,
    '',
    ...endpoint.lines,
    '',
    'Ready-to-run request (replace the redirect URI and the name; add your',
    'encryption key to receive user data):',
    '',
    ...curl,
    '',
    'User data is delivered only encrypted to your application\'s own key:',
    'register id_token_encrypted_response_alg and',
    'userinfo_encrypted_response_alg (e.g. RSA-OAEP-256) with your public key',
    'in "jwks" or "jwks_uri".',
    '',
  ].join('\n');
  const html = [
    '<!DOCTYPE html><html lang="en"><body>',
    '<p>You are invited to register a relying party (an application) with this',
    'OpenID Connect provider.</p>',
    '<p>Initial access token (works for <strong>one</strong> registration,',
    `until ${escapeText(expires)}):</p>`,
    '<pre>',
    escapeText(mail.token),
    '</pre>',
    `<p>${escapeText(endpoint.note)}</p>`,
    '<pre>',
    ...endpoint.lines.map(escapeText),
    '</pre>',
    '<p>Ready-to-run request (replace the redirect URI and the name; add your',
    'encryption key to receive user data):</p>',
    '<pre>',
    ...curl.map(escapeText),
    '</pre>',
    '<p>User data is delivered only encrypted to your application\'s own key:',
    'register <code>id_token_encrypted_response_alg</code> and',
    '<code>userinfo_encrypted_response_alg</code> (e.g. RSA-OAEP-256) with your',
    'public key in <code>jwks</code> or <code>jwks_uri</code>.</p>',
    '</body></html>',
    '',
  ].join('\n');
  return { from: mail.from, to: mail.to, subject: 'Your invitation to register an application', text, html };
}

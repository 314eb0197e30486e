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

/** Escapes text content for HTML (`'` and `"` need no escape outside attributes, and stay copyable). */
const escapeText = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The length of a line in the HTML part, the longer of its two spellings (`&` is `&amp;` there). */
const width = (line: string): number => escapeText(line).length;

/** Quotes a word for a POSIX shell: `'…'`, with `'` written as `'\''`. */
const shellQuote = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/**
 * A quoted shell word split over lines of at most {@link MAIL_LINE_LIMIT} characters: adjacent
 * quoted pieces joined by `\` line continuations, which the shell glues back into one word.
 */
function splitShellWord(word: string, indent: string): string[] {
  const whole = `${indent}${shellQuote(word)}`;
  if (width(whole) <= MAIL_LINE_LIMIT) return [whole];
  const lines: string[] = [];
  let rest = word;
  let prefix = indent;
  while (rest.length > 0) {
    // Room on this line: the prefix, two quotes and ` \`; a quote inside costs three more characters.
    let piece = rest.slice(0, Math.max(1, MAIL_LINE_LIMIT - prefix.length - 3));
    while (piece.length > 1 && width(`${prefix}${shellQuote(piece)}\\`) > MAIL_LINE_LIMIT) piece = piece.slice(0, -1);
    rest = rest.slice(piece.length);
    lines.push(`${prefix}${shellQuote(piece)}${rest.length > 0 ? '\\' : ''}`);
    // A continuation line starts at column 0: leading blanks would end the word.
    prefix = '';
  }
  return lines;
}

/** The endpoint on one line when it fits {@link MAIL_LINE_LIMIT}, else in pieces under a note saying to join them. */
function endpointLines(endpoint: string): { note: string; lines: string[] } {
  if (width(endpoint) <= MAIL_LINE_LIMIT) return { note: 'Registration endpoint:', lines: [endpoint] };
  const lines: string[] = [];
  let line = '';
  for (const char of endpoint) {
    if (width(`${line}${char}`) > MAIL_LINE_LIMIT) {
      lines.push(line);
      line = '';
    }
    line += char;
  }
  lines.push(line);
  return { note: `Registration endpoint (one URL: join these ${lines.length} lines without spaces):`, lines };
}

/**
 * The invitation mail (plain text and HTML): the initial access token in plaintext (spec 2.3) on a
 * line of its own, its expiry, the registration endpoint and a ready-to-run registration request.
 * Every line fits {@link MAIL_LINE_LIMIT} characters, so the mail travels as 7bit text.
 */
export function invitationMail(mail: InvitationMail): MailMessage {
  const endpoint = endpointLines(mail.registrationEndpoint);
  // Paragraphs (`p`) and verbatim blocks (`pre`), written once for both parts.
  const blocks: ['p' | 'pre', string[]][] = [
    ['p', ['You are invited to register a relying party (an application) with this', 'OpenID Connect provider.']],
    ['p', [`Initial access token (one registration, until ${new Date(mail.expiresAt * 1000).toISOString()}):`]],
    ['pre', [mail.token]],
    ['p', [endpoint.note]],
    ['pre', endpoint.lines],
    ['p', ['Ready-to-run request (replace the redirect URI and the name; add your', 'encryption key to receive user data):']],
    ['pre', [
      'curl -s -X POST \\',
      `  -H ${shellQuote(`Authorization: Bearer ${mail.token}`)} \\`,
      "  -H 'Content-Type: application/json' \\",
      `  -d '{"redirect_uris": ["https://your-app.example/callback"],`,
      `       "client_name": "Your app"}' \\`,
      ...splitShellWord(mail.registrationEndpoint, '  '),
    ]],
    ['p', [
      "User data is delivered only encrypted to your application's own key:",
      'register id_token_encrypted_response_alg and',
      'userinfo_encrypted_response_alg (e.g. RSA-OAEP-256) with your public key',
      'in "jwks" or "jwks_uri".',
    ]],
  ];
  const text = `${blocks.map(([, lines]) => lines.join('\n')).join('\n\n')}\n`;
  const body = blocks.flatMap(([tag, lines]) => [`<${tag}>`, ...lines.map(escapeText), `</${tag}>`]);
  const html = ['<!DOCTYPE html><html lang="en"><body>', ...body, '</body></html>', ''].join('\n');
  return { from: mail.from, to: mail.to, subject: 'Your invitation to register an application', text, html };
}

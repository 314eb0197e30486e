import { usageError, type Command } from './common.js';
import { CONNECTION_HELP, connect, parseCommand, request, when } from './management-api.js';

const usage = `Usage: svc-connect invite (--email ADDRESS | --print) [--url BASE_URL] [--user USER]

  --email ADDRESS   asks the provider to mail an initial access token to ADDRESS; prints the answer
                    as JSON ({"invited","expires_at","invitation","mail"}: "invitation" is the id
                    "invitations revoke" takes), and on stderr where the mail went: the SMTP server
                    that accepted it, or the .eml file in the server's outbox (the token is in that
                    file; the command never sees it).
  --print           asks the provider for an initial access token for a client of your own and
                    prints it (only the token, on stdout; its expiry on stderr). The provider shows
                    it once: it is the same two-day, single-use token an invitation mails.

Both call the provider's management API (role MANAGEMENT).
${CONNECTION_HELP}`;

/** One line saying where the invitation mail went, from the `mail` member of the answer. */
function deliveryNote(body: Record<string, unknown>): string {
  const mail = body.mail as { transport?: string; host?: string; file?: string } | undefined;
  const until = when(body.expires_at);
  const expires = until === '-' ? '' : ` (the token expires ${until})`;
  const who = typeof body.invited === 'string' ? body.invited : 'the invitee';
  if (mail?.transport === 'outbox' && mail.file) return `mail for ${who} written to ${mail.file} on the server${expires}; no SMTP server is configured, so forward that file`;
  if (mail?.transport === 'smtp' && mail.host) return `mail for ${who} handed to the SMTP server ${mail.host}${expires}`;
  return `mail for ${who} sent${expires}`;
}

/** `svc-connect invite`. */
export const inviteCommand: Command = {
  name: 'invite',
  summary: 'mail an initial access token to a relying party, or print one (management API)',
  usage,
  async run(argv, io) {
    const { values, positionals } = parseCommand(argv, { email: { type: 'string' }, print: { type: 'boolean' } }, usage);
    if (positionals.length > 0) throw usageError(`unexpected arguments: ${positionals.join(' ')}`, usage);
    const { email } = values;
    if (values.print) {
      if (email !== undefined) throw usageError('give --email or --print, not both', usage);
      // Only the token is required: it is issued already, and shown once.
      const body = await request(connect(values, io), 'POST', '/initial-access-tokens', 'initial access token', { initial_access_token: 'string' });
      io.out(`${String(body.initial_access_token)}\n`);
      const until = when(body.expires_at);
      const expires = until === '-' ? '' : `, until ${until}`;
      io.err?.(`initial access token issued: it registers one client${expires}; it is not shown again\n`);
      return;
    }
    if (!email) throw usageError('--email or --print is required', usage);
    // In the body, not the URL: access logs in front of the provider keep URLs, and no log line holds the full address.
    const body = await request(connect(values, io), 'POST', '/invite_client', 'invitation', { invitation: 'string', invited: 'string', mail: 'object?' }, { form: { email } });
    io.out(`${JSON.stringify(body)}\n`);
    io.err?.(`${deliveryNote(body)}\n`);
  },
};

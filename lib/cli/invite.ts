import { CliError } from '../errors.js';
import { baseUrlFrom, call, failOnError, flags, type Command } from './common.js';

const usage = `Usage: svc-connect invite --email ADDRESS [--url BASE_URL] [--user USER]

Asks the provider's management endpoint to mail an initial access token to ADDRESS.
BASE_URL defaults to SVC_BASE_URL or http://localhost:3000; USER to SVC_MANAGEMENT_USER or admin.
The password is read from SVC_MANAGEMENT_PASSWORD (never from a flag, so it stays out of shell history).
Prints the answer as JSON ({"invited","expires_at","mail"}), and on stderr where the mail went: the
SMTP server that accepted it, or the .eml file in the server's outbox (the token is in that file;
the command never sees it).`;

/** One line saying where the invitation mail went, from the `mail` member of the answer. */
export function deliveryNote(body: Record<string, unknown>): string {
  const mail = body.mail as { transport?: string; host?: string; file?: string } | undefined;
  const expires = typeof body.expires_at === 'number' ? ` (the token expires ${new Date(body.expires_at * 1000).toISOString()})` : '';
  const who = typeof body.invited === 'string' ? body.invited : 'the invitee';
  if (mail?.transport === 'outbox' && mail.file) return `mail for ${who} written to ${mail.file} on the server${expires}; no SMTP server is configured, so forward that file`;
  if (mail?.transport === 'smtp' && mail.host) return `mail for ${who} handed to the SMTP server ${mail.host}${expires}`;
  return `mail for ${who} sent${expires}`;
}

/** `svc-connect invite`. */
export const inviteCommand: Command = {
  name: 'invite',
  summary: 'mail an initial access token to a relying party (calls the management endpoint)',
  usage,
  async run(argv, io) {
    const values = flags(argv, { email: { type: 'string' }, url: { type: 'string' }, user: { type: 'string' } }, usage);
    const email = values.email as string | undefined;
    if (!email) throw new CliError(`--email is required\n\n${usage}`, 2);
    const password = io.env.SVC_MANAGEMENT_PASSWORD;
    if (!password) throw new CliError('set SVC_MANAGEMENT_PASSWORD to the management password', 2);
    const user = (values.user as string | undefined) ?? io.env.SVC_MANAGEMENT_USER ?? 'admin';
    const url = new URL(`${baseUrlFrom(values.url as string | undefined, io.env)}/oidc/v1/management/invite_client`);
    url.searchParams.set('email', email);
    const result = await call(url.href, { headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` } });
    failOnError(result, 'invitation');
    io.out(`${JSON.stringify(result.body)}\n`);
    io.err?.(`${deliveryNote(result.body)}\n`);
  },
};

import { CliError } from '../errors.js';
import { isInvitationId } from '../management/toolbox.js';
import { usageError, type Command } from './common.js';
import { CONNECTION_HELP, connect, pages, parseListCommand, request, table, when } from './management-api.js';

const usage = `Usage: svc-connect invitations <command> [ID] [options]

  list [--limit N] [--cursor C] [--all] [--json]   pending invitations (unused initial access tokens)
  revoke ID                                        revoke one: its mailed token stops working

An invitation is named by an id (inv_…, derived from the token by SHA-256), never by its token.
Send invitations with "svc-connect invite".
${CONNECTION_HELP}`;

/** `svc-connect invitations`. */
export const invitationsCommand: Command = {
  name: 'invitations',
  summary: 'list or revoke pending invitations (management API)',
  usage,
  async run(argv, io) {
    const { values, sub, id } = parseListCommand(argv, usage, 'ID');
    if (sub === 'list') {
      const { items, next } = await pages(connect(values, io), '/invitations', 'invitations', { id: 'string' }, values);
      if (values.json) io.out(`${JSON.stringify({ invitations: items, ...(next ? { next_cursor: next } : {}) }, null, 2)}\n`);
      else table(io, ['ID', 'ISSUED', 'EXPIRES'], items.map((i) => [String(i.id), when(i.issued_at), when(i.expires_at)]));
      if (next && !values.json) io.err?.(`more invitations: run again with --cursor ${next} (or --all)\n`);
      return;
    }
    if (sub !== 'revoke') throw usageError(`unknown invitations command ${sub ?? '(none)'}`, usage);
    if (!id) throw usageError('revoke needs an ID (from "svc-connect invitations list")', usage);
    // Checked here: a token pasted in its place would otherwise travel in the URL, which access logs keep.
    if (!isInvitationId(id)) throw new CliError('an invitation ID is inv_ and 43 base64url characters (from "svc-connect invitations list"), never the token itself; nothing was sent', 2);
    const body = await request(connect(values, io), 'DELETE', `/invitations/${encodeURIComponent(id)}`, 'revoke', { revoked: true, id: 'string' });
    io.out(`${JSON.stringify(body)}\n`);
    io.err?.(`invitation ${id} is revoked; its token no longer registers a client\n`);
  },
};

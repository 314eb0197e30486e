import { usageError, type Command } from './common.js';
import { CONNECTION_HELP, connect, parseCommand, request } from './management-api.js';

const usage = `Usage: svc-connect subjects revoke SUB [--client ID]

Ends every session of the person whose subject identifier is SUB and revokes every grant they gave,
with its tokens: relying parties' access tokens for them stop working, and the next sign-in asks
again. SUB is the account id; with --client ID it is the sub that client received (a pairwise sub
for a pairwise client). SUB travels in the request body, and the provider logs only a keyed hash of it.

Options:
  --client ID   the client whose sub SUB is
${CONNECTION_HELP}`;

/** `svc-connect subjects`. */
export const subjectsCommand: Command = {
  name: 'subjects',
  summary: "revoke a person's sessions and grants by sub (management API)",
  usage,
  async run(argv, io) {
    const { values, positionals } = parseCommand(argv, { client: { type: 'string' } }, usage);
    const [sub, subject, ...extra] = positionals;
    if (sub !== 'revoke') throw usageError(`unknown subjects command ${sub ?? '(none)'}`, usage);
    if (!subject || extra.length > 0) throw usageError('revoke takes exactly one SUB', usage);
    const { client } = values;
    const counts = { revoked_sessions: 'number', revoked_grants: 'number', revoked_tokens: 'number' } as const;
    const body = await request(connect(values, io), 'POST', '/subjects/revoke', 'revoke', counts, { form: { sub: subject, ...(client ? { client_id: client } : {}) } });
    io.out(`${JSON.stringify(body)}\n`);
    io.err?.(`revoked ${String(body.revoked_sessions)} session(s) and ${String(body.revoked_grants)} grant(s) (${String(body.revoked_tokens)} token(s))\n`);
  },
};

import { usageError, type Command } from './common.js';
import { CONNECTION_HELP, connect, parseCommand, request } from './management-api.js';

const usage = `Usage: svc-connect logins reset LOGIN

Forgets the failed sign-ins of the login name LOGIN: its cool-down and its run of failures in a row
(after svc.login.consecutive-limit of them only browsers with a device cookie may try it), so any
browser may try it again. Devices keep their own counts. LOGIN travels in the request body, and
the provider logs only a keyed hash of it.

Options:
${CONNECTION_HELP}`;

/** `svc-connect logins`. */
export const loginsCommand: Command = {
  name: 'logins',
  summary: "reset a login name's failed sign-ins (management API)",
  usage,
  async run(argv, io) {
    const { values, positionals } = parseCommand(argv, {}, usage);
    const [sub, login, ...extra] = positionals;
    if (sub !== 'reset') throw usageError(`unknown logins command ${sub ?? '(none)'}`, usage);
    if (!login || extra.length > 0) throw usageError('reset takes exactly one LOGIN', usage);
    const body = await request(connect(values, io), 'POST', '/logins/reset', 'reset', { reset: true }, { form: { login } });
    io.out(`${JSON.stringify(body)}\n`);
  },
};

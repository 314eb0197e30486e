import { CliError } from '../errors.js';
import { type Command } from './common.js';
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
    if (sub !== 'reset') throw new CliError(`unknown logins command ${sub ?? '(none)'}\n\n${usage}`, 2);
    if (!login || extra.length > 0) throw new CliError(`reset takes exactly one LOGIN\n\n${usage}`, 2);
    const body = await request(connect(values, io), 'POST', '/logins/reset', 'reset', { login });
    io.out(`${JSON.stringify(body)}\n`);
  },
};

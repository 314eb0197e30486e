import { expectAnswer, usageError, type AnswerShape, type CliIo, type Command } from './common.js';
import { CONNECTION_HELP, connect, pages, parseListCommand, request, table, when } from './management-api.js';

const usage = `Usage: svc-connect clients <command> [CLIENT_ID] [options]

  list [--limit N] [--cursor C] [--all] [--json]   stored clients, a page at a time (--all: every page)
  show CLIENT_ID                                   one client's metadata, without secrets
  disable CLIENT_ID                                refuse the client at authorize, token, UserInfo and registration
  enable CLIENT_ID                                 lift a disable
  delete CLIENT_ID                                 delete the client and revoke its grants
  revoke-grants CLIENT_ID                          revoke every grant (and token) of the client
  registration-token CLIENT_ID                     a new registration access token for the client, printed
                                                   once; every earlier one stops working

Calls the provider's management API (role MANAGEMENT); every action is written to the provider's log
as a management_audit event. Statically provisioned clients are shown but not changed here.
${CONNECTION_HELP}`;

const REVOKED = { revoked_grants: 'number', revoked_tokens: 'number' } as const;
const ACTIONS = {
  disable: { method: 'POST', suffix: '/disable', shape: { disabled: true, client_id: 'string' }, note: (id: string) => `client ${id} is disabled: refused at authorize, token, UserInfo and registration until enabled` },
  enable: { method: 'POST', suffix: '/enable', shape: { disabled: false, client_id: 'string' }, note: (id: string) => `client ${id} is enabled` },
  delete: { method: 'DELETE', suffix: '', shape: { deleted: true, client_id: 'string', ...REVOKED }, note: (id: string) => `client ${id} is deleted, with its grants` },
  'revoke-grants': { method: 'POST', suffix: '/revoke-grants', shape: { ...REVOKED, client_id: 'string' }, note: (id: string) => `every grant of client ${id} is revoked; its tokens no longer work` },
} as const;

/** What a listed client must hold. */
const LISTED: AnswerShape = { client_id: 'string' };

const stateOf = (client: Record<string, unknown>): string => (client.static ? 'static' : client.disabled ? 'disabled' : 'enabled');

async function list(values: ReturnType<typeof parseListCommand>['values'], io: CliIo): Promise<void> {
  const { items, first, next } = await pages(connect(values, io), '/clients', 'clients', LISTED, values);
  const listed = expectAnswer(first, 'clients listing', { static_clients: 'list?' }).static_clients as unknown[] | undefined;
  const statics = (listed ?? []).map((client, i) => expectAnswer(client, 'clients listing', LISTED, `static_clients[${i}]`));
  const json = { clients: items, ...(statics.length ? { static_clients: statics } : {}), ...(next ? { next_cursor: next } : {}) };
  if (values.json) return io.out(`${JSON.stringify(json, null, 2)}\n`);
  const rows = [...statics, ...items].map((c) => [
    String(c.client_id),
    stateOf(c),
    when(c.client_id_issued_at),
    typeof c.client_name === 'string' ? c.client_name : '',
  ]);
  table(io, ['CLIENT_ID', 'STATE', 'ISSUED', 'NAME'], rows);
  if (next) io.err?.(`more clients: run again with --cursor ${next} (or --all)\n`);
}

/** `svc-connect clients`. */
export const clientsCommand: Command = {
  name: 'clients',
  summary: 'list, show, disable, enable or delete clients; revoke their grants; issue a registration access token (management API)',
  usage,
  async run(argv, io) {
    const { values, sub, id: clientId } = parseListCommand(argv, usage, 'CLIENT_ID');
    if (sub === 'list') return list(values, io);
    if (sub !== 'show' && sub !== 'registration-token' && !(sub && Object.hasOwn(ACTIONS, sub))) throw usageError(`unknown clients command ${sub ?? '(none)'}`, usage);
    if (!clientId) throw usageError(`${sub} needs a CLIENT_ID`, usage);
    const connection = connect(values, io);
    const path = `/clients/${encodeURIComponent(clientId)}`;
    if (sub === 'show') return io.out(`${JSON.stringify(await request(connection, 'GET', path, 'show', { client: 'object', disabled: 'boolean', static: 'boolean' }), null, 2)}\n`);
    if (sub === 'registration-token') {
      const body = await request(connection, 'POST', `${path}/registration-access-token`, 'registration token', { registration_access_token: 'string', client_id: 'string' });
      io.out(`${String(body.registration_access_token)}\n`);
      io.err?.(`client ${clientId} has a new registration access token; every earlier one stopped working. It is not shown again\n`);
      return;
    }
    const action = ACTIONS[sub as keyof typeof ACTIONS];
    const body = await request(connection, action.method, `${path}${action.suffix}`, sub, action.shape);
    io.out(`${JSON.stringify(body)}\n`);
    io.err?.(`${action.note(clientId)}\n`);
  },
};

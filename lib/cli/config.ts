import { CliError, startFailureReason } from '../errors.js';
import { redactUrlCredentials, type LogFields } from '../logger.js';
import type { ClusterNode } from '../settings/types.js';
import { defaultLogFormat } from '../observability/pino-logger.js';
import { PROPERTY_DEFINITIONS, readValue } from '../settings/definitions.js';
import { loadSettingsWithSources, type ConfigFileValues, type SettingSource } from '../settings/load.js';
import { warnIfConfigFileExposed } from '../settings/secret-files.js';
import type { Settings } from '../settings/types.js';
import { parseFlags, usageError, type CliIo, type Command } from './common.js';
import { checkConnections } from './connection-checks.js';
import { table } from './management-api.js';

const usage = `Usage: svc-connect config check [--file FILE] [--connect]

Loads the configuration exactly as "svc-connect serve" would — the file named by --file or
SVC_CONFIG (.properties or .json) and the environment — and prints every property's effective
value (secrets redacted, credentials inside URLs too) and where it came from (default, file, env
VARIABLE). Then runs the server's start checks without starting it: the unsafe defaults (refused
under NODE_ENV=production), the keys file, the clients file, the authenticator and claim modules.

--connect  also opens the store (Redis: PING) and the SMTP transport (connect and sign in; nothing
           is sent) and prints for each what answered, or why not: connection refused, host not
           found, authentication failed, TLS failed, timed out, with the host and the error. Of
           Redis it reads (writes nothing) which issuer the key prefix is recorded for: another
           issuer's fails, as the start would.

Exits 0 when the server would start (warnings are listed) and, with --connect, both connections
work; 1 with the server's own message when it would not, or with the failed connections; 2 when the
command line is wrong.`;

/** A Cluster seed node as printed: `host:port`, or as a `redis://` (`rediss://` over TLS) URL with its password redacted. */
function clusterNode({ host, port, username, password, tls }: ClusterNode): string {
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const credentials = username || password ? `${username ?? ''}${password ? ':***' : ''}@` : '';
  return credentials || tls ? `${tls ? 'rediss' : 'redis'}://${credentials}${address}` : address;
}

/** The effective value as printed: secrets redacted (credentials inside URLs too), lists joined, unset as `-`. */
function shown(value: unknown, secret: boolean): string {
  if (value === undefined) return '-';
  if (secret) return '<redacted>';
  if (Array.isArray(value)) return value.map((v) => (v && typeof v === 'object' ? clusterNode(v as ClusterNode) : redactUrlCredentials(String(v)))).join(',');
  return typeof value === 'string' ? redactUrlCredentials(value) : JSON.stringify(value);
}

function sourceText(name: string, source: SettingSource | undefined): string {
  if (source?.kind === 'file') return `file ${source.file}`;
  if (source?.kind === 'env') return `env ${source.variable}`;
  if (source?.kind === 'code') return 'code';
  return name === 'svc.base-url' ? 'default (from svc.port)' : 'default';
}

/** A warning of the start checks as `config check` prints it. */
function warningText(event: string, fields: LogFields): string {
  if (event === 'unsafe_default') return `${String(fields.property)}: ${String(fields.reason)}`;
  if (event === 'secret_file_exposed') return `${event}: ${String(fields.file)} (mode ${String(fields.mode)}) holds ${String(fields.holds)}: ${String(fields.fix)}`;
  return `${event} ${JSON.stringify(fields)}`;
}

const startFailure = (err: unknown): CliError => new CliError(`cannot start: ${startFailureReason(err)}`);

/** The start checks of the bundled server, without listening or connecting: resolves to the warnings. */
async function startChecks(settings: Settings, configFile: ConfigFileValues | undefined): Promise<{ event: string; fields?: LogFields }[]> {
  const warnings: { event: string; fields?: LogFields }[] = [];
  const logger = { info: () => undefined, warn: (event: string, fields?: LogFields) => warnings.push({ event, fields }), error: (event: string, fields?: LogFields) => warnings.push({ event, fields }) };
  warnIfConfigFileExposed(logger, configFile);
  // createApp's checks (the bundled server serves management) against a throwaway memory store: Redis is not contacted.
  // Loaded here, not at the top: they bring oidc-provider, which the other commands do not need.
  const [{ createMemoryStore }, { resolveRuntime }] = await Promise.all([import('../../adapters/memory.js'), import('../provider/runtime.js')]);
  const store = createMemoryStore();
  try {
    await resolveRuntime(settings, { store, logger }, { store: false, management: true }, () => Promise.resolve({ keys: [] }));
  } finally {
    await store.close();
  }
  return warnings;
}

/** `svc-connect config check`. */
export const configCommand: Command = {
  name: 'config',
  summary: 'check a configuration without starting the server: effective values, their sources, warnings',
  usage,
  async run(argv, io: CliIo) {
    const [sub, ...rest] = argv;
    if (sub !== 'check') throw usageError(`unknown config command ${sub ?? '(none)'}`, usage);
    const { values: given } = parseFlags(rest, { file: { type: 'string' }, connect: { type: 'boolean' } }, usage);
    const file = given.file;
    const ignored: string[] = [];
    let loaded;
    try {
      loaded = loadSettingsWithSources({ env: io.env, ...(file ? { file } : {}), onIgnoredVariable: (variable) => ignored.push(variable) });
    } catch (err) {
      throw startFailure(err);
    }
    const { settings, sources } = loaded;
    table(
      io,
      ['PROPERTY', 'VALUE', 'SOURCE'],
      PROPERTY_DEFINITIONS.map((d) => {
        const value = readValue(settings, d);
        return [d.name, shown(value, !!d.secret && value !== undefined), sourceText(d.name, sources.get(d.name))];
      }),
    );
    io.out(`\nNODE_ENV=${io.env.NODE_ENV ?? '(unset)'}; log lines: ${settings.log.format ?? `${defaultLogFormat(settings.production)} (svc.log.format unset)`}\n`);
    for (const variable of ignored) io.out(`ignored: environment variable ${variable} (not an svc-connect property)\n`);
    const warnings = await startChecks(settings, loaded.configFile).catch((err: unknown) => {
      throw startFailure(err);
    });
    for (const { event, fields } of warnings) io.out(`warning: ${warningText(event, fields ?? {})}\n`);
    const count = warnings.length;
    io.out(`configuration OK: the server would start${count ? ` with ${count} warning${count === 1 ? '' : 's'}` : ''}\n`);
    if (!given.connect) return;
    const { storeClaimOf } = await import('../provider/create-provider.js');
    const connections = await checkConnections({ ...settings, claim: storeClaimOf(settings, false) });
    for (const check of connections) io.out(`${check.what}: ${check.ok ? 'OK' : 'FAILED'}: ${check.text}\n`);
    const failed = connections.filter((c) => !c.ok).map((c) => c.what);
    if (failed.length) throw new CliError(`cannot connect: ${failed.join(', ')} (see above)`);
  },
};

/**
 * The example server that `npm start` and `svc-connect serve` run: settings from `SVC_CONFIG` and the environment, the
 * embedded store unless Redis is configured, people signed in by `svc.authenticator.module` (else
 * the demo accounts while `svc.demo.enabled`), claims from `svc.claims.modules` (else the demo
 * modules while `svc.demo.enabled`).
 */
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

import Koa from 'koa';

import { createDemoClaimModules } from './demo/claim-modules.js';
import { SettingsError, startFailureReason } from './errors.js';
import { createApp } from './http/create-app.js';
import { createHttpServer, stopServing } from './http/http-server.js';
import { createSettingsLogger, defaultLogFormat } from './observability/pino-logger.js';
import { defaultBaseUrl } from './settings/definitions.js';
import { loadSettingsWithSources } from './settings/load.js';
import { warnIfConfigFileExposed } from './settings/secret-files.js';

/** Where the server reads its environment and writes what is not a log line (the CLI passes its own). */
export interface ServerIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

const processIo: ServerIo = { out: (text) => process.stdout.write(text), err: (text) => process.stderr.write(text), env: process.env };

/** How often the server checks that the process that started it is still there. */
const PARENT_CHECK_MS = 1000;

/**
 * Starts the example server: one `listening` line (URL, store, key source, warnings; on a terminal
 * also a plain sentence, never in JSON output), SIGHUP reloads the keys file, SIGINT/SIGTERM close
 * the server once the requests under way are answered, the store and the mailer (`stopping`, `stopped`) and exit 0; a
 * second one exits at once (`stop_forced`). A server whose parent
 * went away (`npm start` killed by a SIGHUP meant for the server) stops the same way (`parent_gone`),
 * so no orphan keeps serving keys it can no longer be told to reload.
 */
export async function runServer(io: ServerIo = processIo): Promise<void> {
  const ignored: string[] = [];
  const loaded = loadSettingsWithSources({ env: io.env, onIgnoredVariable: (variable) => ignored.push(variable) });
  const { sources } = loaded;
  let { settings } = loaded;
  const logger = createSettingsLogger(settings.log, settings.production);
  // Listened for before anything is awaited: unheard, a SIGHUP during the start (a reload sent while the server restarts)
  // would end the process, which systemd counts as a clean exit and does not restart. It reloads once the app is built.
  const hangup: { reload?: () => void; pending?: true } = {};
  process.on('SIGHUP', () => {
    logger.info('keys_reload_requested', { signal: 'SIGHUP' });
    if (hangup.reload) hangup.reload();
    else hangup.pending = true;
  });
  for (const variable of ignored) logger.warn('environment_variable_ignored', { variable, reason: 'not an svc-connect property' });
  warnIfConfigFileExposed(logger, loaded.configFile);
  // Listening first: with svc.port=0 the system chooses the port, which the default svc.base-url names. Until the app is
  // built, requests are answered 503.
  let serve: (req: IncomingMessage, res: ServerResponse) => unknown = starting;
  const server = createHttpServer((req, res) => serve(req, res));
  const port = await listen(server, 'svc.port', settings.port);
  if (sources.get('svc.base-url')?.kind === 'default') settings = { ...settings, baseUrl: defaultBaseUrl(port) };
  const demoModules = settings.demo.enabled && !settings.claims.modules;
  const app = await createApp(settings, { logger, claimModules: demoModules ? createDemoClaimModules() : [] });
  hangup.reload = () => void app.svc.reloadKeys();
  if (hangup.pending) hangup.reload();
  const { info } = app.svc;
  serve = app.callback();
  logger.info('listening', { port, url: settings.baseUrl, issuer: app.svc.paths.issuer, store: info.store, keys: info.keys, warnings: info.warnings });
  logger.flush?.();
  if ((settings.log.format ?? defaultLogFormat(settings.production)) === 'pretty') {
    const warned = info.warnings === 0 ? 'no warnings' : `${info.warnings} warning${info.warnings === 1 ? '' : 's'} above`;
    io.out(`svc-connect listening on http://localhost:${port}${app.svc.paths.basePath} (issuer ${app.svc.paths.issuer}, store ${info.store}, ${warned})\n`);
  }
  const opsPort = settings.ops.port;
  const opsServer = opsPort === undefined ? undefined : createHttpServer(new Koa().use(app.svc.operations).callback());
  if (opsServer && opsPort !== undefined) {
    logger.info('operations_listening', { host: settings.ops.host, port: await listen(opsServer, 'svc.ops.port', opsPort, { property: 'svc.ops.host', host: settings.ops.host }) });
    logger.flush?.();
  }
  let stopping = false;
  const stop = (signal: NodeJS.Signals | 'parent_gone'): void => {
    if (stopping) {
      if (signal === 'parent_gone') return;
      // A second signal: the requests still under way are cut, and the process ends as that signal would end it.
      logger.warn('stop_forced', { signal });
      // The app's logger: it writes the failure counts it still holds (lib/observability/repeated-failures.ts).
      app.svc.logger.flush?.();
      process.exit(128 + constants.signals[signal]);
    }
    stopping = true;
    logger.info('stopping', { signal });
    if (opsServer) stopServing(opsServer, () => undefined);
    stopServing(server, () => {
      void app.svc.close().then(
        () => {
          logger.info('stopped', { signal });
          logger.flush?.();
          process.exit(0);
        },
        () => process.exit(1),
      );
    });
    setTimeout(() => {
      logger.warn('stop_timeout', { signal, after_ms: 5000 });
      app.svc.logger.flush?.();
      process.exit(0);
    }, 5000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const lineage = ancestry();
  const watch = setInterval(() => {
    const now = ancestry();
    const gone = lineage.find((pid, i) => now[i] !== pid);
    if (gone === undefined) return;
    clearInterval(watch);
    logger.warn('parent_gone', { parent: gone, fix: 'run the server as its own process (svc-connect serve) so signals reach it' });
    stop('parent_gone');
  }, PARENT_CHECK_MS);
  watch.unref();
}

/** The answer while the app is built. */
const starting = (_req: IncomingMessage, res: ServerResponse): void => {
  const body = JSON.stringify({ error: 'temporarily_unavailable', error_description: 'the provider is starting' });
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'retry-after': '1' }).end(body);
};

/** What a failed listen means, by its error code. */
const LISTEN_FAULTS: Record<string, string> = {
  EADDRINUSE: 'is in use by another process',
  EACCES: 'needs privileges this process lacks',
};

/** What a failed listen means of the host it was asked on, by its error code: a fault of the host, not the port. */
const HOST_FAULTS: Record<string, string> = {
  EADDRNOTAVAIL: 'is not an address of this machine',
  ENOTFOUND: 'is a name that cannot be resolved',
  EAI_AGAIN: 'is a name that cannot be resolved',
};

/**
 * `server` listening on `port` (of `property`), on `at.host` when given, its port once it does, or a {@link SettingsError}
 * naming `property`, or `at.property` when the host is at fault, when it cannot.
 */
function listen(server: Server, property: string, port: number, at?: { property: string; host: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const refused = (err: NodeJS.ErrnoException): void => {
      const code = err.code ?? err.name;
      const hostFault = at && HOST_FAULTS[code];
      reject(
        hostFault
          ? new SettingsError(`${at.property} ${at.host} ${hostFault} (${code})`, [at.property])
          : new SettingsError(`${property} ${port} ${LISTEN_FAULTS[code] ?? 'cannot be listened on'} (${code})`, [property]),
      );
    };
    server.once('error', refused).listen(port, at?.host, () => {
      server.off('error', refused);
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

/**
 * The process ids from the parent up to init, from `/proc` (Linux: `npm start` runs the server under npm, sh and tsx,
 * and npm may die while the others stay); elsewhere the parent alone.
 */
function ancestry(): number[] {
  const chain = [process.ppid];
  for (let pid = process.ppid; pid > 1 && chain.length < 32; ) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      break;
    }
    // `pid (comm) state ppid …`: the command may hold spaces and parentheses, so read after the last one.
    pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    chain.push(pid);
  }
  return chain;
}

/** Reports a failed start on stderr (the message names the property) and exits 1. */
export function exitOnStartFailure(err: unknown, io: Pick<ServerIo, 'err'> = processIo): never {
  io.err(`svc-connect: cannot start: ${startFailureReason(err)}\n`);
  process.exit(1);
}

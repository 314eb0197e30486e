/**
 * The example server that `npm start` and `svc-connect serve` run: settings from `SVC_CONFIG` and the environment, the
 * embedded store unless Redis is configured, people signed in by `svc.authenticator.module` (else
 * the demo accounts while `svc.demo.enabled`), claims from `svc.claims.modules` (else the demo
 * modules while `svc.demo.enabled`).
 */
import { createDemoClaimModules } from './demo/claim-modules/index.js';
import { SettingsError } from './errors.js';
import { createApp } from './http/create-app.js';
import { createSettingsLogger } from './observability/pino-logger.js';
import { loadSettings } from './settings/load.js';

/**
 * Starts the example server: one `listening` line (URL, store, key source, warnings), SIGHUP reloads
 * the keys file, SIGINT/SIGTERM close the server, the store and the mailer (`stopping`, `stopped`)
 * and exit 0.
 */
export async function runServer(): Promise<void> {
  const ignored: string[] = [];
  const settings = loadSettings({ onIgnoredVariable: (variable) => ignored.push(variable) });
  const logger = createSettingsLogger(settings);
  for (const variable of ignored) logger.warn('environment_variable_ignored', { variable, reason: 'not an svc-connect property' });
  const demoModules = settings.demo.enabled && !settings.claims.modules;
  const app = await createApp(settings, { logger, claimModules: demoModules ? createDemoClaimModules() : [] });
  const { info } = app.svc;
  const server = app.listen(settings.port, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : settings.port;
    logger.info('listening', { port, url: settings.baseUrl, issuer: app.svc.paths.issuer, store: info.store, keys: info.keys, warnings: info.warnings });
    logger.flush?.();
    const warned = info.warnings === 0 ? 'no warnings' : `${info.warnings} warning${info.warnings === 1 ? '' : 's'} above`;
    process.stdout.write(`svc-connect listening on http://localhost:${port}${app.svc.paths.basePath} (issuer ${app.svc.paths.issuer}, store ${info.store}, ${warned})\n`);
  });
  // SIGHUP: read svc.keys.file again (a key rotation step); the result is logged either way.
  process.on('SIGHUP', () => {
    logger.info('keys_reload_requested', { signal: 'SIGHUP' });
    void app.svc.reloadKeys();
  });
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info('stopping', { signal });
    // Requests under way finish; idle keep-alive connections are closed now.
    server.close(() => {
      void app.svc.close().then(
        () => {
          logger.info('stopped', { signal });
          logger.flush?.();
          process.exit(0);
        },
        () => process.exit(1),
      );
    });
    server.closeIdleConnections();
    setTimeout(() => {
      logger.warn('stop_timeout', { signal, after_ms: 5000 });
      logger.flush?.();
      process.exit(0);
    }, 5000).unref();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** Reports a failed start on stderr (the message names the property) and exits 1. */
export function exitOnStartFailure(err: unknown): never {
  if (err instanceof SettingsError || err instanceof TypeError) {
    process.stderr.write(`svc-connect: cannot start: ${err.message}\n`);
  } else {
    process.stderr.write(`svc-connect: cannot start: ${err instanceof Error ? err.name : 'error'}\n`);
  }
  process.exit(1);
}

/**
 * The bundled example server (`npm start`): settings from `SVC_CONFIG` and the environment, the
 * embedded store unless Redis is configured, the demo accounts unless `svc.demo.enabled=false`.
 */
import { createApp, createPinoLogger, loadSettings, SettingsError } from '../lib/index.js';
import { isMainModule } from '../lib/is-main.js';
import { createDemoClaimModules } from './claim-modules/index.js';

/** Starts the example server and stops it on SIGINT/SIGTERM. */
export async function runServer(): Promise<void> {
  const settings = loadSettings();
  const logger = createPinoLogger({ level: settings.log.level });
  const app = await createApp(settings, { logger, claimModules: settings.demo.enabled ? createDemoClaimModules() : [] });
  const server = app.listen(settings.port, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : settings.port;
    logger.info('listening', { port, issuer: `${settings.baseUrl}/oidc/v1` });
    logger.flush?.();
    process.stdout.write(`svc-connect listening on http://localhost:${port} (issuer ${settings.baseUrl}/oidc/v1)\n`);
  });
  const stop = (): void => {
    server.close(() => {
      void app.svc.close().then(() => process.exit(0));
    });
    setTimeout(() => process.exit(0), 5000).unref();
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

if (isMainModule(import.meta.url)) {
  runServer().catch(exitOnStartFailure);
}

/** Bench server: svc-connect (createApp) with the demo accounts and claim modules. */
import { writeFileSync } from 'node:fs';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { createApp, createPinoLogger, issueInitialAccessToken, loadSettings } from '../../lib/index.js';
import { benchClient, type ServerSpec } from './common.js';
import { countRoundTrips, serveStats, type RoundTrips } from './round-trips.js';

const spec = JSON.parse(process.env.BENCH_SERVER ?? '{}') as ServerSpec;
const settings = loadSettings({
  env: {},
  properties: {
    'svc.base-url': `http://127.0.0.1:${spec.port}`,
    'svc.port': spec.port,
    'svc.cookies.keys': spec.cookieKey,
    'svc.redis.key-prefix': spec.keyPrefix,
    'svc.fetch.allow-private-network': true,
    // Every flow of the driver signs in from 127.0.0.1, eight at a time: a production threshold would
    // lock that one address out under load. The throttle does the same work below any threshold.
    'svc.login.lockout-threshold': 1000,
    ...(spec.redisUrl ? { 'svc.redis.url': spec.redisUrl } : {}),
  },
});
const app = await createApp(settings, {
  jwks: spec.jwks,
  clients: [benchClient(spec.encryptionJwk, spec.signingAlg)],
  claimModules: createDemoClaimModules(),
  // One line per request, as in production, written where it costs least.
  logger: createPinoLogger({ level: 'info', destination: '/dev/null' }),
});
const counters: RoundTrips = { roundTrips: 0, commands: 0 };
serveStats(counters);
const store = app.svc.store as { client?: Parameters<typeof countRoundTrips>[0] };
if (store.client) countRoundTrips(store.client, counters);
if (spec.iats && spec.iatFile) {
  const tokens: string[] = [];
  for (let i = 0; i < spec.iats; i += 1) tokens.push((await issueInitialAccessToken(app.svc.provider)).token);
  writeFileSync(spec.iatFile, JSON.stringify(tokens));
}
const server = app.listen(spec.port, '127.0.0.1', () => process.stdout.write(`ready ${spec.port}\n`));
process.on('SIGTERM', () => server.close(() => void app.svc.close().then(() => process.exit(0))));

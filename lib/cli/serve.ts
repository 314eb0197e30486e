import { flags, type Command } from './common.js';

const usage = `Usage: svc-connect serve

Runs the example server: settings from SVC_CONFIG (.properties or .json) and the environment
(see docs/configuration.md); the embedded store unless svc.redis.url or svc.redis.cluster-nodes is
set; the demo accounts and demo page unless svc.demo.enabled=false.`;

/** `svc-connect serve`. */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the example server',
  usage,
  async run(argv) {
    flags(argv, {}, usage);
    const { runServer, exitOnStartFailure } = await import('../server.js');
    await runServer().catch(exitOnStartFailure);
  },
};

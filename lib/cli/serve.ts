import { parseFlags, type Command } from './common.js';

const usage = `Usage: svc-connect serve

Runs the example server: settings from SVC_CONFIG (.properties or .json) and the environment
(see docs/configuration.md); the embedded store unless svc.redis.url or svc.redis.cluster-nodes is
set; the demo accounts and demo page unless svc.demo.enabled=false.

The production command: run it as its own process (node .../dist/lib/cli.js serve, or the systemd
unit examples/systemd/svc-connect.service), not under npm or npx, so signals reach it: SIGHUP
reloads svc.keys.file (keys_reloaded), SIGTERM and SIGINT stop it. Relative paths of the
configuration file resolve against its folder, the environment's against the working directory.`;

/** `svc-connect serve`. */
export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the server (the production command)',
  usage,
  async run(argv, io) {
    parseFlags(argv, {}, usage);
    // A SIGHUP while the server's code loads would end the process; the keys file is read after it, so it needs nothing.
    const early = (): void => undefined;
    process.on('SIGHUP', early);
    try {
      const { runServer, exitOnStartFailure } = await import('../server.js');
      const err = (text: string): void => io.err?.(text);
      await runServer({ out: (text) => io.out(text), err, env: io.env }).catch((failure: unknown) => exitOnStartFailure(failure, { err }));
    } finally {
      process.off('SIGHUP', early);
    }
  },
};

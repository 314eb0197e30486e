import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type Koa from 'koa';

/** A host app's HTTP server on a free loopback port, listening before its Koa app exists (the app's settings name its URL). */
export interface HostServer {
  base: string;
  /** Serves every request with `app`. */
  serve(app: Koa): void;
  close(): Promise<void>;
}

/** Starts a {@link HostServer}. */
export async function startHostServer(): Promise<HostServer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve(app) {
      const callback = app.callback();
      server.on('request', (req, res) => void callback(req, res));
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

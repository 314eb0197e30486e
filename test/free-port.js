import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The first port of the kernel's ephemeral range, which listen(0) and outgoing connections draw from. */
function ephemeralFloor() {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

/** Whether `port` can be bound on every address right now. */
function bindable(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

const FLOOR = 10_000;

/**
 * A free TCP port for a process a test starts, drawn at random below the ephemeral range. A port that
 * listen(0) reported free goes back to that range, where another process's listen(0) or outgoing
 * connection may take it before the child binds it; the test would then talk to a stranger.
 * @returns {Promise<number>}
 */
export async function freePort() {
  const ceiling = ephemeralFloor();
  for (;;) {
    const port = FLOOR + Math.floor(Math.random() * (ceiling - FLOOR));
    if (await bindable(port)) return port;
  }
}

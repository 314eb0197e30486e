import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** The complete commands (RESP arrays of bulk strings, as clients send them) at the start of `data`: where each ends and its arguments. */
function commandsIn(data: Buffer): { end: number; args: string[] }[] {
  const found: { end: number; args: string[] }[] = [];
  let at = 0;
  const header = (): number | undefined => {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const n = Number(data.toString('latin1', at + 1, eol));
    at = eol + 2;
    return n;
  };
  for (;;) {
    const count = header();
    if (count === undefined) return found;
    const args: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const length = header();
      if (length === undefined || at + length + 2 > data.length) return found;
      args.push(data.toString('latin1', at, at + length));
      at += length + 2;
    }
    found.push({ end: at, args });
  }
}

/** A TCP relay in front of one Redis port, which a test tells to lose or delay what passes (a network fault). */
export interface RedisRelay {
  /** The relay's own port on 127.0.0.1. */
  port: number;
  /**
   * Lets the client's commands reach Redis up to and including the first that names `key`, then drops everything both
   * ways on that connection (the answer is lost, as in a network partition) until {@link RedisRelay.drop} closes it;
   * later connections relay. Resolves once that command was relayed. Matched by key, not by "the next bytes": another
   * connection of the client (a cache subscriber) may send first.
   */
  cutAfter(key: string): Promise<void>;
  /** Delays by `ms` what Redis sends on the connections made from now on (a client whose network or host is slow). */
  lag(ms: number): void;
  /** Closes every connection relayed so far. */
  drop(): void;
  close(): void;
}

/** Starts a {@link RedisRelay} on a port of its own to the Redis at 127.0.0.1:`port`. */
export async function startRelay(port: number): Promise<RedisRelay> {
  let watched: { key: string; relayed: () => void } | undefined;
  let lagMs = 0;
  const live = new Set<Socket>();
  const server = createServer((inbound) => {
    const outbound = connect(port, '127.0.0.1');
    const lagged = lagMs;
    let cut = false;
    let partial = Buffer.alloc(0);
    live.add(inbound).add(outbound);
    inbound.on('data', (chunk: Buffer) => {
      if (cut) return;
      const data = Buffer.concat([partial, chunk]);
      const commands = commandsIn(data);
      const key = watched?.key;
      const hit = key === undefined ? undefined : commands.find(({ args }) => args.includes(key));
      if (!hit) {
        outbound.write(chunk);
        partial = data.subarray(commands.at(-1)?.end ?? 0);
        return;
      }
      outbound.write(chunk.subarray(0, hit.end - partial.length));
      cut = true;
      watched?.relayed();
      watched = undefined;
    });
    const pass = (chunk: Buffer): void => void (cut || inbound.write(chunk));
    outbound.on('data', (chunk: Buffer) => (lagged ? setTimeout(pass, lagged, chunk) : pass(chunk)));
    for (const [a, b] of [[inbound, outbound], [outbound, inbound]] as const) {
      a.on('error', () => b.destroy());
      a.on('close', () => b.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    cutAfter: (key) => new Promise<void>((relayed) => void (watched = { key, relayed })),
    lag: (ms) => void (lagMs = ms),
    drop: () => {
      for (const socket of live) socket.destroy();
      live.clear();
    },
    close: () => server.close(),
  };
}

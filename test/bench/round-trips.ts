/**
 * Counts what a bench server's Redis client sends: one round trip per command sent on its own, one
 * per pipeline or MULTI/EXEC (ioredis hands every queued command of a pipeline to `sendCommand` with
 * the same pipeline stream). The count is read by the bench runner over the IPC channel.
 */
import type { Cluster, Redis } from 'ioredis';

/** Live counters of one server process. */
export interface RoundTrips {
  roundTrips: number;
  commands: number;
}

/** Wraps `client.sendCommand` (this instance only) to count round trips and commands. */
export function countRoundTrips(client: Redis | Cluster, into: RoundTrips): void {
  const pipelines = new WeakSet<object>();
  const original = client.sendCommand.bind(client) as (command: unknown, stream?: unknown, node?: unknown) => unknown;
  (client as { sendCommand: unknown }).sendCommand = (command: unknown, stream?: unknown, node?: unknown): unknown => {
    into.commands += 1;
    const pipeline = stream as { isPipeline?: boolean } | undefined;
    if (!pipeline?.isPipeline) into.roundTrips += 1;
    else if (!pipelines.has(pipeline)) {
      pipelines.add(pipeline);
      into.roundTrips += 1;
    }
    return original(command, stream, node);
  };
}

/** Answers the runner's `{ stats: true }` IPC messages with the counters. */
export function serveStats(counters: RoundTrips): void {
  process.on('message', (message: { stats?: boolean }) => {
    if (message.stats) process.send?.({ ...counters });
  });
}

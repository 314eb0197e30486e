import type { ChainableCommander } from 'ioredis';

/** The store's Lua scripts, as ioredis's `defineCommand` adds them to the client. */
export interface ScriptCommands {
  svcConsume(key: string, now: number, marker: string): Promise<number>;
  svcUnconsume(key: string): Promise<number>;
  svcUnconsumeOwn(key: string, marker: string): Promise<number>;
  svcAttemptCheck(key: string, consecutive: number, maxMs: number): Promise<number>;
  svcAttemptFail(key: string, rank: string, expiry: string, floor: string, consecutive: number, maxMs: number, limit: number, windowMs: number, baseMs: number, strikeMs: number, runMs: number, cap: number, expendable: 0 | 1): Promise<number>;
}

/** A pipeline with the store's scripts (ioredis adds defined commands to pipelines and transactions too). */
export type Pipe = ChainableCommander & { [K in keyof ScriptCommands]: (...args: Parameters<ScriptCommands[K]>) => Pipe };

/** Adds one command to a pipeline. */
export type AddCommand = (pipeline: Pipe) => void;

/** One command's answer in a pipeline: `[error, result]` as ioredis gives it. */
export type Answer = [Error | null, unknown];

/** A record as the request's deferred writes leave it: the stored string and its TTL, or `null` (deleted). */
export type PendingRecord = { value: string; ttl: number } | null;

interface Queued {
  add: AddCommand;
  resolve: (answer: Answer) => void;
}

/**
 * The store work of one request (see `SvcStore.batch`): the flow models' deferred writes, which its
 * reads see, and its remembered reads (a record read twice or prefetched costs one command).
 * Commands sent in the same tick go in one pipeline ({@link RequestBatch.send}).
 */
export class RequestBatch {
  /** Record key → what the request's deferred writes leave there, in write order. */
  readonly records = new Map<string, PendingRecord>();
  /** Other deferred writes (indexes), in order. */
  readonly commands: AddCommand[] = [];
  /** Record key → what removes its indexes, sent with its deletion (dropped if the record is written again). */
  readonly unindex = new Map<string, AddCommand>();
  /** Deferred writes whose failure fails nothing else (a success's forgetting of failures): only logged. */
  readonly lenient: AddCommand[] = [];
  /** Record key → the stored string read in this request (`null`: not found), or the read under way. */
  readonly reads = new Map<string, Promise<string | null>>();
  /** Session uid → record key, for sessions written or found in this request. */
  readonly uids = new Map<string, string>();
  /** Set once the request's writes were sent: later store calls act at once. */
  closed = false;
  private queue: Queued[] = [];

  constructor(private readonly dispatch: (commands: AddCommand[]) => Promise<Answer[]>) {}

  get pending(): boolean {
    return this.records.size > 0 || this.commands.length > 0 || this.lenient.length > 0;
  }

  /** Sends one command with the others of this tick in one pipeline; resolves its answer (errors are answers too). */
  send(add: AddCommand): Promise<Answer> {
    return new Promise((resolve) => {
      this.queue.push({ add, resolve });
      if (this.queue.length === 1) process.nextTick(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    const queued = this.queue;
    this.queue = [];
    let answers: Answer[];
    try {
      answers = await this.dispatch(queued.map((q) => q.add));
    } catch (err) {
      answers = queued.map(() => [err as Error, undefined]);
    }
    queued.forEach((q, i) => q.resolve(answers[i] ?? [new Error('no answer'), undefined]));
  }

  /** Takes the deferred writes (record writes collapsed to the last one per key); with `writesOnly` the deletions stay. */
  take(writesOnly = false): { records: [string, PendingRecord][]; commands: AddCommand[]; lenient: AddCommand[]; unindex: AddCommand[] } {
    const out = { records: [...this.records].filter(([, r]) => !writesOnly || r), commands: [...this.commands], lenient: [...this.lenient], unindex: [] as AddCommand[] };
    for (const [key, record] of out.records) {
      const unindex = this.unindex.get(key);
      if (unindex && !record) out.unindex.push(unindex);
      this.unindex.delete(key);
      this.records.delete(key);
    }
    this.commands.length = 0;
    this.lenient.length = 0;
    return out;
  }
}

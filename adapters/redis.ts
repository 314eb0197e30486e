import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { ConnectionOptions } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';

import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';

import { AlreadyConsumedError, StoreRecordUnreadableError, StoreUnavailableError } from '../lib/errors.js';
import { describeFailure, silentLogger, type Logger } from '../lib/logger.js';
import { firstUnlikeNode, REDIS_DEFAULTS, type ClusterNode } from '../lib/settings/types.js';
import { refOf, type StoreInventory } from './inventory.js';
import { RequestBatch, type AddCommand, type Answer, type PendingRecord, type Pipe, type ScriptCommands } from './redis-batch.js';
import { attemptBucket, attemptCounterKey, BUCKET_TAGS, counterCapOf, keySlot } from './redis-attempt-keys.js';
import { createRedisInventory, nodeName } from './redis-inventory.js';
import { createRecordCache, dropInProcess, type RecordCache } from './redis-record-cache.js';
import { decodeRecord, encodeRecord, sameButExpiry } from './redis-records.js';
import { ATTEMPT_CHECK, ATTEMPT_FAIL, CONSUME, INDEX_ADD, UNCONSUME, UNCONSUME_OWN, UNINDEX } from './redis-scripts.js';
import { CROWDED_SHARE, FLOW_HEADROOM, FLOW_MODELS, GRANTABLE_MODELS, RUN_MEMORY_SECONDS, startsFlow, STRIKE_MEMORY_SECONDS, type AttemptCounter, type AttemptRule, type SvcStore } from './store.js';

/** Options of {@link createRedisStore}. */
export interface RedisStoreOptions {
  /** Standalone Redis URL (`redis://` or `rediss://`). */
  url?: string;
  /**
   * Redis Cluster seed nodes; takes precedence over `url`. Every node the Cluster names is reached with the first
   * one's user name and password, and over TLS when it is marked `tls`, alike in every item.
   */
  clusterNodes?: ClusterNode[];
  /**
   * TLS options of the connections, for a `rediss://` URL or Cluster nodes marked `tls` only (refused beside plain ones),
   * e.g. `{ ca }` for a private certificate authority; without them, certificates are verified against Node's CAs
   * (`NODE_EXTRA_CA_CERTS`).
   */
  tls?: ConnectionOptions;
  /** Prefix of every key. @default "svc:" */
  keyPrefix?: string;
  /** Longest wait for one store operation before it fails with 503 `server_error`, in ms. @default 800 */
  operationTimeoutMs?: number;
  /** Where connection faults are logged (state changes only, never payloads). */
  logger?: Logger;
  /**
   * Models kept in an in-process cache that every process on the store invalidates at once (pub/sub
   * on `{prefix}invalidate`): read on nearly every request, written rarely. `[]` turns it off. Writes of these and of
   * the default models publish their invalidation whatever this process caches; list a model beyond the defaults in
   * every process on the store.
   * @default ["Client", "ClientSuspension", "ClientDeletion", "SessionRevocation", "RegistrationAccessTokenReissue"]
   */
  cachedModels?: string[];
  /**
   * How long one look at the masters' `INFO memory` stands, in ms: while a master holds nine tenths of its `maxmemory`
   * (what this process admitted since the look counted in), a new interaction nobody signed in to and a new pushed
   * request are refused (503), so people mid-flow finish.
   * @default 1000
   */
  headroomCheckMs?: number;
}

/** The models every process caches unless told otherwise; their writes publish an invalidation in every process. */
// RegistrationAccessTokenReissue: a client's reissue mark, read with each of its registration access tokens (and absent
// for nearly every client), so a client's own registration requests cost the round trips they did before the reissue.
const DEFAULT_CACHED_MODELS = ['Client', 'ClientSuspension', 'ClientDeletion', 'SessionRevocation', 'RegistrationAccessTokenReissue'];

/** The host and port of a Redis store as logged: from its URL (never the credentials), or its Cluster seed nodes. */
function redisAddress(options: RedisStoreOptions): { host?: string; port?: number } {
  if (options.clusterNodes?.length) return { host: options.clusterNodes.map((n) => `${n.host}:${n.port}`).join(',') };
  try {
    const url = new URL(options.url ?? '');
    return { host: url.hostname, port: Number(url.port || 6379) };
  } catch {
    return {};
  }
}

type Client = (Redis | Cluster) & ScriptCommands;

/** The Redis expiry of a lifetime: 0 (none) only when absent; zero or less gets the shortest, 1 s (already past its `exp`). */
function ttlOf(expiresIn: number | undefined): number {
  if (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn)) return 0;
  return expiresIn > 0 ? Math.ceil(expiresIn) : 1;
}

const setRecord = (key: string, value: string, ttl: number): AddCommand => (p) => void (ttl ? p.set(key, value, 'EX', ttl) : p.set(key, value));

/** How many sessions written or found here are remembered by uid (a hint, checked against the record). */
const UID_MEMO_ENTRIES = 50_000;

/** A script Redis takes for one that may write (a shebang without `no-writes`): refused where a write would be. */
const WRITE_PROBE = '#!lua\nreturn 1';

/** How long an undo of a consume left unanswered is sent again while the connection is down (see `undoLateConsume`). */
const UNDO_WINDOW_MS = 10 * 60_000;

/** At most so many undos wait for the connection: an outage does not grow the process without bound. */
const UNDO_PENDING_MAX = 10_000;

/** The cause of an operation the circuit breaker refused: it never reached Redis. */
const NOT_SENT = new Error('store circuit breaker open: not sent');

/** What the masters' `INFO memory` says: the largest share of its `maxmemory` one holds, and each bucket's counter cap (0: none). */
interface MemoryState {
  fill: number;
  counterCap: number;
  /** The bytes the master nearest nine tenths of its `maxmemory` may take until then (`Infinity`: no limit known). */
  room: number;
  /** The bytes of strangers' records this process had admitted when it asked (see `keepHeadroom`). */
  admittedAt: number;
}

/** The bytes a record is counted to take in Redis: its key and value, a quarter more for the allocator's size classes, and its entries. */
const recordCost = (key: string, value: string): number => Math.ceil((Buffer.byteLength(key) + Buffer.byteLength(value)) * 1.25) + 128;


/**
 * The Redis store: all provider state in a standalone Redis or a Redis Cluster, shared by any number
 * of provider processes. Keys are `{prefix}{Model}:{sha256(id)}` and records hold no `jti`
 * (`redis-records.ts`), so a dump of Redis yields no usable token. Every script touches one key, or (a failed
 * attempt's) keys of one hash tag: atomic and Cluster-safe. Clients and their disabling and deletion marks are cached in every process and
 * invalidated everywhere by pub/sub. While Redis is unreachable, operations fail within
 * `operationTimeoutMs` with a 503 `server_error`.
 */
export function createRedisStore(options: RedisStoreOptions): SvcStore & { readonly client: Redis | Cluster; readonly inventory: StoreInventory } {
  const prefix = options.keyPrefix ?? REDIS_DEFAULTS.keyPrefix;
  const timeoutMs = options.operationTimeoutMs ?? REDIS_DEFAULTS.operationTimeoutMs;
  const logger = options.logger ?? silentLogger;
  const connection: RedisOptions = {
    // A test store's long operation timeout also covers a connection set up on a busy machine.
    connectTimeout: Math.max(1000, timeoutMs),
    maxRetriesPerRequest: 0,
    retryStrategy: (times) => Math.min(times * 100, 1000),
    // A dropped connection (close while Redis is away or silent, a Cluster's slot-refresh connection) is destroyed
    // at once. ioredis's default waits up to 2 s for the peer on a timer that holds the process open (a CLI check
    // exits that much later), and when dropped between reconnects waits on a socket already closed (redis/ioredis#2169).
    disconnectTimeout: 0,
  };
  let client: Client;
  const clustered = !!options.clusterNodes?.length;
  if (options.clusterNodes?.length) {
    if (firstUnlikeNode(options.clusterNodes) > 0) throw new TypeError('createRedisStore: every clusterNodes item must carry the same username, password and tls');
    const { username, password, tls } = options.clusterNodes[0] as ClusterNode;
    if (options.tls && !tls) throw new TypeError('createRedisStore: options.tls is given but the clusterNodes are not marked tls: they would be reached in plain text');
    Object.assign(connection, username ? { username } : {}, password ? { password } : {}, tls ? { tls: { ...options.tls } } : {});
    client = new Cluster(options.clusterNodes.map(({ host, port }) => ({ host, port })), {
      redisOptions: connection,
      clusterRetryStrategy: (times) => Math.min(times * 100, 1000),
      slotsRefreshTimeout: 1000,
      // A command whose node connection closed may have run there: ioredis would send it again (a consume then finds
      // its own mark, a failed sign-in counts twice), so it fails as on a standalone server, where nothing is re-sent.
      retryDelayOnFailover: 0,
      scaleReads: 'master',
      // Over TLS a seed is reached by its name, so its certificate is verified for that name, not for an address
      // whoever answers DNS chose; the nodes then are reached, and verified, by the endpoints the Cluster announces.
      ...(tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
    }) as Client;
  } else if (options.url) {
    if (options.tls && !/^rediss:/i.test(options.url)) throw new TypeError('createRedisStore: options.tls is given but the url is not rediss://: it would be reached in plain text');
    client = new Redis(options.url, { ...connection, ...(options.tls ? { tls: options.tls } : {}) }) as Client;
  } else {
    throw new TypeError('createRedisStore: options.url or options.clusterNodes is required');
  }
  const scripts: [string, string, number][] = [
    ...Object.entries({ svcConsume: CONSUME, svcUnconsume: UNCONSUME, svcUnconsumeOwn: UNCONSUME_OWN, svcAttemptCheck: ATTEMPT_CHECK }).map(([name, lua]): [string, string, number] => [name, lua, 1]),
    ['svcAttemptFail', ATTEMPT_FAIL, 4],
  ];
  for (const [name, lua, numberOfKeys] of scripts) client.defineCommand(name, { numberOfKeys, lua });

  const masters = (): Redis[] => (clustered ? (client as Cluster).nodes('master') : [client as Redis]);

  const at = redisAddress(options);
  const causeOf = (err: unknown): ReturnType<typeof describeFailure> => describeFailure(err, at);
  let healthy = true;
  /** Redis left an operation unanswered with its connection up (a frozen server): an outage no connection event ends. */
  let stalled = false;
  /** While the connection is down, its last error: the cause of every operation failing meanwhile. */
  let connectionError: unknown;
  const outage = (err: Error): void => {
    if (healthy) logger.error('store_unavailable', { store: 'redis', name: err.name, ...causeOf(err) });
    healthy = false;
  };
  const recovered = (): void => {
    if (!healthy) logger.info('store_recovered', { store: 'redis', host: at.host, port: at.port });
    healthy = true;
    stalled = false;
  };
  client.on('error', (err: Error) => {
    outage(err);
    connectionError = err;
  });
  client.on('ready', () => {
    recovered();
    connectionError = undefined;
  });

  // Circuit breaker: once Redis is found unavailable, operations fail at once for BREAKER_MS (one probe
  // at a time goes through), so a request fails within one timeout, not one per operation.
  const BREAKER_MS = 2000;
  let openUntil = 0;
  let probing = false;

  // Our own timer, not ioredis's `commandTimeout`: that starts only when a node connection takes the command,
  // so on a Cluster it does not bound one waiting in the offline queue or re-sent after CLUSTERDOWN.
  const attempt = async <T>(operation: () => Promise<T>): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        operation(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const err = new Error('store operation timed out');
            if (client.status === 'ready') {
              stalled = true;
              outage(err);
            }
            reject(err);
          }, timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };

  /**
   * oidc-provider's own errors as they are; the rest → 503, opening the breaker unless Redis answered the command
   * with an error (a full `noeviction` server refusing a write): it answers at once, and serves reads meanwhile.
   */
  const failure = (err: unknown): Error => {
    if (err instanceof errors.OIDCProviderError) return err;
    if ((err as { name?: unknown } | undefined)?.name !== 'ReplyError') openUntil = Date.now() + BREAKER_MS;
    return new StoreUnavailableError({ cause: connectionError ?? err, where: at });
  };

  const run = async <T>(operation: () => Promise<T>, timed = true, allAnswered: (result: T) => boolean = () => true): Promise<T> => {
    const open = Date.now() < openUntil;
    if (open && probing) throw new StoreUnavailableError({ cause: connectionError ?? NOT_SENT, where: at });
    if (open) probing = true;
    try {
      const result = await (timed ? attempt(operation) : operation());
      // Only the probe closes the breaker, and only when everything it sent was answered (on a Cluster
      // an operation that succeeded on another node says nothing about the node that failed).
      if (open && allAnswered(result)) openUntil = 0;
      if (stalled && allAnswered(result)) recovered();
      return result;
    } catch (err) {
      if (err instanceof errors.OIDCProviderError) {
        // oidc-provider's errors mean the store answered; our own refusal of a nested operation does not.
        if (open && !(err instanceof StoreUnavailableError)) openUntil = 0;
        throw err;
      }
      throw failure(err);
    } finally {
      if (open) probing = false;
    }
  };

  /**
   * Sends commands together: one pipeline on a standalone server (`whole`: one MULTI, applied all or none), one per
   * command on a Cluster (keys in different slots).
   */
  const dispatch = (commands: AddCommand[], whole = false): Promise<Answer[]> =>
    run(() => exchange(commands, whole), !clustered, (answers) => answers.every(([err]) => !err));
  const pipe = async (commands: AddCommand[], whole = false): Promise<Answer[]> => {
    const pipeline = (whole ? client.multi() : client.pipeline()) as Pipe;
    // In a MULTI a script goes as its text (EVAL): ioredis sends it by SHA once its text went on the connection, also in
    // a MULTI the server discarded (OOM), and a SHA the server lacks fails alone at EXEC while the rest applies.
    if (whole) for (const [name, lua, keys] of scripts) Object.assign(pipeline, { [name]: (...args: unknown[]) => pipeline.eval(lua, keys, ...(args as string[])) });
    for (const add of commands) add(pipeline);
    return (await pipeline.exec()) ?? [];
  };
  /** {@link dispatch} without the breaker (and on a standalone server without the timeout). */
  const exchange = async (commands: AddCommand[], whole = false): Promise<Answer[]> => {
    if (!clustered) return pipe(commands, whole);
    // Each command goes to its own node, with its own timeout: a node that is away fails only its
    // own commands, and the others' answers (a reservation made, a write landed) count as made.
    return Promise.all(
      commands.map((add) =>
        attempt(async (): Promise<Answer> => (await pipe([add]))[0] ?? [new Error('no answer'), undefined])
          .catch((err: unknown): Answer => [err as Error, undefined]),
      ),
    );
  };

  const resultOf = async <T>([err, result]: Answer): Promise<T> => {
    if (err) throw failure(err);
    return result as T;
  };

  const scope = new AsyncLocalStorage<RequestBatch>();
  const currentBatch = (): RequestBatch | undefined => {
    const batch = scope.getStore();
    return batch && !batch.closed ? batch : undefined;
  };
  /** One command: with the others of this tick inside a request, on its own otherwise. */
  const send = async <T>(add: AddCommand): Promise<T> => {
    const batch = currentBatch();
    return resultOf<T>(batch ? await batch.send(add) : ((await dispatch([add]))[0] as Answer));
  };

  const flush = async (batch: RequestBatch, writesOnly = false): Promise<void> => {
    if (!batch.pending) return;
    const { records, commands, lenient, unindex } = batch.take(writesOnly);
    if (!records.length && !commands.length && !lenient.length) return;
    const writes: AddCommand[] = [];
    for (const [key, record] of records) if (record) writes.push(setRecord(key, record.value, record.ttl));
    writes.push(...commands);
    const deleted = records.filter(([, r]) => r === null).map(([key]) => key);
    const deletions: AddCommand[] = deleted.length && !clustered ? [(p) => void p.del(...deleted)] : deleted.map((key): AddCommand => (p) => void p.del(key));
    deletions.push(...unindex);
    // Its deletions (the interaction a resume ends, the session it replaces) land only with its writes, or a request
    // answered 503 (a full Redis refusing the writes, taking deletions) could not be sent again: on a standalone server
    // in one MULTI, on a Cluster once every write was answered.
    const whole = deletions.length > 0 && writes.length > 0;
    const adds = whole && clustered ? writes : [...deletions, ...writes];
    // Not a MULTI: with the commands of this tick (`SvcStore.flush`'s read), in one pipeline after them.
    const [answers, settled]: [Answer[], Answer[]] = whole && !clustered
      ? await Promise.all([dispatch(adds, true), lenient.length ? dispatch(lenient).catch((err: unknown) => lenient.map((): Answer => [err as Error, undefined])) : []])
      : await Promise.all([...adds, ...lenient].map((add) => batch.send(add))).then((all) => [all.slice(0, adds.length), all.slice(adds.length)]);
    const unsettled = settled.filter(([err]) => err);
    if (unsettled.length) logger.warn('attempt_settle_failed', { store: 'redis', count: unsettled.length, ...causeOf(unsettled[0]?.[0]) });
    for (const answer of answers) await resultOf(answer);
    if (adds === writes) for (const answer of await dispatch(deletions)) await resultOf(answer);
  };

  const cachedModels = new Set(options.cachedModels ?? DEFAULT_CACHED_MODELS);
  // Written with an invalidation even where this process caches none: another process on the store may cache them.
  const invalidated = new Set([...DEFAULT_CACHED_MODELS, ...cachedModels]);
  const channel = `${prefix}invalidate`;
  const cache: RecordCache | undefined = cachedModels.size
    ? createRecordCache({ client, clusterNodes: options.clusterNodes, connection, channel, logger, address: at })
    : undefined;
  const cacheName = (key: string): string => key.slice(prefix.length);
  // On a Cluster, publishes again on every node, where other processes subscribe (each on the first node of its own
  // seed list): the MULTI's own PUBLISH crosses the cluster bus only after the write is answered. Best effort,
  // waiting at most the operation timeout (a fixed shorter wait left a busy machine's reader the old record).
  const publishNearSubscribers = async (name: string): Promise<void> => {
    const published = (client as Cluster).nodes('all').map((node) =>
      node.publish(channel, name).then(
        () => undefined,
        (err: unknown) => logger.warn('store_invalidation_delayed', { store: 'redis', name: err instanceof Error ? err.name : 'error', ...describeFailure(err, { host: node.options.host, port: node.options.port }) }),
      ),
    );
    await Promise.race([Promise.all(published), sleep(timeoutMs, undefined, { ref: false })]);
  };
  /**
   * Writes a cached model's record and publishes its invalidation in one MULTI; once answered, no store of this process
   * serves the record it had ({@link dropInProcess}).
   */
  const writeCached = async (key: string, add: AddCommand): Promise<unknown> => {
    cache?.drop(cacheName(key));
    try {
      const result = await run(async () => {
        const multi = client.multi() as Pipe;
        add(multi);
        multi.publish(channel, cacheName(key));
        const answers = (await multi.exec()) ?? [];
        for (const [err] of answers) if (err) throw err;
        return answers[0]?.[1];
      });
      if (clustered) await publishNearSubscribers(cacheName(key));
      return result;
    } finally {
      dropInProcess(channel, cacheName(key));
    }
  };

  const recordKey = (model: string, id: string): string => `${prefix}${model}:${refOf(id)}`;
  const grantKey = (ref: string): string => `${prefix}grant:${ref}`;
  const uidKey = (uid: string): string => `${prefix}sessionUid:${refOf(uid)}`;
  const userCodeKey = (code: string): string => `${prefix}userCode:${refOf(code)}`;
  /** Session uid → the key of the session record last written or found for it. */
  const uidMemo = new Map<string, string>();
  const remember = (uid: string, key: string): void => {
    if (uidMemo.size >= UID_MEMO_ENTRIES) uidMemo.delete(uidMemo.keys().next().value as string);
    uidMemo.set(uid, key);
  };

  /** {@link decodeRecord} of `value`, read under `key` (a record of `model`); a value the store did not write is logged. */
  const decode = (model: string, key: string, id: string | undefined, value: string | null): AdapterPayload | undefined => {
    try {
      return decodeRecord(id, value);
    } catch (err) {
      if (err instanceof StoreRecordUnreadableError) logger.error('store_record_unreadable', { store: 'redis', model, ref: key.slice(key.lastIndexOf(':') + 1) });
      throw err;
    }
  };

  const readRaw = async (key: string): Promise<string | null> => (await send<string | null>((p) => void p.get(key))) ?? null;

  /** Reads a record, through the request's batch for flow models and the cache for cached ones. */
  const readRecord = async (model: string, key: string): Promise<string | null> => {
    const batch = FLOW_MODELS.has(model) ? currentBatch() : undefined;
    if (batch) {
      const pending = batch.records.get(key);
      if (pending !== undefined) return pending ? pending.value : null;
      let read = batch.reads.get(key);
      if (!read) {
        read = readRaw(key);
        batch.reads.set(key, read);
        read.catch(() => batch.reads.delete(key));
      }
      return read;
    }
    if (cache && cachedModels.has(model) && cache.active) {
      // Handle invalidations already on the socket first: one Redis sent before it answered the writer
      // arrives in the same event-loop turn as the request that follows.
      await new Promise((resolve) => setImmediate(resolve));
      const cached = cache.get(cacheName(key));
      if (cached !== undefined) return cached;
      const ticket = cache.begin();
      const value = await readRaw(key);
      cache.fill(cacheName(key), ticket, value);
      return value;
    }
    return readRaw(key);
  };

  /** Reads a flow model's record into the request's batch, with the other reads of this tick (a failure reaches the step that needs it). */
  const readAhead = (model: string, id: string): void => {
    if (FLOW_MODELS.has(model) && currentBatch()) readRecord(model, recordKey(model, id)).catch(() => undefined);
  };

  /** Reads a token's grant and session ahead, in the same round trip. */
  const prefetch = (payload: AdapterPayload): void => {
    if (typeof payload.grantId === 'string') readAhead('Grant', payload.grantId);
    const uid = payload.sessionUid;
    const key = typeof uid === 'string' && payload.expiresWithSession ? uidMemo.get(uid) : undefined;
    if (key !== undefined) readRecord('Session', key).catch(() => undefined);
  };

  /** Follows an index key to its record; a stale index (record rewritten or gone) finds nothing. */
  const readIndexed = async (model: string, index: string, member: 'userCode', value: string): Promise<AdapterPayload | undefined> => {
    const id = await readRaw(index);
    if (!id) return undefined;
    const payload = decode(model, recordKey(model, id), id, await readRecord(model, recordKey(model, id)));
    return payload && payload[member] === value ? payload : undefined;
  };

  /**
   * A session by uid, without its `jti` (its cookie's value, which no index holds): the request's own writes, then the
   * record remembered (checked against the uid), then the index, which holds the record's reference.
   */
  const findByUid = async (model: string, uid: string): Promise<AdapterPayload | undefined> => {
    const found = async (key: string): Promise<AdapterPayload | undefined> => {
      const payload = decode(model, key, undefined, await readRecord(model, key));
      if (payload?.uid !== uid) return undefined;
      if (model === 'Session') remember(uid, key);
      return payload;
    };
    for (const key of [currentBatch()?.uids.get(uid), model === 'Session' ? uidMemo.get(uid) : undefined]) {
      const payload = key === undefined ? undefined : await found(key);
      if (payload) return payload;
    }
    const ref = await readRaw(uidKey(uid));
    return ref === null ? undefined : found(`${prefix}${model}:${ref}`);
  };

  /** Deferred inside a request for flow models; at once (one round trip) otherwise. */
  const write = async (model: string, key: string, record: PendingRecord, extra: AddCommand[]): Promise<void> => {
    const batch = FLOW_MODELS.has(model) ? currentBatch() : undefined;
    if (batch) {
      batch.records.set(key, record);
      batch.reads.delete(key);
      batch.unindex.delete(key);
      // A deletion's index removal (one command) lands with it, a write's indexes with the writes.
      if (record) batch.commands.push(...extra);
      else if (extra[0]) batch.unindex.set(key, extra[0]);
      return;
    }
    const add: AddCommand = record ? setRecord(key, record.value, record.ttl) : (p) => void p.del(key);
    if (invalidated.has(model)) {
      await writeCached(key, add);
      for (const answer of extra.length ? await dispatch(extra) : []) await resultOf(answer);
      return;
    }
    for (const answer of await dispatch([add, ...extra])) await resultOf(answer);
  };

  /**
   * Runs an operation at once, after the request's deferred writes (consume, revoke). Its deletions stay deferred: they
   * land with the writes still to come (a resume's ending of her interaction before the code of the pushed request it
   * consumes), or a 503 for those would leave nothing to send again.
   */
  const inOrder = async <T>(operation: () => Promise<T>): Promise<T> => {
    const batch = currentBatch();
    if (batch) await flush(batch, true);
    return operation();
  };

  /**
   * Deletes the members of a grant index, then takes from the index only those whose deletion was answered: a
   * revocation that failed part-way (a Cluster master away) leaves the rest indexed, and a second one removes them.
   * Members added meanwhile stay indexed too. Resolves how many records were removed.
   */
  const revokeIndex = async (index: string): Promise<number> => {
    const members = await run(() => client.zrange(index, '0', '-1'));
    currentBatch()?.reads.clear();
    if (!members.length) return 0;
    const answers = await dispatch(members.map((m): AddCommand => (p) => void p.del(m)));
    const deleted = members.filter((_, i) => !answers[i]?.[0]);
    if (deleted.length) await resultOf((await dispatch([(p) => void p.zrem(index, ...deleted)]))[0] as Answer);
    let removed = 0;
    for (const answer of answers) removed += Number(await resultOf(answer));
    return removed;
  };

  /**
   * After a consume left unanswered (timed out, connection lost), undoes it should it land late: sent on the connection
   * the consume went out on, so Redis runs it after the consume, and it removes only that consume's mark. Otherwise the
   * client's retry, which the 503 invites, would meet a code consumed by nobody and be taken for a replay. An undo that
   * itself went unanswered (the connection dropped: ioredis re-sends nothing, `maxRetriesPerRequest: 0`) is sent again
   * once the connection is ready, for {@link UNDO_WINDOW_MS}: the consume may have landed before the drop, and an undo
   * removes no one else's mark, however late.
   */
  const undoLateConsume = (key: string, marker: string, until = Date.now() + UNDO_WINDOW_MS, delay = 100): void => {
    client.svcUnconsumeOwn(key, marker).then(
      (undone) => {
        if (undone === 1) logger.warn('store_consume_undone', { store: 'redis', host: at.host, port: at.port });
      },
      (err: unknown) => {
        if ((err as { name?: unknown } | undefined)?.name === 'ReplyError' || Date.now() >= until || undosAwaitingReady.size + undosRetrying >= UNDO_PENDING_MAX) {
          logger.warn('store_consume_undo_failed', { store: 'redis', name: err instanceof Error ? err.name : 'error', ...causeOf(err) });
        } else if (client.status === 'ready') {
          // A Cluster stays ready with one node away: backing off, so an outage is not hammered with undos.
          undosRetrying += 1;
          void sleep(delay, undefined, { ref: false }).then(() => {
            undosRetrying -= 1;
            undoLateConsume(key, marker, until, Math.min(delay * 2, 5000));
          });
        } else {
          undosAwaitingReady.set(`${marker}|${key}`, { key, marker, until });
        }
      },
    );
  };
  const undosAwaitingReady = new Map<string, { key: string; marker: string; until: number }>();
  let undosRetrying = 0;
  client.on('ready', () => {
    const due = [...undosAwaitingReady.values()];
    undosAwaitingReady.clear();
    for (const { key, marker, until } of due) undoLateConsume(key, marker, until);
  });

  /** Operations under way: close() waits for them, so what was issued before it (a write after its INFO) still lands. */
  const underway = new Set<Promise<unknown>>();
  const track = <R>(pending: Promise<R>): Promise<R> => {
    underway.add(pending);
    const settled = (): void => void underway.delete(pending);
    pending.then(settled, settled);
    return pending;
  };
  const tracked = <A extends unknown[], R>(operation: (...args: A) => Promise<R>) => (...args: A): Promise<R> => track(operation(...args));
  /** `target` with each method {@link tracked}. */
  const trackedMethods = <T extends object>(target: T): T =>
    Object.fromEntries(Object.entries(target).map(([name, value]) => [name, typeof value === 'function' ? tracked(value as (...args: unknown[]) => Promise<unknown>) : value])) as T;

  const adapter = (model: string): Adapter => ({
    upsert: async (id, payload, expiresIn) => {
      const ttl = ttlOf(expiresIn);
      const key = recordKey(model, id);
      const value = encodeRecord(id, payload);
      await keepHeadroom(model, key, value, payload);
      const extra: AddCommand[] = [];
      // The uid index holds the session's reference, never its id: the value of her session cookie.
      if (model === 'Session' && payload.uid) {
        const batch = currentBatch();
        if (batch) {
          // A session rewritten unchanged but for its expiry within a minute is not written again.
          const known = batch.records.get(key)?.value ?? (batch.reads.has(key) ? await batch.reads.get(key) : undefined);
          const before = known ? decode(model, key, id, known) : undefined;
          if (before && sameButExpiry(before, payload) && Math.abs(Number(payload.exp) - Number(before.exp)) < 60) return;
          batch.uids.set(payload.uid, key);
        }
        remember(payload.uid, key);
        extra.push(setRecord(uidKey(payload.uid), refOf(id), ttl));
      }
      if (payload.userCode) extra.push(setRecord(userCodeKey(payload.userCode), id, ttl));
      if (payload.grantId && GRANTABLE_MODELS.has(model)) {
        const index = grantKey(refOf(payload.grantId));
        // As its text: a SHA the server lacks (NOSCRIPT) is sent again after the answers, behind a read sent with it (`flush`).
        extra.push((p) => void p.eval(INDEX_ADD, 1, index, key, ttl));
      }
      await write(model, key, { value, ttl }, extra);
    },
    find: async (id) => {
      const key = recordKey(model, id);
      const payload = decode(model, key, id, await readRecord(model, key));
      const batch = currentBatch();
      if (payload && batch && (model === 'AccessToken' || model === 'AuthorizationCode')) prefetch(payload);
      if (batch && model === 'Session' && typeof payload?.uid === 'string') batch.uids.set(payload.uid, key);
      return payload;
    },
    findByUid: (uid) => findByUid(model, uid),
    findByUserCode: (userCode) => readIndexed(model, userCodeKey(userCode), 'userCode', userCode),
    consume: (id) =>
      inOrder(async () => {
        const key = recordKey(model, id);
        currentBatch()?.reads.delete(key);
        if (cache && cachedModels.has(model)) cache.drop(cacheName(key));
        const marker = randomBytes(6).toString('base64url');
        const result = await send<number>((p) => void p.svcConsume(key, Math.floor(Date.now() / 1000), marker)).catch((err: unknown) => {
          if (err instanceof StoreUnavailableError) undoLateConsume(key, marker);
          throw err;
        });
        if (result === -1) throw new errors.InvalidGrant(`${model} not found or expired`);
        if (result === 0) throw new AlreadyConsumedError(model);
      }),
    destroy: async (id) => {
      const key = recordKey(model, id);
      const extra: AddCommand[] = [];
      if (model === 'Session') {
        // Her session's uid as this request wrote or found it (a sign-out found it), adding no round trip; outside a
        // request, read now. One a request destroys unseen (none oidc-provider had) leaves its index to expire.
        const batch = currentBatch();
        let uid: unknown = batch && [...batch.uids].find(([, at]) => at === key)?.[0];
        try {
          if (!batch) uid = decode(model, key, id, await readRaw(key))?.uid;
        } catch {
          // Unreadable (logged by `decode`): its record is deleted all the same.
        }
        if (typeof uid === 'string') extra.push((p) => void p.eval(UNINDEX, 1, uidKey(uid), refOf(id)));
      }
      await write(model, key, null, extra);
    },
    revokeByGrantId: async (grantId) => {
      await inOrder(() => revokeIndex(grantKey(refOf(grantId))));
    },
  });

  const attemptKey = (key: string): string => attemptCounterKey(prefix, key);
  const bucketKeys = (key: string): [string, string, string] => {
    const bucket = attemptBucket(key, refOf(key));
    return [`${prefix}attempt-rank:${bucket}`, `${prefix}attempt-expiry:${bucket}`, `${prefix}attempt-floor:${bucket}`];
  };
  const head = (rule: AttemptRule): [number, number] => [rule.consecutiveLimit ?? 0, rule.maxCoolDownSeconds * 1000];
  // Settles an attempt with the request's other commands, and once more past the breaker if it refused to send it
  // (opened by a counter on another node). Only an unsent command is resent: a guess counted twice invents failures.
  const settle = async (add: AddCommand): Promise<number> => {
    try {
      return await send<number>(add);
    } catch (err) {
      if (!(err instanceof StoreUnavailableError && err.cause === NOT_SENT)) throw err;
      const [answer] = await attempt(() => exchange([add])).catch((cause: unknown) => [[cause as Error, undefined] as Answer]);
      if (answer?.[0]) throw failure(answer[0]);
      return Number(answer?.[1]);
    }
  };
  // Checks and failures act at once; a sign-in's counters issued together share one round trip. A success's
  // forgetting goes out with the request's writes (one round trip fewer), before its answer, and only logs a failure.
  const attempts: AttemptCounter = {
    check: (key, rule) => send<number>((p) => void p.svcAttemptCheck(attemptKey(key), ...head(rule))),
    fail: async (key, rule) => {
      const limits = [rule.limit, rule.windowSeconds * 1000, rule.coolDownSeconds * 1000, STRIKE_MEMORY_SECONDS * 1000] as const;
      const runMs = rule.consecutiveLimit === undefined ? 0 : RUN_MEMORY_SECONDS * 1000;
      const { counterCap } = await memory();
      return settle((p) => void p.svcAttemptFail(attemptKey(key), ...bucketKeys(key), ...head(rule), ...limits, runMs, counterCap, rule.expendable ? 1 : 0));
    },
    forget: async (key, options) => {
      // Its entries in the bucket's indexes stay until the expiry they name: a member without a counter is dropped
      // first when the bucket is full, and a success costs no more commands.
      const del: AddCommand = (p) => void p.unlink(attemptKey(key));
      const batch = options?.afterSuccess ? currentBatch() : undefined;
      if (batch) batch.lenient.push(del);
      else await settle(del);
    },
  };

  /** Each master's `INFO memory` (`''` for a user denied INFO) and its address as the Cluster's slot table names it. */
  const masterMemory = async (): Promise<{ node: string; info: string }[]> =>
    Promise.all(masters().map(async (node) => ({
      node: nodeName(node),
      info: await node.info('memory').catch((err: unknown) => {
        if (/NOPERM/.test(String(err))) return '';
        throw err;
      }),
    })));
  const bucketSlots = BUCKET_TAGS.map((tag) => keySlot(`${prefix}attempt-rank:{${tag}}`));
  const memoryField = (info: string, field: string): string | undefined => new RegExp(`^${field}:(\\S+)`, 'm').exec(info)?.[1];
  /** The first `maxmemory_policy` other than `noeviction` among the masters with a `maxmemory` (a user denied INFO: unknown). */
  const evictionPolicy = async (): Promise<string | undefined> => {
    // Without a `maxmemory` Redis never evicts, whatever the policy.
    const evicting = (await masterMemory()).map(({ info }) => info).filter((info) => Number(memoryField(info, 'maxmemory')) > 0);
    return evicting.map((info) => memoryField(info, 'maxmemory_policy')).find((policy) => policy !== undefined && policy !== 'noeviction');
  };

  const headroomCheckMs = options.headroomCheckMs ?? 1000;
  let headroom: { at: number; memory: Promise<MemoryState> } | undefined;
  let nearlyFullLogged = false;
  let lastCounterCap = 0;
  /** The bytes of strangers' records this process admitted ({@link recordCost}), ever. */
  let admitted = 0;
  /**
   * The masters' memory, asked at most once per `headroomCheckMs` (concurrent writers share the answer). An INFO that
   * is denied, or no `maxmemory`, says nothing is held and counters have no cap: the write itself then meets what Redis
   * says. An INFO that fails (a Cluster master away, until its replica takes over) says nothing is held, and the
   * counters keep the last cap known: a flood during a failover does not outgrow the share on the masters still there.
   */
  const unknownMemory = (): MemoryState => ({ fill: 0, counterCap: lastCounterCap, room: Infinity, admittedAt: admitted });
  const memory = (): Promise<MemoryState> => {
    if (Date.now() < openUntil) return Promise.resolve(unknownMemory());
    if (!headroom || Date.now() - headroom.at >= headroomCheckMs) {
      const admittedAt = admitted;
      const state = attempt(masterMemory).then((reports) => {
        const infos = reports.map(({ info }) => info);
        const maxima = infos.map((info) => Number(memoryField(info, 'maxmemory')));
        // What Redis weighs against maxmemory: replica output and AOF buffers (`mem_not_counted_for_evict`) are left out.
        const counted = infos.map((info) => Number(memoryField(info, 'used_memory')) - Number(memoryField(info, 'mem_not_counted_for_evict') ?? 0));
        const limited = maxima.flatMap((max, i) => (max > 0 && Number.isFinite(counted[i]) ? [{ max, used: counted[i] ?? 0 }] : []));
        const fill = Math.max(0, ...limited.map(({ max, used }) => used / max));
        const room = Math.min(Infinity, ...limited.map(({ max, used }) => (1 - FLOW_HEADROOM) * max - used));
        const owners = clustered ? bucketSlots.map((slot) => (client as Cluster).slots[slot]?.[0]) : undefined;
        lastCounterCap = counterCapOf(reports.map(({ node }, i) => ({ node, maxmemory: maxima[i] ?? 0 })), owners, prefix);
        return { fill, counterCap: lastCounterCap, room, admittedAt };
      }, unknownMemory);
      headroom = { at: Date.now(), memory: state };
      void state.then(({ fill }) => {
        const full = fill >= 1 - FLOW_HEADROOM;
        if (full && !nearlyFullLogged) logger.error('store_full', { store: 'redis', host: at.host, port: at.port });
        else if (!full && nearlyFullLogged) logger.info('store_recovered', { store: 'redis', host: at.host, port: at.port });
        nearlyFullLogged = full;
      });
    }
    return headroom.memory;
  };
  const fill = async (): Promise<number> => (await memory()).fill;
  /** Whether `cost` more bytes of strangers' records stay below nine tenths, with what this process admitted since the look. */
  const roomFor = ({ room, admittedAt }: MemoryState, cost: number): boolean => admitted - admittedAt + cost <= room;
  /**
   * Refuses a new record a stranger may create that would take Redis to nine tenths, counting what this process admitted
   * since its last look at `INFO` (a flood faster than the looks stops there too); one rewritten (her login noted in it) passes.
   */
  const keepHeadroom = async (model: string, key: string, value: string, payload: AdapterPayload): Promise<void> => {
    if (!startsFlow(model, payload)) return;
    const state = await memory();
    const cost = recordCost(key, value);
    if (roomFor(state, cost)) {
      admitted += cost;
      return;
    }
    if ((await readRecord(model, key)) !== null) return;
    throw new StoreUnavailableError({ cause: new Error(`a Redis master holds ${100 - FLOW_HEADROOM * 100} % of its maxmemory: the rest is kept for flows under way`), where: at });
  };

  let evictionLogged = false;
  /**
   * Why a master refuses writes (`OOM`: full under `noeviction`; `READONLY`: a replica, say after a failover the
   * address did not follow; `MISCONF`: its last snapshot failed, with `stop-writes-on-bgsave-error`; `NOREPLICAS`:
   * fewer replicas in sync than `min-replicas-to-write`), asked with a script that may write and writes nothing (Redis refuses it up front as it
   * would a write); `undefined` when every master would take one. Other errors (a master away, a user denied EVAL)
   * say nothing about writes.
   */
  const writesRefused = async (): Promise<string | undefined> => {
    const answers = await Promise.all(masters().map((node) => node.eval(WRITE_PROBE, 0).then(() => undefined, (err: unknown) => err)));
    return answers.map((err) => (err as Error | undefined)?.message).find((message) => message !== undefined && /^(OOM|READONLY|MISCONF|NOREPLICAS) /.test(message));
  };

  return {
    client,
    adapter: (model) => trackedMethods(adapter(model)),
    // Only a batch's flush is tracked, not `fn`: that is the request itself (a slow client's body, a close() inside it),
    // and close() waiting for it could wait forever.
    async batch<T>(fn: () => Promise<T>): Promise<T> {
      if (scope.getStore()) return fn();
      const batch = new RequestBatch(dispatch);
      let result: T;
      try {
        result = await scope.run(batch, fn);
      } catch (err) {
        batch.closed = true;
        // The request failed: what it wrote until then is written as without the batch. Its own error
        // is the answer; a flush error is only logged (name and code, no payload).
        await track(flush(batch)).catch((flushErr: unknown) => {
          logger.warn('store_flush_failed', { store: 'redis', name: flushErr instanceof Error ? flushErr.name : 'error', ...causeOf(flushErr) });
        });
        throw err;
      }
      batch.closed = true;
      await track(flush(batch));
      return result;
    },
    readAhead,
    flush: (read) => {
      const batch = currentBatch();
      if (!batch || clustered) return inOrder(read);
      // One server serves a connection's commands in order: what `read` sends now goes after the writes, in their round trip.
      return Promise.all([flush(batch, true), read()]).then(([, answer]) => answer);
    },
    crowded: async () => (await fill()) >= CROWDED_SHARE,
    refusesStart: async (model, id, payload) => {
      if (!startsFlow(model, payload)) return false;
      const key = recordKey(model, id);
      return !roomFor(await memory(), recordCost(key, encodeRecord(id, payload)));
    },
    unconsume: tracked((model: string, id: string) =>
      inOrder(async () => {
        const key = recordKey(model, id);
        currentBatch()?.reads.delete(key);
        return (await send<number>((p) => void p.svcUnconsume(key))) === 1;
      })),
    insert: tracked(async (model: string, id: string, payload: AdapterPayload, expiresIn?: number) => {
      const [key, value, ttl] = [recordKey(model, id), encodeRecord(id, payload), ttlOf(expiresIn)];
      return (await send<string | null>((p) => void (ttl ? p.set(key, value, 'EX', ttl, 'NX') : p.set(key, value, 'NX')))) === 'OK';
    }),
    attempts: trackedMethods(attempts),
    inventory: createRedisInventory({
      client,
      masters,
      prefix,
      run,
      decode: (model, key, value) => decode(model, key, undefined, value),
      revokeGrant: (ref) => revokeIndex(grantKey(ref)),
      remove: async (model, key) => {
        const del: AddCommand = (p) => void p.del(key);
        const removed = invalidated.has(model) ? await writeCached(key, del) : await resultOf((await dispatch([del]))[0] as Answer);
        return Number(removed) > 0;
      },
    }),
    async ping() {
      await run(() => client.ping());
      // Timed, past the breaker: an INFO that fails (a Cluster master away) opens no breaker for the requests served.
      const [refused, policy] = await Promise.all([attempt(writesRefused).catch(() => undefined), attempt(evictionPolicy).catch(() => undefined)]);
      if (refused !== undefined) throw new StoreUnavailableError({ cause: new Error(`Redis refuses writes: ${refused}`), where: at });
      if (policy === undefined) return;
      const cause = new Error(`maxmemory-policy is ${policy}: Redis may evict replay marks, throttle counters and revocation marks; set noeviction`);
      if (!evictionLogged) logger.error('store_evicts', { store: 'redis', policy, host: at.host, port: at.port });
      evictionLogged = true;
      throw new StoreUnavailableError({ cause, where: at });
    },
    async close() {
      await Promise.allSettled(underway);
      cache?.close();
      // QUIT waits for the answer; a Redis frozen with the connection up would hold the process's stop for good.
      await attempt(() => client.quit()).catch(() => client.disconnect());
    },
  };
}

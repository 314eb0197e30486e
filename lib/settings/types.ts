import type { PROPERTY_DEFINITIONS, PropertyDefinition } from './definitions.js';

/** One member of {@link Settings}: where a row puts its value, its type, and whether it is always set. */
type Member<D> = D extends PropertyDefinition<infer P, infer V, infer R> ? { place: P; value: V; required: R } : never;
type Rows = Member<(typeof PROPERTY_DEFINITIONS)[number]>;
type Leaf<P> = P extends `${string}.${infer M}` ? M : P;
type GroupOf<P> = P extends `${infer G}.${string}` ? G : never;
type Flat<T> = { [K in keyof T]: T[K] };
type Members<M extends Rows> = Flat<
  { [X in M as X['required'] extends true ? Leaf<X['place']> : never]: X['value'] } & {
    [X in M as X['required'] extends true ? never : Leaf<X['place']>]?: X['value'];
  }
>;
type Derived = Members<Exclude<Rows, { place: `${string}.${string}` }>> & {
  [G in GroupOf<Rows['place']>]: Members<Extract<Rows, { place: `${G}.${string}` }>>;
};

/**
 * The typed settings of svc-connect, derived from the property table (`definitions.ts`): a row placed
 * at `redis.url` is `settings.redis.url`, of its parser's type, optional unless the row has a default.
 * What each member means is in `docs/configuration.md`.
 */
export interface Settings extends Derived {
  /** `true` when `NODE_ENV=production`: unsafe defaults are refused instead of warned about. */
  production: boolean;
}

/** A Redis Cluster seed node, and the credentials every node of the Cluster is reached with (the same for all). */
export interface ClusterNode {
  host: string;
  port: number;
  /** ACL user name (`AUTH user password`). */
  username?: string;
  password?: string;
  /** Reached over TLS (a `rediss://` item): every node of the Cluster then is. */
  tls?: boolean;
}

/** The position of the first seed node reached otherwise than the first (credentials, TLS; `-1`: all alike). */
export function firstUnlikeNode(nodes: readonly ClusterNode[]): number {
  const access = (node: ClusterNode | undefined): string => JSON.stringify([node?.username, node?.password, node?.tls === true]);
  return nodes.findIndex((node) => access(node) !== access(nodes[0]));
}

/** The default limit of the embedded memory store, in MiB (`svc.memory-store.max-mb`). */
export const MEMORY_STORE_DEFAULT_MAX_MB = 64;

/** Defaults of the Redis store, shared by the settings and the store's own options. */
export const REDIS_DEFAULTS = {
  keyPrefix: 'svc:',
  operationTimeoutMs: 800,
} as const;

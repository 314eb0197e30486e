import type { Adapter, AdapterPayload } from 'oidc-provider';

/** A single-use token claimed in the store by a request, settled when the request ends. */
export interface Claim {
  model: string;
  id: string;
  /** The store's adapter for the model (below the claiming wrapper: reads do not claim). */
  adapter: Adapter;
  /** The store's atomic `unconsume`; `false` when the record is gone. */
  unconsume: () => Promise<boolean>;
  /** The record as claimed, without its consumed mark. */
  snapshot?: AdapterPayload;
  /** oidc-provider deleted (or tried to delete) the record during the request. */
  deleted?: boolean;
  destroyFailed?: unknown;
}

/** A record written in a request that claimed a token, undone if it fails (`previous` absent when created). */
export interface Write {
  model: string;
  id: string;
  adapter: Adapter;
  previous?: AdapterPayload;
}

/** What one request claimed and wrote. */
export interface RequestState {
  claims: Claim[];
  writes: Write[];
}

/** A copy of `payload` without its consumed mark (nested values copied too). */
export function withoutConsumedMark(payload: AdapterPayload): AdapterPayload {
  const copy = structuredClone(payload);
  delete copy.consumed;
  return copy;
}

const states = new WeakMap<object, RequestState>();

/** The state of the request `ctx`; created on first use when `create` is set. */
export function requestState(ctx: object, create: true): RequestState;
export function requestState(ctx: object, create?: false): RequestState | undefined;
export function requestState(ctx: object, create = false): RequestState | undefined {
  let state = states.get(ctx);
  if (!state && create) {
    state = { claims: [], writes: [] };
    states.set(ctx, state);
  }
  return state;
}

/** Removes and returns the state of `ctx` (later store calls are not tracked). */
export function takeRequestState(ctx: object): RequestState | undefined {
  const state = states.get(ctx);
  states.delete(ctx);
  return state;
}

import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';

import { startsFlow, type AttemptRule, type SvcStore } from '../../adapters/store.js';
import { currentRequest } from '../seams.js';
import { addressCounterKey, clientAddress, type ProxyTrust } from '../web/client-address.js';

/** What {@link flowShare} counts with: the store, whose client address a request is, and the MAC key of counter names. */
export interface FlowShareParts {
  store: Pick<SvcStore, 'attempts' | 'crowded'>;
  proxy: ProxyTrust;
  /** The first cookie key: counters name addresses by a keyed MAC. */
  macKey: string;
  /** Flows one address may start an hour while the store is crowded (`svc.flows.address-threshold`). */
  threshold: number;
}

const HOUR = 3600;

/**
 * The adapter rule that shares a crowded store out by client address: while the store holds half its limit, a new
 * record a stranger may create (an interaction nobody signed in to, a pushed request, a session nobody signed in to)
 * (a pushed request only of a public client) is counted against the address of the request that creates it, and
 * refused beyond `threshold` an hour with 429
 * `temporarily_unavailable` (at `/authorize` redirected to the client). One host looping on `/authorize` so stops
 * short of the nine tenths at which nobody may start; below half, nothing is counted.
 */
export function flowShare(inner: Adapter, model: string, parts: FlowShareParts): Partial<Adapter> {
  const rule: AttemptRule = { limit: parts.threshold, windowSeconds: HOUR, coolDownSeconds: HOUR / 4, maxCoolDownSeconds: HOUR, expendable: true };
  const refused = async (id: string, payload: AdapterPayload): Promise<number> => {
    const ctx = currentRequest();
    // A pushed request its client authenticated for comes from the client's server, one address for all its users.
    if (!ctx || !startsFlow(model, payload) || (payload as { trusted?: unknown }).trusted === true || !(await parts.store.crowded?.()) || (await inner.find(id))) return 0;
    return parts.store.attempts.fail(addressCounterKey('flow-address', clientAddress(ctx, parts.proxy), parts.macKey), rule);
  };
  return {
    async upsert(id, payload, expiresIn) {
      const wait = await refused(id, payload);
      if (wait > 0) {
        currentRequest()?.set('Retry-After', String(Math.ceil(wait / 1000)));
        const err = new errors.TemporarilyUnavailable('too many new sign-ins from this network while the provider is busy, try again later');
        err.status = err.statusCode = 429;
        throw err;
      }
      await inner.upsert(id, payload, expiresIn);
    },
  };
}

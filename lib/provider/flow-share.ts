import { errors, type Adapter, type AdapterPayload, type KoaContextWithOIDC } from 'oidc-provider';

import { startsFlow, type AttemptRule, type SvcStore } from '../../adapters/store.js';
import type { Logger } from '../logger.js';
import { currentRequest, MODEL_NAMES, ROUTE_NAMES } from '../seams.js';
import { addressCounterKey, clientAddress, counterKey, siteAddressKey, type ProxyTrust } from '../web/client-address.js';

/** What {@link flowShare} counts with: the store, whose client address a request is, and the MAC key of counter names. */
export interface FlowShareParts {
  store: Pick<SvcStore, 'attempts' | 'crowded' | 'refusesStart'>;
  proxy: ProxyTrust;
  /** The first cookie key: counters name addresses by a keyed MAC. */
  macKey: string;
  /** Flows one address may start an hour while the store is crowded (`svc.login.start-threshold`). */
  threshold: number;
  /** Where each refusal is logged (`flow_share_refused`, the model and whether an account's share was spent), so an operator whose `svc.proxy` is wrong sees why everyone is held up. */
  logger?: Logger;
}

const HOUR = 3600;

/** How many address shares an IPv6 /48 holds (one host with a whole /48 is not 65 536 addresses), and an account. */
const SITE_SHARES = 8;

/** The account of a signed-in session's new interaction or session: such flows are counted per account, not per address. */
function signedIn(model: string, payload: AdapterPayload): string | undefined {
  const account = model === 'Session' ? payload.accountId : model === 'Interaction' ? (payload.session as { accountId?: unknown } | undefined)?.accountId : undefined;
  return typeof account === 'string' && account ? account : undefined;
}

/** The records each request was refused, by model and id: a second write of one (a session saved again) is dropped. */
const refusals = new WeakMap<object, Set<string>>();

/**
 * Whether a pushed request comes from its client's server: one that authenticated at `/par`. Not oidc-provider's
 * `trusted`, which a public client also earns by signing its request object with a key any copy of its app holds.
 */
const authenticatedPush = (ctx: KoaContextWithOIDC, model: string): boolean =>
  model === MODEL_NAMES.pushedAuthorizationRequest && (ctx.oidc?.client?.clientAuthMethod ?? 'none') !== 'none';

/**
 * The adapter rule that shares a crowded store out by client address: while the store holds half its limit, a new
 * record a stranger may create (an interaction or session nobody signed in to, a public client's pushed request) is
 * counted against the address of the request that creates it (and an IPv6 address's /48), a signed-in account's new
 * session or interaction against the account, and refused beyond `threshold` an hour with 429
 * `temporarily_unavailable` (at `/authorize` redirected to the client). One host looping on `/authorize` so stops short
 * of the nine tenths at which nobody may start; below half, nothing is counted, nor from nine tenths on a record the
 * store refuses for want of headroom ({@link SvcStore.refusesStart}). A refused record written again by the
 * same request (oidc-provider saves a session once more after its route answered) is neither counted again nor
 * stored: the answer already says 429.
 */
export function flowShare(inner: Adapter, model: string, parts: FlowShareParts): Partial<Adapter> {
  // A cool-down of the whole hour: shorter ones, doubling per lockout, would let three thresholds start in the first hour.
  const rule: AttemptRule = { limit: parts.threshold, windowSeconds: HOUR, coolDownSeconds: HOUR, maxCoolDownSeconds: HOUR, expendable: true };
  // An IPv6 /48, and an account as one: her devices on several networks, each sign-in a session and a consent interaction.
  const siteRule: AttemptRule = { ...rule, limit: parts.threshold * SITE_SHARES };
  const resumed = (ctx: KoaContextWithOIDC): boolean => ctx.oidc?.route === ROUTE_NAMES.resume;
  /** The address's counter and, for IPv6, its /48's. */
  const addressCounters = (ctx: KoaContextWithOIDC): [string, AttemptRule][] => {
    const address = clientAddress(ctx, parts.proxy);
    const site = siteAddressKey(address);
    const own: [string, AttemptRule] = [addressCounterKey('flow-address', address, parts.macKey), rule];
    return site ? [own, [counterKey('flow-address-site', site, parts.macKey), siteRule]] : [own];
  };
  /** The account counter a signed-in record counts on first, if any, and the address counters it counts on else. */
  const countersOf = (ctx: KoaContextWithOIDC, payload: AdapterPayload): { account?: [string, AttemptRule]; address: [string, AttemptRule][] } => {
    const account = signedIn(model, payload);
    // Any site she visits can send her browser, session cookie and all (SameSite=None), to `/authorize?prompt=login` a
    // thousand times, spending her share. Where she has just signed in or consented (resume: the flow began as a
    // stranger's, counted and held to nine tenths as one), beyond her share she is counted as a stranger, on the
    // address, so that cannot keep her from signing in on every network for the hour.
    if (account !== undefined) return { account: [counterKey('flow-account', account, parts.macKey), siteRule], address: resumed(ctx) ? addressCounters(ctx) : [] };
    if (!startsFlow(model, payload) || authenticatedPush(ctx, model)) return { address: [] };
    return { address: addressCounters(ctx) };
  };
  /** Milliseconds until the record may be created (0: now), and whether an account's share refused it. */
  const refused = async (ctx: KoaContextWithOIDC | undefined, id: string, payload: AdapterPayload): Promise<{ wait: number; account: boolean }> => {
    const counters = ctx ? countersOf(ctx, payload) : { address: [] };
    if ((!counters.account && !counters.address.length) || !(await parts.store.crowded?.()) || (await inner.find(id))) return { wait: 0, account: false };
    // A record the store refuses anyway for want of headroom is not counted: its 503 answers, leaving nothing behind.
    if (await parts.store.refusesStart?.(model, id, payload)) return { wait: 0, account: false };
    if (counters.account) {
      const wait = await parts.store.attempts.fail(...counters.account);
      if (wait === 0 || !counters.address.length) return { wait, account: true };
    }
    // One after the other: an address already refused spends nothing of its site's share.
    for (const [key, counterRule] of counters.address) {
      const wait = await parts.store.attempts.fail(key, counterRule);
      if (wait > 0) return { wait, account: false };
    }
    return { wait: 0, account: false };
  };
  return {
    async upsert(id, payload, expiresIn) {
      const ctx = currentRequest();
      const key = `${model}:${id}`;
      if (ctx && refusals.get(ctx)?.has(key)) return;
      const { wait, account } = await refused(ctx, id, payload);
      if (wait > 0 && ctx) {
        refusals.set(ctx, (refusals.get(ctx) ?? new Set()).add(key));
        parts.logger?.warn('flow_share_refused', { model, account });
        ctx.set('Retry-After', String(Math.ceil(wait / 1000)));
        const err = new errors.TemporarilyUnavailable(`too many new sign-ins ${account ? 'for this account' : 'from this network'} while the provider is busy, try again later`);
        err.status = err.statusCode = 429;
        throw err;
      }
      await inner.upsert(id, payload, expiresIn);
    },
  };
}

import { Resolver } from 'node:dns/promises';

import { LOCALHOST_NAME } from './addresses.js';

/*
 * node:dns `lookup` (getaddrinfo) runs on libuv's thread pool, where all name lookups of the process
 * share 2 threads (half of the pool). It cannot be cancelled: a name whose servers never answer holds
 * its thread for the resolver's whole timeout (10 s and more), long after the fetch gave up. Were
 * outbound fetches to take both, a relying party naming such hosts would stall every lookup of the
 * process (Redis and SMTP host names among them); they take one, in turn.
 */

const MAX_PENDING = 1;
let pending = 0;
const waiting: (() => void)[] = [];

function release(): void {
  const next = waiting.shift();
  if (next) next();
  else pending -= 1;
}

/** Waits for a free turn (the slot is handed over by {@link release}); fails when `signal` fires first. */
function turn(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      waiting.splice(waiting.indexOf(granted), 1);
      reject(new Error('aborted while waiting for a name lookup'));
    };
    const granted = (): void => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    waiting.push(granted);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs the name lookup `lookup` when no other lookup of an outbound fetch is pending, keeping its turn
 * until the lookup itself settles, not when its caller stops waiting. Fails without looking up when
 * `signal` fires while it waits.
 */
export async function lookupInTurn<T>(lookup: () => Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) throw new Error('aborted before a name lookup');
  if (pending < MAX_PENDING) pending += 1;
  else await turn(signal);
  const work = new Promise<T>((resolve) => resolve(lookup()));
  work.then(release, release);
  return work;
}

/*
 * A name that must resolve to public addresses (not one of the operator's private hosts, which may
 * live in /etc/hosts) is asked of DNS with c-ares (node:dns `Resolver`) instead: its queries are
 * sockets on the event loop, take no thread and no turn, and are given up at a deadline. So a name
 * whose DNS never answers fails after ANSWER_MS without holding any other fetch, and, once it failed
 * so twice in a row, at once until STALL_MS after the last time (one slow or lost answer, which the
 * next lookup usually finds in the resolver's cache, fails one fetch only); at most MAX_STALLED names
 * are remembered (the oldest forgotten first).
 */
const ANSWER_MS = 1000;
const STALL_MS = 60_000;
const MAX_STALLED = 1000;
const stalled = new Map<string, { until: number; times: number }>();

/** Where and how long names outside `svc.fetch.private-hosts` are asked (tests stand in their own server). */
export interface PublicDns {
  /** DNS servers (`host:port`) in place of the system's. */
  servers?: readonly string[];
  /** How long a name's DNS has to answer. @default 1000 */
  answerMs?: number;
}

/** How many names are remembered as having not answered (at most 1000). */
export const stalledNames = (): number => stalled.size;

/**
 * The IPv4 and IPv6 addresses of `host` as DNS gives them (RFC 6761 loopback for `localhost`
 * names); none when the name does not exist; `undefined` when its DNS did not answer in time, or
 * twice in a row, the last time within the last minute. Stops asking when `signal` fires.
 */
export async function lookupPublicName(host: string, signal: AbortSignal, dns: PublicDns = {}): Promise<{ address: string; family: number }[] | undefined> {
  if (LOCALHOST_NAME.test(host)) return [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
  const name = host.toLowerCase().replace(/\.$/, '');
  const before = stalled.get(name);
  const times = before !== undefined && before.until > Date.now() ? before.times : 0;
  if (times >= 2) return undefined;
  const resolver = new Resolver({ timeout: dns.answerMs ?? ANSWER_MS, tries: 1 });
  if (dns.servers) resolver.setServers(dns.servers);
  let late = false;
  const stop = (): void => resolver.cancel();
  const timer = setTimeout(() => {
    late = true;
    stop();
  }, dns.answerMs ?? ANSWER_MS);
  signal.addEventListener('abort', stop, { once: true });
  const answers = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]).finally(() => {
    clearTimeout(timer);
    signal.removeEventListener('abort', stop);
  });
  const addresses = answers.flatMap((a, i) => (a.status === 'fulfilled' ? a.value.map((address) => ({ address, family: i === 0 ? 4 : 6 })) : []));
  const codes = answers.map((a) => (a.status === 'rejected' ? (a.reason as NodeJS.ErrnoException).code : undefined));
  const unanswered = codes.some((code) => code === 'ETIMEOUT' || (late && code === 'ECANCELLED'));
  stalled.delete(name);
  if (addresses.length > 0 || !unanswered) return addresses;
  if (stalled.size >= MAX_STALLED) stalled.delete(stalled.keys().next().value as string);
  stalled.set(name, { until: Date.now() + STALL_MS, times: times + 1 });
  return undefined;
}

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

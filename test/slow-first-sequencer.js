/**
 * Jest's test order, slowest files first. Jest sorts by the durations of its last run, which a clean clone (CI)
 * never has; it then falls back to file size, which put the two slowest files of the packaging tier (the smallest
 * ones: a git install and a clone's install) last, so one worker ran them alone at the end. The files named
 * here, measured slowest, go first in this order; the rest keep Jest's order.
 */
import Sequencer from '@jest/test-sequencer';

const SLOWEST = [
  'pack/git-install.test.ts',
  'pack/getting-started.test.ts',
  'pack/guides.test.ts',
  'e2e/flows-cluster.test.ts',
  'adapters/redis.test.ts',
  'e2e/flows-redis.test.ts',
  'e2e/key-rotation.test.ts',
  'e2e/config-paths.test.ts',
  'e2e/example-server.test.ts',
];

const rank = (path) => {
  const at = SLOWEST.findIndex((suffix) => path.endsWith(`/test/${suffix}`));
  return at === -1 ? SLOWEST.length : at;
};

/** Jest's sequencer with {@link SLOWEST} moved to the front. */
export default class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const sorted = super.sort(tests);
    return sorted.map((test, at) => ({ test, at })).sort((a, b) => rank(a.test.path) - rank(b.test.path) || a.at - b.at).map(({ test }) => test);
  }
}

/**
 * Jest global setup of the packaging tier: builds `dist/` once for every file of the tier (they pack
 * it with `--ignore-scripts` or run it, side by side on two workers), unless `.ci/run` says that
 * `npm install` built it on a clean clone (`DIST_BUILT_BY_INSTALL=1`), then starts the run's own
 * redis-server (test/redis-setup.js).
 */
/* global URL, process */
import { execFileSync } from 'node:child_process';

import { setup as redisSetup } from './redis-setup.js';

export default async function setup() {
  if (process.env.DIST_BUILT_BY_INSTALL !== '1') execFileSync('npm', ['run', '-s', 'build'], { cwd: new URL('..', import.meta.url).pathname, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } });
  await redisSetup();
}

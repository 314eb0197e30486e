/**
 * Jest global setup of the packaging tier: builds `dist/` once for every file of the tier (they pack
 * it with `--ignore-scripts` or run it, side by side), unless it is newer than every file it is built
 * from (as `npm install`'s prepare left it in .ci/run), then starts the run's own redis-server
 * (test/redis-setup.js).
 */
/* global URL, process */
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { setup as redisSetup } from './redis-setup.js';

const root = new URL('..', import.meta.url).pathname;

/**
 * True when dist/ was built after the last change to a source file, a tsconfig or package.json, or to a folder
 * of them (a file removed or renamed changes its folder).
 */
function distIsFresh() {
  const built = join(root, 'dist/lib/cli.js');
  if (!existsSync(built)) return false;
  const sources = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z', 'lib', 'adapters', 'policies', 'examples', 'package.json', 'tsconfig.json', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8' });
  const files = sources.split('\0').filter((file) => file && existsSync(join(root, file)));
  const folders = new Set(files.map(dirname).filter((folder) => folder !== '.'));
  const newest = Math.max(...[...files, ...folders].map((path) => statSync(join(root, path)).mtimeMs));
  return statSync(built).mtimeMs > newest;
}

export default async function setup() {
  if (!distIsFresh()) execFileSync('npm', ['run', '-s', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } });
  await redisSetup();
}

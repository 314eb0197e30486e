/**
 * Jest global setup and teardown: a redis-server of the test run's own on a free loopback port
 * (Debian's redis-server, nothing kept on disk), so `npm test` never depends on a Redis someone else
 * started. Its URL reaches every test worker as `SVC_TEST_REDIS_URL` (test/helpers/redis.ts), and its folder, removed
 * at teardown, as `SVC_TEST_RUN_DIR`: the run's own folder, where helpers keep what the whole run may share
 * (test/helpers/provider-keys.ts).
 */
/* global process, URL */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { freePort } from './free-port.js';

/**
 * Starts a redis-server of ours on `port`, in a folder of its own. It is ours when it answers with that folder:
 * with --daemonize redis-server exits 0 even when the port is taken, and the Redis that answers there may be
 * another run's (tiers run side by side in .ci/run), which its teardown would stop under us. Ours writes
 * "aborting" in its log when it cannot listen there.
 * @throws when ours does not answer there.
 */
export function startRedis(port) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-test-redis-')));
  execFileSync('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'yes', '--dir', dir, '--logfile', join(dir, 'redis.log')]);
  const ours = () => spawnSync('redis-cli', ['-p', String(port), 'config', 'get', 'dir'], { encoding: 'utf8', timeout: 10_000 }).stdout?.split('\n')[1]?.trim() === dir;
  const aborted = () => existsSync(join(dir, 'redis.log')) && readFileSync(join(dir, 'redis.log'), 'utf8').includes('aborting');
  for (let i = 0; i < 100 && !aborted() && !ours(); i += 1) spawnSync('sleep', ['0.05']);
  if (!ours()) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`redis-server did not start on 127.0.0.1:${port} (is the port taken?)`);
  }
  return { url: `redis://127.0.0.1:${port}`, dir };
}

export async function setup() {
  // A port taken between the probe and the bind: another free port.
  for (let attempt = 1; ; attempt += 1) {
    try {
      const { url, dir } = startRedis(await freePort());
      process.env.SVC_TEST_REDIS_URL = url;
      process.env.SVC_TEST_REDIS_DIR = dir;
      process.env.SVC_TEST_RUN_DIR = dir;
      return;
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
}

export async function teardown() {
  const url = process.env.SVC_TEST_REDIS_URL;
  if (url) spawnSync('redis-cli', ['-p', new URL(url).port, 'shutdown', 'nosave']);
  if (process.env.SVC_TEST_REDIS_DIR) rmSync(process.env.SVC_TEST_REDIS_DIR, { recursive: true, force: true });
}

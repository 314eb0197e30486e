/**
 * Jest global setup and teardown: a redis-server of the test run's own on a free loopback port
 * (Debian's redis-server, nothing kept on disk), so `npm test` never depends on a Redis someone else
 * started. Its URL reaches every test worker as `SVC_TEST_REDIS_URL` (test/helpers/redis.ts).
 */
/* global process, URL */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function setup() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-redis-'));
  execFileSync('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'yes', '--dir', dir, '--logfile', join(dir, 'redis.log')]);
  for (let i = 0; i < 100; i += 1) {
    if (spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG') break;
    spawnSync('sleep', ['0.05']);
  }
  process.env.SVC_TEST_REDIS_URL = `redis://127.0.0.1:${port}`;
  process.env.SVC_TEST_REDIS_DIR = dir;
}

export async function teardown() {
  const url = process.env.SVC_TEST_REDIS_URL;
  if (url) spawnSync('redis-cli', ['-p', new URL(url).port, 'shutdown', 'nosave']);
  if (process.env.SVC_TEST_REDIS_DIR) rmSync(process.env.SVC_TEST_REDIS_DIR, { recursive: true, force: true });
}

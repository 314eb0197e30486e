import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';

import { afterAll, describe, expect, it } from '@jest/globals';

/** test/redis-setup.js, the global setup that gives a test run (and each tier run side by side) its own Redis. */
interface RedisSetup {
  startRedis: (port: number) => { url: string; dir: string };
}
const { startRedis } = (await import(String(new URL('../redis-setup.js', import.meta.url)))) as RedisSetup;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}

describe("a test run's own Redis", () => {
  const started: number[] = [];
  const folders: string[] = [];
  afterAll(() => {
    for (const port of started) spawnSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave']);
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  // Tiers run side by side (.ci/run): a port taken between the free-port probe and redis-server's bind
  // must fail the setup, not hand the run another tier's Redis (whose teardown would then stop it mid-run).
  it('is refused when another Redis answers on its port', async () => {
    const port = await freePort();
    const foreign = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    started.push(port);
    while (spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() !== 'PONG') {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(() => startRedis(port)).toThrow(`redis-server did not start on 127.0.0.1:${port}`);
    const exited = once(foreign, 'close');
    foreign.kill();
    await exited;
  });

  it('starts one of its own on a free port', async () => {
    const port = await freePort();
    const { url, dir } = startRedis(port);
    started.push(port);
    folders.push(dir);
    expect(url).toBe(`redis://127.0.0.1:${port}`);
    expect(spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim()).toBe('PONG');
  });
});

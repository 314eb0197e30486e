import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';

import { createPinoLogger } from '../../lib/index.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-exit-flush-'));
const root = new URL('../..', import.meta.url).pathname;

describe('loggers flush at exit through one shared listener', () => {
  it('attack: many loggers (an embedder making one a tenant) add no process listener each: no MaxListenersExceededWarning, none kept reachable for ever', async () => {
    const warnings: string[] = [];
    const heard = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', heard);
    const before = { exit: process.listenerCount('exit'), beforeExit: process.listenerCount('beforeExit') };
    try {
      for (let i = 0; i < 25; i += 1) {
        createPinoLogger({ destination: join(dir, `tenant-${i}.log`) }).info('started', { tenant: i });
        createPinoLogger({ destination: join(dir, `sync-${i}.log`), sync: true }).info('started', { tenant: i });
      }
      await new Promise((resolve) => setImmediate(resolve));
      const after = { exit: process.listenerCount('exit'), beforeExit: process.listenerCount('beforeExit') };
      expect(after.exit).toBeLessThanOrEqual(before.exit + 1);
      expect(after.beforeExit).toBeLessThanOrEqual(before.beforeExit + 1);
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', heard);
    }
  });

  it('honest: a routine line still in the buffer (no warning, no 4 KiB behind it, the periodic flush not yet due) reaches the log when the process exits', () => {
    const file = join(dir, 'exiting.log');
    const script = `
      import { existsSync } from 'node:fs';
      import { createPinoLogger } from '${root}lib/index.ts';
      const logger = createPinoLogger({ destination: ${JSON.stringify(file)}, format: 'json' });
      // The file opens asynchronously; the line is written once it is open, then the process exits at once.
      while (!existsSync(${JSON.stringify(file)})) await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      logger.info('management_audit', { action: 'clients.disable', outcome: 'done' });
      process.exit(0);
    `;
    const run = spawnSync(process.execPath, ['--import', `file://${root}node_modules/tsx/dist/loader.mjs`, '--input-type=module', '-e', script], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect([run.status, run.stderr]).toEqual([0, expect.not.stringContaining('Error')]);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ level: 'info', event: 'management_audit', action: 'clients.disable' });
  });
  it('honest: in a worker thread (pino flushes only the main thread\'s), a routine line still in the buffer reaches the log when the worker ends; its loggers add one exit listener in all', () => {
    const file = join(dir, 'worker.log');
    const worker = join(dir, 'worker.mjs');
    writeFileSync(
      worker,
      `
      import { existsSync } from 'node:fs';
      import { parentPort } from 'node:worker_threads';
      import { tsImport } from '${root}node_modules/tsx/dist/esm/api/index.mjs';
      const { createPinoLogger } = await tsImport('${root}lib/index.ts', import.meta.url);
      const before = process.listenerCount('exit');
      for (let i = 0; i < 25; i += 1) createPinoLogger({ destination: ${JSON.stringify(join(dir, 'worker-tenant.log'))} });
      const logger = createPinoLogger({ destination: ${JSON.stringify(file)}, format: 'json' });
      parentPort.postMessage(process.listenerCount('exit') - before);
      while (!existsSync(${JSON.stringify(file)})) await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      logger.info('management_audit', { action: 'clients.enable', outcome: 'done' });
    `,
    );
    const script = `
      import { Worker } from 'node:worker_threads';
      const worker = new Worker(${JSON.stringify(worker)}, { execArgv: [] });
      worker.on('message', (added) => console.log(added));
      worker.on('error', (err) => { console.error('Error', err); process.exitCode = 1; });
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect([run.status, run.stderr]).toEqual([0, expect.not.stringContaining('Error')]);
    expect(readFileSync(file, 'utf8')).toContain('"event":"management_audit","action":"clients.enable"');
    expect(Number(run.stdout)).toBeLessThanOrEqual(1);
  });
});

/**
 * docs/getting-started.md as a new user runs it: its two commands, in a clone of the committed state, start the
 * example server on the embedded defaults.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { blockWith, guide, root, runShell, start } from '../helpers/guides.js';
import { freePort, waitFor } from '../helpers/processes.js';

describe('getting-started.md, run as written in a clone', () => {
  const gettingStarted = guide('getting-started.md');
  let clone = '';
  beforeAll(() => {
    clone = mkdtempSync(join(tmpdir(), 'svc-guides-clone-'));
  });
  afterAll(() => {
    if (clone) rmSync(clone, { recursive: true, force: true });
  });

  it("getting-started.md: in a clone, its two commands start the example server on the embedded defaults, with as many start warnings as the guide counts", async () => {
    const commands = blockWith(gettingStarted, 'sh', 'npm install', 'npm start').trim().split('\n');
    expect(commands).toHaveLength(2);
    // .ci/run is that new user: it ran `npm install` on a clean clone, which is this folder; elsewhere the committed
    // state is cloned, as `git clone` gives it, and installed.
    const ranByCi = process.env.DIST_BUILT_BY_INSTALL === '1';
    if (ranByCi) {
      expect(readFileSync(join(root, '.ci/run'), 'utf8')).toContain(`\n${commands[0] as string} ||`);
      // Nothing beside the committed state but what the install made and the tests' own output folder.
      const extra = execFileSync('git', ['status', '--porcelain', '--ignored'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
      expect(extra.filter((line) => !['!! node_modules/', '!! dist/', '!! test-output/'].includes(line))).toEqual([]);
    } else {
      execFileSync('git', ['clone', '--quiet', `file://${root}`, clone], { stdio: ['ignore', 'pipe', 'pipe'] });
      runShell(commands[0] as string, clone);
    }
    const port = await freePort();
    const server = start(commands[1] as string, ranByCi ? root : clone, { PORT: String(port) });
    try {
      const discovery = (await (await waitFor(`http://localhost:${port}/oidc/v1/.well-known/openid-configuration`, 120_000)).json()) as { issuer: string };
      expect(discovery.issuer).toBe(`http://localhost:${port}/oidc/v1`);
      const stated = /one warning line per unsafe default still in force \((\w+): ([^)]*)\)/.exec(gettingStarted.replace(/\s+/g, ' '));
      const count = ['four', 'five', 'six', 'seven', 'eight', 'nine'].indexOf(stated?.[1] ?? '') + 4;
      expect(stated?.[2]?.split(',')).toHaveLength(count);
      expect(server.output().split('\n').filter((l) => l.includes('"event":"unsafe_default"'))).toHaveLength(count);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- npm start output:\n${server.output()}`);
    } finally {
      await server.stop();
    }
  }, 300_000);
});

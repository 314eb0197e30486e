import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';

const root = new URL('../..', import.meta.url).pathname;
const run = (cmd: string, args: string[], cwd: string): string =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });

describe('an install from git', () => {
  it('builds dist/ through the prepare script, so the svc-connect bin and the package import work', () => {
    const scratch = mkdtempSync(join(tmpdir(), 'svc-git-install-'));
    try {
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    // The committed state of this repository, as `npm install git+https://…` would fetch it.
    run('npm', ['install', '--no-audit', '--no-fund', '--silent', `git+file://${root}`], scratch);
    expect(existsSync(join(scratch, 'node_modules/svc-connect/dist/lib/cli.js'))).toBe(true);
    const help = run(join(scratch, 'node_modules/.bin/svc-connect'), ['--help'], scratch);
    for (const command of ['serve', 'config', 'keys', 'clients', 'invitations', 'subjects']) expect(help).toContain(`  ${command}`);
    const imported = run('node', ['--input-type=module', '-e', "const m = await import('svc-connect'); console.log(typeof m.createApp, typeof m.rotateKeysFile)"], scratch);
    expect(imported.trim()).toBe('function function');
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 180_000);
});

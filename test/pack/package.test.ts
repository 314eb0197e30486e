import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';

const root = new URL('../..', import.meta.url).pathname;
const run = (cmd: string, args: string[], cwd: string): string =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });

describe('the packed tarball', () => {
  it('installs into a scratch project, type-checks its imports and serves discovery', () => {
    const out = mkdtempSync(join(tmpdir(), 'svc-pack-'));
    run('npm', ['pack', '--ignore-scripts', '--pack-destination', out, '--silent'], root);
    const tarball = readdirSync(out).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    const files = run('tar', ['-tzf', join(out, tarball as string)], out).split('\n');
    expect(files).toContain('package/dist/lib/index.js');
    expect(files).toContain('package/dist/lib/index.d.ts');
    expect(files).toContain('package/dist/lib/cli.js');
    expect(files).toContain('package/dist/examples/index.js');
    expect(files).toContain('package/dist/examples/index.d.ts');
    // The server the CLI runs is in the library; no example that needs a devDependency is shipped.
    expect(files).toContain('package/dist/lib/server.js');
    expect(files).toContain('package/examples/systemd/svc-connect.service');
    expect(files.filter((f) => /^package\/dist\/examples\/(server|relying-party|embed-koa|write-config-reference)\./.test(f))).toEqual([]);
    expect(files.some((f) => f.startsWith('package/test/') || f.startsWith('package/lib/') || f.endsWith('.ts') && !f.endsWith('.d.ts'))).toBe(false);

    const scratch = mkdtempSync(join(tmpdir(), 'svc-scratch-'));
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module', dependencies: { 'svc-connect': `file:${join(out, tarball as string)}` } }));
    run('npm', ['install', '--no-audit', '--no-fund', '--silent'], scratch);
    writeFileSync(
      join(scratch, 'app.ts'),
      `import { createApp, createConfiguration, loadSettings, type ClaimModule, type SvcApp } from 'svc-connect';
import { createDemoClaimModules, personModule, tableLookup, DEMO_PEOPLE, type PersonLookup } from 'svc-connect/examples';
const settings = loadSettings({ env: {}, properties: { 'svc.port': 0 } });
const module: ClaimModule = { name: 'm', provides: ['email'], resolve: () => ({}) };
const lookup: PersonLookup = tableLookup(DEMO_PEOPLE);
export const build = (): Promise<SvcApp> => createApp(settings, { claimModules: [module] });
export const person: ClaimModule = personModule(lookup);
export const buildWithExamples = (): Promise<SvcApp> => createApp(settings, { claimModules: createDemoClaimModules() });
export const configure: typeof createConfiguration = createConfiguration;
`,
    );
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [join(root, 'node_modules/@types'), join(scratch, 'node_modules/@types')] }, files: ['app.ts'] }),
    );
    run(join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], scratch);

    writeFileSync(
      join(scratch, 'serve.mjs'),
      `import { createApp, loadSettings, silentLogger } from 'svc-connect';
import { createDemoClaimModules } from 'svc-connect/examples';
const app = await createApp(loadSettings({ env: {}, properties: { 'svc.base-url': 'http://127.0.0.1:1' } }), { logger: silentLogger, claimModules: createDemoClaimModules() });
const server = app.listen(0, '127.0.0.1');
await new Promise((r) => server.once('listening', r));
const res = await fetch('http://127.0.0.1:' + server.address().port + '/oidc/v1/.well-known/openid-configuration');
const doc = await res.json();
console.log(JSON.stringify({ status: res.status, issuer: doc.issuer, scopes: doc.scopes_supported }));
server.close(); await app.svc.close();`,
    );
    const served = JSON.parse(run(process.execPath, ['serve.mjs'], scratch).trim().split('\n').pop() as string) as { status: number; issuer: string; scopes: string[] };
    expect(served).toEqual({ status: 200, issuer: 'http://127.0.0.1:1/oidc/v1', scopes: ['openid', 'profile', 'email', 'svc.insurance', 'svc.insurance.verified'] });
    expect(run(join(scratch, 'node_modules/.bin/svc-connect'), ['--help'], scratch)).toContain('Usage: svc-connect <command>');
  }, 240_000);
});

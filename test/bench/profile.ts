/**
 * `npm run bench:profile [-- ours|baseline]`: runs one bench server under `node --cpu-prof` with the
 * driver against it for 8 s, then prints the functions with the most self time (by file), so
 * overhead over vanilla oidc-provider can be found.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { exportJWK, generateKeyPair } from 'jose';

import { generateSigningKeys } from '../../lib/index.js';
import { freePort } from '../helpers/processes.js';
import type { ServerSpec } from './common.js';

const kind = process.argv[2] === 'baseline' ? 'baseline' : 'ours';
const root = new URL('../..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'svc-prof-'));
const rp = await generateKeyPair('RSA-OAEP-256', { modulusLength: 2048 });
const spec: ServerSpec = {
  port: await freePort(),
  jwks: await generateSigningKeys(),
  encryptionJwk: { ...(await exportJWK(rp.publicKey)), use: 'enc', kid: 'bench-enc' },
  signingAlg: 'RS256',
  cookieKey: randomBytes(32).toString('hex'),
  keyPrefix: 'bench:',
};
const server = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', dir, '--import', 'tsx', `test/bench/server-${kind}.ts`], {
  cwd: root,
  env: { ...process.env, NODE_OPTIONS: '', BENCH_SERVER: JSON.stringify(spec) },
  stdio: ['ignore', 'pipe', 'inherit'],
});
await new Promise<void>((resolve) => server.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
const base = kind === 'ours' ? `http://127.0.0.1:${spec.port}/oidc/v1` : `http://127.0.0.1:${spec.port}`;
const driver = spawn(process.execPath, ['--import', 'tsx', 'test/bench/driver.ts'], {
  cwd: root,
  env: {
    ...process.env,
    NODE_OPTIONS: '',
    BENCH_DRIVER: JSON.stringify({ mode: 'flow', discoveryUrl: `${base}/.well-known/openid-configuration`, concurrency: 8, warmupSeconds: 1, seconds: 8, login: 'demo', password: 'demo', scope: 'openid profile email' }),
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let driverOut = '';
driver.stdout.on('data', (d: Buffer) => (driverOut += d.toString()));
await new Promise((resolve) => driver.on('exit', resolve));
const driven = JSON.parse(driverOut.trim()) as { flows: number; errors: number; seconds: number };
process.stdout.write(`${kind}: ${driven.flows} flows in ${driven.seconds.toFixed(1)} s (${(driven.flows / driven.seconds).toFixed(1)}/s), ${driven.errors} errors\n`);
server.kill('SIGTERM');
await new Promise((resolve) => server.on('exit', resolve));

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile')) as string;
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: Node[] };
const total = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0);
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
for (const n of profile.nodes) {
  const url = n.callFrame.url.replace(/^file:\/\//, '').replace(root, '');
  const where = url.includes('node_modules/') ? url.slice(url.indexOf('node_modules/') + 13) : url || '(native)';
  const key = `${n.callFrame.functionName || '(anonymous)'} ${where}:${n.callFrame.lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + (n.hitCount ?? 0));
  const pkg = where.split('/').slice(0, where.startsWith('@') ? 2 : 1).join('/');
  byFile.set(pkg, (byFile.get(pkg) ?? 0) + (n.hitCount ?? 0));
}
const top = (m: Map<string, number>, n: number): string =>
  [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)}%  ${k}`).join('\n');
const ours = new Map([...byFunction].filter(([k]) => / (lib|adapters|policies|examples)\/|pino|koa-compose|koa-mount|@koa\/router|prom-client/.test(k)));
const { writeFileSync } = await import('node:fs');
writeFileSync(join(tmpdir(), `svc-profile-${kind}.json`), JSON.stringify({ flows: driven.flows, byFunction: Object.fromEntries(byFunction), total }));
process.stdout.write(`\n${kind}: self time by package/folder\n${top(byFile, 15)}\n\nby function\n${top(byFunction, 30)}\n\nin svc-connect's own code and its extra packages\n${top(ours, 25)}\n`);

/**
 * The guides as a new user runs them (issue 24; getting-started.md in getting-started.test.ts): in a
 * fresh folder, the commands of docs/embedding.md install the packed tarball and run its server with `npx tsx server.ts`; the
 * relying-party guide's own-project commands set up a folder where step 1, section 4 and step 3's
 * last lines run as one `rp.ts` against the example server of that tarball. Every command and every
 * line of code comes from the markdown; the test supplies only the inputs the guides name (a users
 * file, a port, the initial access token, the browser).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import { hashPassword } from '../../examples/users-file.js';
import { pairwiseSubOf, TEST_PAIRWISE_KEY } from '../helpers/app.js';
import { runCodeFlow, signIn } from '../helpers/flow.js';
import { baseEnv, blocksOf, blockWith, guide, root, runShell, start, type Started } from '../helpers/guides.js';
import { freePort, waitFor } from '../helpers/processes.js';

/** A command the guide's prose names in backticks, e.g. "run with `npx tsx server.ts`". */
function namedCommand(markdown: string, pattern: RegExp): string {
  const command = pattern.exec(markdown)?.[1];
  if (!command) throw new Error(`the guide names no command matching ${pattern.source}`);
  return command;
}

/** Resolves with the first stdout line starting with `prefix` (without it). */
function lineStartingWith(started: Started, prefix: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "${prefix}" line within ${timeoutMs} ms:\n${started.output()}`)), timeoutMs);
    let buffer = '';
    const onData = (d: Buffer): void => {
      buffer += d.toString();
      const line = buffer.split('\n').find((l) => l.startsWith(prefix));
      if (line !== undefined) {
        clearTimeout(timer);
        started.child.stdout.off('data', onData);
        resolve(line.slice(prefix.length));
      }
    };
    started.child.stdout.on('data', onData);
    started.child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`exited before a "${prefix}" line:\n${started.output()}`));
    });
  });
}

/**
 * Joins TypeScript blocks of a guide into one module, as the guide tells its reader: each `import`
 * once at the top (the names of one module merged), then the code of each block in order.
 */
function oneModule(parts: { imports: string[]; code: string[] }): string {
  const named = new Map<string, Set<string>>();
  const namespaces = new Map<string, string>();
  for (const block of parts.imports) {
    for (const m of block.matchAll(/^import\s+(.+?)\s+from\s+'([^']+)';$/gm)) {
      const [, clause, from] = m as unknown as [string, string, string];
      const namespace = /^\*\s+as\s+(\w+)$/.exec(clause)?.[1];
      if (namespace) namespaces.set(from, namespace);
      else for (const name of (/^\{(.*)\}$/.exec(clause)?.[1] ?? '').split(',').map((n) => n.trim()).filter(Boolean)) named.set(from, (named.get(from) ?? new Set()).add(name));
    }
  }
  const imports = [
    ...[...namespaces].map(([from, name]) => `import * as ${name} from '${from}';`),
    ...[...named].map(([from, names]) => `import { ${[...names].join(', ')} } from '${from}';`),
  ];
  const bodies = parts.code.map((c) => c.replace(/^import\s+.+?\s+from\s+'[^']+';\n/gm, ''));
  return `${imports.join('\n')}\n${bodies.join('\n')}`;
}

describe('the guides, run as written in fresh folders with the packed package', () => {
  let tarball = '';
  let providerDir = '';
  /** The folders this suite made, removed at its end. */
  const made: string[] = [];
  const fresh = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  const embedding = guide('embedding.md');
  const relyingParty = guide('relying-party.md');

  beforeAll(() => {
    const out = fresh('svc-guides-pack-');
    execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', out, '--silent'], { cwd: root, env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const name = readdirSync(out).find((f) => f.endsWith('.tgz'));
    if (!name) throw new Error('npm pack wrote no tarball');
    tarball = join(out, name);

    // embedding.md's set-up commands, with the package name pointing at the tarball.
    providerDir = fresh('svc-guides-provider-');
    const setup = blockWith(embedding, 'sh', 'npm init -y', 'npm install svc-connect');
    runShell(setup.replace(/\bnpm install svc-connect\b/, `npm install ${tarball}`), providerDir);
  }, 300_000);

  it("embedding.md: the fresh folder is an ES module with tsx, and `npx tsx server.ts` serves a sign-in with the users file's claims", async () => {
    const pkg = JSON.parse(readFileSync(join(providerDir, 'package.json'), 'utf8')) as { type?: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
    expect(pkg.type).toBe('module');
    expect(Object.keys(pkg.dependencies ?? {})).toEqual(expect.arrayContaining(['svc-connect', 'koa']));
    expect(Object.keys(pkg.devDependencies ?? {})).toContain('tsx');

    writeFileSync(join(providerDir, 'server.ts'), blockWith(embedding, 'ts', 'fileClaimModule(users)', '.listen(settings.port)'));
    const password = 'alice-password-for-the-guide';
    writeFileSync(
      join(providerDir, 'users.json'),
      JSON.stringify([{ login: 'alice', sub: 'alice-0001', password: await hashPassword(password, { N: 2 ** 14, r: 8, p: 1 }), claims: { email: 'alice@example.com', email_verified: true } }]),
    );
    const client: ClientMetadata = { client_id: 'guide-rp', client_secret: 'a-secret-for-the-guide-relying-party', redirect_uris: ['http://rp.localhost/cb'] };
    writeFileSync(join(providerDir, 'clients.json'), JSON.stringify([client]));
    const port = await freePort();
    const issuer = `http://localhost:${port}/oidc/v1`;
    const server = start(namedCommand(embedding, /run with `(npx tsx server\.ts)`/), providerDir, {
      PORT: String(port),
      SVC_BASE_URL: `http://localhost:${port}`,
      SVC_CLIENTS_FILE: 'clients.json',
      SVC_SUBJECT_PAIRWISE_KEY: TEST_PAIRWISE_KEY,
      SVC_LOG_LEVEL: 'warn',
    });
    try {
      const discovery = (await (await waitFor(`${issuer}/.well-known/openid-configuration`, 60_000)).json()) as { claims_supported: string[]; scopes_supported: string[] };
      expect(discovery.claims_supported).toEqual(expect.arrayContaining(['sub', 'email', 'email_verified']));
      expect(discovery.scopes_supported).toEqual(['openid', 'email']);
      const { claims } = await runCodeFlow(issuer, client, { login: 'alice', password, skipUserinfo: true });
      expect(claims).toMatchObject({ iss: issuer, sub: pairwiseSubOf('http://rp.localhost/cb', 'alice-0001', client.client_id) });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- server.ts output:\n${server.output()}`);
    } finally {
      await server.stop();
    }
  }, 120_000);

  it("relying-party.md: the own-project commands, then step 1, section 4 and step 3's end as rp.ts, against the example server: a code, and UserInfo with the demo account's address", async () => {
    const port = await freePort();
    const base = `http://localhost:${port}`;
    // The example server of the package (the guide's `npm start` in a clone), on a free port.
    const server = start('npx svc-connect serve', providerDir, { PORT: String(port), SVC_BASE_URL: base, SVC_LOG_LEVEL: 'warn' });
    let rp: Started | undefined;
    try {
      await waitFor(`${base}/oidc/v1/.well-known/openid-configuration`, 60_000);
      // The token, as section 0 gets one for a client of your own (`invite --print`), from the package's command line.
      const printed = execFileSync('npx', ['svc-connect', 'invite', '--print', '--url', base], { cwd: providerDir, env: { ...baseEnv(), SVC_MANAGEMENT_PASSWORD: 'admin' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      const token = printed.trim();
      expect(token).toMatch(/^[A-Za-z0-9_-]{20,}$/);

      const rpDir = fresh('svc-guides-rp-');
      runShell(blockWith(relyingParty, 'sh', 'npm init -y', 'npm install openid-client jose'), rpDir);
      const step1 = blockWith(relyingParty, 'ts', "generateKeyPair('RSA-OAEP-256'");
      // Step 2 registers without a signing key; section 4 registers instead of it, so only its imports count.
      const step2Imports = blocksOf(relyingParty, 'ts').filter((b) => b.includes('dynamicClientRegistration') && !b.includes('request_object_signing_alg'));
      expect(step2Imports).toHaveLength(1);
      const step3 = blockWith(relyingParty, 'ts', 'oidc.authorizationCodeGrant');
      const metadata = blockWith(relyingParty, 'ts', 'request_object_signing_alg', 'dynamicClientRegistration');
      const push = blockWith(relyingParty, 'ts', 'buildAuthorizationUrlWithPAR');
      const step3End = step3.slice(step3.indexOf('const tokens ='));
      expect(step3End.startsWith('const tokens =')).toBe(true);
      const harness = {
        // The guide's inputs: the token (above) and the URL the browser comes back to.
        start: `import { createInterface } from 'node:readline';\nconst token = process.env.SVC_INITIAL_ACCESS_TOKEN as string;`,
        browser: `console.log('AUTHORIZE ' + url.href);\nconst callbackUrl = new URL(await new Promise<string>((resolve) => createInterface({ input: process.stdin }).once('line', resolve)));`,
        end: `console.log('RESULT ' + JSON.stringify({ claims, userinfo }));\nprocess.exit(0);`,
      };
      const program = oneModule({
        imports: [harness.start, step1, ...step2Imports, metadata, push, step3],
        code: [harness.start, step1, metadata, push, harness.browser, step3End, harness.end],
      }).replaceAll('http://localhost:3000', base);
      writeFileSync(join(rpDir, 'rp.ts'), program);

      rp = start(namedCommand(relyingParty, /run it with\s+`(npx tsx rp\.ts)`/), rpDir, { SVC_INITIAL_ACCESS_TOKEN: token });
      const authorize = await lineStartingWith(rp, 'AUTHORIZE ', 60_000);
      // Only client_id and a one-time request_uri travel through the browser.
      expect([...new URL(authorize).searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
      const { callbackUrl } = await signIn(authorize, { login: 'demo', password: 'demo' });
      expect(`${callbackUrl.origin}${callbackUrl.pathname}`).toBe('http://localhost:8080/callback');
      expect(callbackUrl.searchParams.get('error')).toBeNull();
      expect(callbackUrl.searchParams.get('code')).toEqual(expect.any(String));
      const result = lineStartingWith(rp, 'RESULT ', 60_000);
      rp.child.stdin.write(`${callbackUrl.href}\n`);
      const { claims, userinfo } = JSON.parse(await result) as { claims: Record<string, unknown>; userinfo: Record<string, unknown> };
      expect(claims).toMatchObject({ iss: `${base}/oidc/v1`, sub: expect.any(String) });
      expect(userinfo).toMatchObject({ sub: claims.sub, email: 'erika.mustermann@example.com' });
      // The token registered this one client: a second registration with it is refused.
      const again = await fetch(`${base}/oidc/v1/register`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['http://localhost:8080/callback'] }) });
      expect([again.status, ((await again.json()) as { error?: string }).error]).toEqual([401, 'invalid_token']);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- example server output:\n${server.output()}\n--- rp.ts output:\n${rp?.output() ?? ''}`);
    } finally {
      await rp?.stop();
      await server.stop();
    }
  }, 180_000);
});

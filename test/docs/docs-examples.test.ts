/**
 * The docs' examples, run as a new user would run them (issue 15): every ```properties block loads
 * through loadSettings, every environment variable a ```sh command sets is one of ours (or one the
 * docs give to another program), and the runnable ones run: the getting-started configuration
 * serves a flow with its static client, and every ```ts block that starts a server serves a flow
 * with the users file it reads. `npm run typecheck` compiles every ```ts block besides.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import { describe, expect, it, jest } from '@jest/globals';
import type { ClientMetadata } from 'oidc-provider';

import { hashPassword } from '../../examples/users-file.js';
import { loadSettings } from '../../lib/index.js';
import { findUnsafeDefaults } from '../../lib/settings/unsafe.js';
import { PROPERTY_DEFINITIONS, ruleDerivedEnv } from '../../lib/settings/definitions.js';
import { pairwiseSubOf, TEST_PAIRWISE_KEY } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { freePort, PROCESS_MS, waitFor } from '../helpers/processes.js';

jest.setTimeout(PROCESS_MS);

const root = new URL('../..', import.meta.url).pathname;
const runDir = join(root, 'test-output', 'doc-run');

/** The environment variables of every property. */
const OUR_VARIABLES = new Set(PROPERTY_DEFINITIONS.flatMap((d) => [ruleDerivedEnv(d.name), ...(d.env ? [d.env] : [])]));
/** Variables the docs hand to programs other than the server (the relying-party example, `svc-connect register`). */
const OTHER_PROGRAMS = new Set(['SVC_ISSUER', 'SVC_INITIAL_ACCESS_TOKEN', 'SVC_REDIRECT_URI']);

interface Block {
  source: string;
  lang: string;
  code: string;
  /** The text before the block, back to the previous block. */
  before: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownFiles(path) : name.endsWith('.md') ? [path] : [];
  });
}

const blocks: Block[] = [join(root, 'README.md'), ...markdownFiles(join(root, 'docs'))].flatMap((file) => {
  const text = readFileSync(file, 'utf8');
  let previousEnd = 0;
  return [...text.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m, i) => {
    const block = { source: `${relative(root, file)}#${i + 1}`, lang: m[1] as string, code: m[2] as string, before: text.slice(previousEnd, m.index) };
    previousEnd = (m.index ?? 0) + m[0].length;
    return block;
  });
});

/** Leading `NAME=value` assignments of each command of a shell block (continuations joined). */
function commandEnvironments(code: string): Record<string, string>[] {
  const commands = code.replace(/\\\n/g, ' ').split('\n');
  return commands
    .map((line) => {
      const env: Record<string, string> = {};
      let rest = line.trim().replace(/^export\s+/, '');
      for (;;) {
        const m = /^([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|\S*)\s*/.exec(rest);
        if (!m) break;
        env[m[1] as string] = (m[2] as string).replace(/^(["'])(.*)\1$/, '$2');
        rest = rest.slice(m[0].length);
      }
      return env;
    })
    .filter((env) => Object.keys(env).length > 0);
}

/** Starts `node --import tsx <script>` in `cwd` with exactly `env` (plus PATH and HOME). */
function startProcess(script: string, cwd: string, env: Record<string, string>): { output: () => string; stop: () => Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return {
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A fresh directory under test-output (inside the repository, so node_modules resolve). */
function freshDir(name: string): string {
  const dir = join(runDir, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('the docs examples', () => {
  it('finds the blocks it runs (is the extraction broken?)', () => {
    expect(blocks.filter((b) => b.lang === 'properties').length).toBeGreaterThanOrEqual(1);
    expect(blocks.filter((b) => b.lang === 'sh').length).toBeGreaterThanOrEqual(10);
    expect(blocks.filter((b) => b.lang === 'ts' && b.code.includes('.listen(settings.port)')).length).toBeGreaterThanOrEqual(3);
  });

  describe.each(blocks.filter((b) => b.lang === 'properties').map((b) => [b.source, b] as const))('```properties %s', (_source, block) => {
    it('loads through loadSettings as the file it is', () => {
      const dir = freshDir(`properties-${block.source.replace(/[^\w]+/g, '-')}`);
      const name = /^#\s*(\S+\.properties)/m.exec(block.code)?.[1] ?? 'svc.properties';
      writeFileSync(join(dir, name), block.code);
      expect(() => loadSettings({ env: {}, file: join(dir, name) })).not.toThrow();
    });
  });

  const shellEnvironments = blocks.filter((b) => b.lang === 'sh').flatMap((b) => commandEnvironments(b.code).map((env) => [b.source, env] as const));
  it.each(shellEnvironments)('```sh %s: the variables %j are ours, or another program\'s', (_source, env) => {
    const ignored: string[] = [];
    // The file SVC_CONFIG names is the guide's own (loaded above and run below), not this directory's.
    const { SVC_CONFIG: _file, ...rest } = env;
    // A value the shell computes (`"$(cat …)"`) is not in the docs: its variable must be a known one.
    const computed = Object.keys(rest).filter((name) => rest[name]?.includes('$'));
    for (const name of computed) {
      expect([...OUR_VARIABLES, ...OTHER_PROGRAMS]).toContain(name);
      delete rest[name];
    }
    expect(() => loadSettings({ env: rest, onIgnoredVariable: (name) => ignored.push(name) })).not.toThrow();
    for (const name of ignored) expect(OTHER_PROGRAMS).toContain(name);
  });

  // What `$(cat …)` reads in a production command: a random secret of 32+ characters.
  const production = shellEnvironments.filter(([, env]) => env.NODE_ENV === 'production');
  it.each(production)('```sh %s: a production command leaves no unsafe default (it starts)', (_source, env) => {
    const given = Object.fromEntries(Object.entries(env).map(([name, value]) => [name, value.includes('$') ? 'a-secret-read-from-a-file-of-43-characters' : value]));
    const settings = loadSettings({ env: given, onIgnoredVariable: () => undefined });
    expect(settings.production).toBe(true);
    expect(findUnsafeDefaults(settings, { management: true })).toEqual([]);
  });

  it('getting-started "Configure it": the svc.properties, the keys command and clients.json start a server that signs in its static client', async () => {
    const guide = blocks.filter((b) => b.source.startsWith('docs/getting-started.md'));
    const properties = guide.find((b) => b.lang === 'properties') as Block;
    const commands = guide.find((b) => b.lang === 'sh' && b.code.includes('SVC_CONFIG=')) as Block;
    const clients = guide.find((b) => b.lang === 'json' && b.before.includes('clients.json')) as Block;
    const dir = freshDir('getting-started');
    writeFileSync(join(dir, 'svc.properties'), properties.code);
    writeFileSync(join(dir, 'clients.json'), clients.code);
    // The guide's commands, run from this directory: `npx tsx lib/cli.ts …` and `npm start`.
    // The guide's own chmod: the files it has her write hold secrets (a copy under umask 022 is 0644).
    const chmod = /^chmod (600) (.+)$/m.exec(commands.code);
    for (const file of chmod?.[2]?.split(' ') ?? []) chmodSync(join(dir, file), Number.parseInt(chmod?.[1] ?? '', 8));
    const keys = /npx tsx lib\/cli\.ts (keys generate .*)$/m.exec(commands.code)?.[1]?.split(' ') as string[];
    const generated = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'lib/cli.ts'), ...keys], { cwd: dir, encoding: 'utf8' });
    expect(generated.status).toBe(0);
    const start = commandEnvironments(commands.code).find((env) => env.SVC_CONFIG) as Record<string, string>;
    const port = await freePort();
    const server = startProcess(join(root, 'examples/server.ts'), dir, { ...start, PORT: String(port) });
    try {
      const base = /^svc\.base-url\s*=\s*(\S+)/m.exec(properties.code)?.[1] as string;
      const doc = (await (await waitFor(`http://localhost:${port}/oidc/v1/.well-known/openid-configuration`)).json()) as { issuer: string };
      expect(doc.issuer).toBe(`${base}/oidc/v1`);
      // The static client of clients.json authenticates at the token endpoint (the code is made up).
      const [client] = JSON.parse(clients.code) as ClientMetadata[];
      const token = await fetch(`http://localhost:${port}/oidc/v1/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${client?.client_id}:${client?.client_secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code: 'made-up', redirect_uri: (client?.redirect_uris as string[])[0] as string, code_verifier: 'x'.repeat(43) }),
      });
      expect(((await token.json()) as { error: string }).error).toBe('invalid_grant');
      expect(server.output()).not.toContain('secret_file_exposed');
    } finally {
      await server.stop();
    }
  });

  const servers = blocks.filter((b) => b.lang === 'ts' && b.code.includes('.listen(settings.port)'));
  it.each(servers.map((b) => [b.source, b] as const))('```ts %s runs as server.ts and signs a person of users.json in', async (source, block) => {
    const dir = freshDir(`server-${source.replace(/[^\w]+/g, '-')}`);
    const toRoot = relative(dir, root);
    const program = block.code.replaceAll("'svc-connect/examples'", `'${toRoot}/examples/index.ts'`).replaceAll("'svc-connect'", `'${toRoot}/lib/index.ts'`);
    writeFileSync(join(dir, 'server.ts'), program);
    const password = 'alice-password-for-the-docs';
    writeFileSync(join(dir, 'users.json'), JSON.stringify([{ login: 'alice', sub: 'alice-0001', password: await hashPassword(password, { N: 2 ** 14, r: 8, p: 1 }) }]));
    const client: ClientMetadata = { client_id: 'docs-rp', client_secret: 'a-secret-for-the-docs-relying-party', redirect_uris: ['http://rp.localhost/cb'] };
    writeFileSync(join(dir, 'clients.json'), JSON.stringify([client]));
    const port = await freePort();
    const basePath = /mount\('(\/[^']+)'/.exec(block.code)?.[1] ?? '';
    const issuer = `http://localhost:${port}${basePath}/oidc/v1`;
    const server = startProcess('server.ts', dir, {
      PORT: String(port),
      SVC_BASE_URL: `http://localhost:${port}${basePath}`,
      SVC_CLIENTS_FILE: 'clients.json',
      SVC_SUBJECT_PAIRWISE_KEY: TEST_PAIRWISE_KEY,
      SVC_LOG_LEVEL: 'warn',
    });
    try {
      await waitFor(`${issuer}/.well-known/openid-configuration`);
      const { claims } = await runCodeFlow(issuer, client, { login: 'alice', password });
      // The static client is pairwise (the default): alice's sub for its sector.
      expect(claims).toMatchObject({ iss: issuer, sub: pairwiseSubOf('http://rp.localhost/cb', 'alice-0001', client.client_id) });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- ${source} output:\n${server.output()}`);
    } finally {
      await server.stop();
    }
  });
});

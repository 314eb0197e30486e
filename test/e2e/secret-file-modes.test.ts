import { chmodSync, chownSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it, jest } from '@jest/globals';

import { generateProviderKeys } from '../../lib/index.js';
import { runCli as cli } from '../helpers/cli.js';
import { capturingLogger } from '../helpers/logs.js';
import { freePort, PROCESS_MS, startServerProcess, waitFor } from '../helpers/processes.js';
import { confidentialClient, startApp } from '../helpers/app.js';

jest.setTimeout(PROCESS_MS);

const PASSWORD = 'secret-file-modes-password-1';

/** Files root provides the service with can only be made by root (as CI runs the tests). */
const asRoot = process.getuid?.() === 0 ? it : it.skip;

/** The `secret_file_exposed` lines among captured ones (`{"e": event, …}`). */
const exposures = (lines: string[]): Record<string, unknown>[] =>
  lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'secret_file_exposed');

/**
 * Files holding the provider's private keys or a secret property, left readable by every user of the machine (a copy
 * made under umask 022, a Kubernetes secret's default mode 0644): the provider still starts, and says so.
 */
describe('a secret file others may read is warned about, never refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-secret-modes-'));
  const keysFile = join(dir, 'keys.json');
  let keysText = '';
  const servers: { stop(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop();
  });

  const startWithKeys = async (mode: number): Promise<{ lines: string[]; reload: () => Promise<unknown>; close: () => Promise<void> }> => {
    keysText ||= JSON.stringify(await generateProviderKeys());
    writeFileSync(keysFile, keysText);
    chmodSync(keysFile, mode);
    const { logger, lines } = capturingLogger();
    const running = await startApp({ logger, properties: { 'svc.keys.file': keysFile } });
    return { lines, reload: () => running.app.svc.reloadKeys(), close: () => running.close() };
  };

  it('attack: a keys file readable by everyone (0644) is named at start and at each reload, with its mode and the fix, never a key', async () => {
    const app = await startWithKeys(0o644);
    try {
      const expected = { e: 'secret_file_exposed', property: 'svc.keys.file', file: keysFile, mode: '0644', holds: "the provider's private keys", fix: `chmod 600 ${keysFile}; only the service user may read it` };
      expect(exposures(app.lines)).toEqual([expected]);
      // The group may read a file of the service user's own (root may give its group read: see below).
      if (process.getuid?.() === 0) chownSync(keysFile, 65534, 65534);
      chmodSync(keysFile, 0o640);
      await app.reload();
      const fix = process.getuid?.() === 0 ? `chown 0 ${keysFile} && chmod 600 ${keysFile}, or leave it root's with chmod 640 and a group of the service user alone; only the service user may read it` : expected.fix;
      expect(exposures(app.lines)).toEqual([expected, { ...expected, mode: '0640', fix }]);
      const text = app.lines.join('\n');
      for (const key of (JSON.parse(keysText) as { keys: { d: string }[] }).keys) expect(text).not.toContain(key.d);
    } finally {
      await app.close();
    }
  });

  it('honest: a keys file of the service user alone (0600, as keys generate writes it; 0400) gives no such line', async () => {
    for (const mode of [0o600, 0o400]) {
      const app = await startWithKeys(mode);
      try {
        await app.reload();
        expect({ mode, lines: exposures(app.lines) }).toEqual({ mode, lines: [] });
      } finally {
        await app.close();
      }
    }
  });

  asRoot('honest: a keys file root gives the service group read of (a Kubernetes secret under fsGroup, 0440; a systemd credential by its ACL) gives no such line; group write does', async () => {
    const lines: Record<string, unknown>[] = [];
    for (const mode of [0o440, 0o640, 0o460, 0o604]) {
      writeFileSync(keysFile, '');
      chownSync(keysFile, 0, 0);
      const app = await startWithKeys(mode);
      await app.reload();
      lines.push(...exposures(app.lines).map(({ mode: shown }) => ({ mode: shown })));
      await app.close();
    }
    expect(lines).toEqual([{ mode: '0460' }, { mode: '0460' }, { mode: '0604' }, { mode: '0604' }]);
  });

  it('attack: a clients file everyone may read that gives a static client its secret is named at start; honest: one of public clients alone is not', async () => {
    const clientsFile = join(dir, 'clients.json');
    const seen: Record<string, unknown>[][] = [];
    for (const client of [confidentialClient(), confidentialClient({ client_secret: undefined, token_endpoint_auth_method: 'none' })]) {
      writeFileSync(clientsFile, JSON.stringify([client]));
      chmodSync(clientsFile, 0o644);
      const { logger, lines } = capturingLogger();
      const running = await startApp({ logger, properties: { 'svc.clients.file': clientsFile } });
      await running.close();
      seen.push(exposures(lines));
      expect(lines.join('\n')).not.toContain(confidentialClient().client_secret);
    }
    expect(seen).toEqual([[expect.objectContaining({ property: 'svc.clients.file', file: clientsFile, mode: '0644', holds: 'client secrets' })], []]);
  });

  it('attack: config check names a configuration file everyone may read that holds a secret property, and still passes (exit 0)', async () => {
    const file = join(dir, 'open.properties');
    writeFileSync(file, `svc.management.password = ${PASSWORD}\nsvc.cookies.keys = ${'k'.repeat(40)}\n`);
    chmodSync(file, 0o644);
    const checked = await cli(['config', 'check', '--file', file]);
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain(`warning: secret_file_exposed: ${file} (mode 0644) holds svc.management.password, svc.cookies.keys: chmod 600 ${file}; only the service user may read it`);
    expect(checked.stdout).not.toContain(PASSWORD);
  });

  it('attack: config check names a configuration file everyone may read whose only secret is the store\'s password, in svc.redis.url or svc.redis.cluster-nodes', async () => {
    for (const [name, value] of [['svc.redis.url', `redis://:${PASSWORD}@127.0.0.1:6379/0`], ['svc.redis.cluster-nodes', `redis://svc:${PASSWORD}@10.0.0.1:6379,redis://svc:${PASSWORD}@10.0.0.2:6379`]] as const) {
      const file = join(dir, 'store.properties');
      writeFileSync(file, `${name} = ${value}\n`);
      chmodSync(file, 0o644);
      const checked = await cli(['config', 'check', '--file', file]);
      expect({ name, code: checked.code }).toEqual({ name, code: 0 });
      expect(checked.stdout).toContain(`warning: secret_file_exposed: ${file} (mode 0644) holds ${name}: chmod 600 ${file}`);
      expect(checked.stdout).not.toContain(PASSWORD);
    }
  });

  it('attack: a secret the environment overrides is still named in a configuration file everyone may read (its value is still there, maybe the same one)', async () => {
    const file = join(dir, 'overridden.properties');
    // A base URL with a password, refused were it in force, is judged as written.
    writeFileSync(file, `svc.management.password = ${PASSWORD}\nsvc.redis.url = redis://:${PASSWORD}@127.0.0.1:6379/0\nsvc.base-url = https://ops:${PASSWORD}@ID.example.com\n`);
    chmodSync(file, 0o644);
    const checked = await cli(['config', 'check', '--file', file], { SVC_MANAGEMENT_PASSWORD: PASSWORD, REDIS_URL: 'redis://127.0.0.1:6379/0', SVC_BASE_URL: 'https://id.example.com' });
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain(`warning: secret_file_exposed: ${file} (mode 0644) holds svc.base-url, svc.redis.url, svc.management.password: chmod 600 ${file}`);
    expect(checked.stdout).not.toContain(PASSWORD);
  });

  it('honest: config check is silent about a configuration file of the service user alone, and about one everyone may read that holds no secret', async () => {
    const own = join(dir, 'own.properties');
    writeFileSync(own, `svc.management.password = ${PASSWORD}\n`);
    chmodSync(own, 0o600);
    const plain = join(dir, 'plain.properties');
    writeFileSync(plain, 'svc.port = 4000\nsvc.mail.from = idp@example.com\nsvc.redis.url = redis://127.0.0.1:6379/0\n');
    chmodSync(plain, 0o644);
    for (const file of [own, plain]) {
      const checked = await cli(['config', 'check', '--file', file]);
      expect({ file, code: checked.code, exposed: checked.stdout.includes('secret_file_exposed') }).toEqual({ file, code: 0, exposed: false });
    }
  });

  it('honest: a base URL written as people write it (capitals, the default port, an IDN host) is no secret, set or overridden', async () => {
    const file = join(dir, 'base-url.properties');
    for (const url of ['HTTPS://ID.Example.com:443/', 'https://bücher.example/oidc/../oidc']) {
      writeFileSync(file, `svc.base-url = ${url}\n`);
      chmodSync(file, 0o644);
      for (const env of [{}, { SVC_BASE_URL: 'https://id.example.com' }] as Record<string, string>[]) {
        const checked = await cli(['config', 'check', '--file', file], env);
        expect({ url, env, code: checked.code, exposed: checked.stdout.includes('secret_file_exposed') }).toEqual({ url, env, code: 0, exposed: false });
      }
    }
  });

  it('attack: the bundled server started on such a configuration file logs it once, and serves', async () => {
    const port = await freePort();
    const file = join(dir, 'server.properties');
    writeFileSync(file, `svc.management.password = ${PASSWORD}\n`);
    chmodSync(file, 0o604);
    const server = startServerProcess({ PORT: String(port), SVC_CONFIG: file, SVC_LOG_FORMAT: 'json' });
    servers.push(server);
    await waitFor(`http://localhost:${port}/healthz`);
    const lines = server.output().split('\n').filter((l) => l.includes('"event":"secret_file_exposed"'));
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 'warn', property: 'SVC_CONFIG', file, mode: '0604', holds: 'svc.management.password' }),
    ]);
    expect(server.output()).not.toContain(PASSWORD);
    expect(readFileSync(file, 'utf8')).toContain(PASSWORD);
  });
});

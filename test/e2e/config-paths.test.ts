import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';

import { generateProviderKeys } from '../../lib/provider/keys.js';
import { loadSettings } from '../../lib/settings/load.js';

import { PROCESS_MS, spawnCli } from '../helpers/processes.js';

jest.setTimeout(PROCESS_MS);

const AUTHENTICATOR = 'export default { authenticate: async () => undefined, exists: async () => false };\n';
const CLAIMS = (name: string): string => `export default { name: '${name}', provides: ['nickname'], resolve: async () => ({}) };\n`;
const ours = (stderr: string): string[] => stderr.split('\n').filter((line) => line.startsWith('svc-connect'));
/** The VALUE column of a property's row in `config check`. */
const valueOf = (stdout: string, name: string): string | undefined => new RegExp(`^${name.replace(/\./g, '\\.')}\\s+(\\S+)\\s`, 'm').exec(stdout)?.[1];

describe('relative paths: a configuration file\'s against its folder, the environment\'s against the working directory', () => {
  const top = mkdtempSync(join(tmpdir(), 'svc-paths-'));
  /** Where the configuration file and what it names live. */
  const etc = join(top, 'etc');
  /** The working directory, elsewhere. */
  const work = join(top, 'work');

  beforeAll(async () => {
    for (const d of [etc, join(etc, 'clients'), join(etc, 'claims'), join(etc, 'mods'), work, join(work, 'node_modules/acme-auth')]) mkdirSync(d, { recursive: true });
    writeFileSync(join(etc, 'keys.json'), JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    writeFileSync(join(etc, 'clients/static.json'), JSON.stringify([{ client_id: 'static-rp', client_secret: 'a-static-secret-of-32-characters!', redirect_uris: ['https://rp.example/cb'] }]));
    writeFileSync(join(etc, 'auth.mjs'), AUTHENTICATOR);
    writeFileSync(join(etc, 'claims/nick.mjs'), CLAIMS('nick'));
    writeFileSync(join(etc, 'mods/extra.mjs'), CLAIMS('extra'));
    writeFileSync(join(work, 'node_modules/acme-auth/package.json'), JSON.stringify({ name: 'acme-auth', type: 'module', exports: { '.': { import: './index.js', default: './index.js' } } }));
    writeFileSync(join(work, 'node_modules/acme-auth/index.js'), AUTHENTICATOR);
    writeFileSync(
      join(etc, 'svc.properties'),
      ['svc.keys.file = keys.json', 'svc.clients.file = clients/static.json', 'svc.mail.outbox-dir = ../spool/outbox', 'svc.authenticator.module = ./auth.mjs', 'svc.claims.modules = ./claims/nick.mjs, mods/extra.mjs', 'svc.demo.enabled = false', ''].join('\n'),
    );
    writeFileSync(join(etc, 'svc.json'), JSON.stringify({ svc: { keys: { file: 'keys.json' }, clients: { file: './clients/static.json' }, authenticator: { module: 'auth.mjs' }, claims: { modules: '../etc/claims/nick.mjs' } } }));
  });
  afterAll(() => rmSync(top, { recursive: true, force: true }));

  it('resolves every path of a .properties file against its folder, whatever the working directory', async () => {
    const settings = loadSettings({ env: {}, file: join(etc, 'svc.properties') });
    expect(settings.keys.file).toBe(join(etc, 'keys.json'));
    expect(settings.clients.file).toBe(join(etc, 'clients/static.json'));
    expect(settings.mail.outboxDir).toBe(join(top, 'spool/outbox'));
    expect(settings.authenticator.module).toBe(join(etc, 'auth.mjs'));
    expect(settings.claims.modules).toEqual([join(etc, 'claims/nick.mjs'), join(etc, 'mods/extra.mjs')]);

    // The bundled server's start checks load each of them from a working directory elsewhere.
    const check = await spawnCli(work, ['config', 'check'], { SVC_CONFIG: '../etc/svc.properties' });
    expect(ours(check.stderr)).toEqual([]);
    expect(check.code).toBe(0);
    expect(valueOf(check.stdout, 'svc.keys.file')).toBe(join(etc, 'keys.json'));
    expect(valueOf(check.stdout, 'svc.authenticator.module')).toBe(join(etc, 'auth.mjs'));
  });

  it('resolves the paths of a JSON file against its folder too', () => {
    const settings = loadSettings({ env: {}, file: join(etc, 'svc.json') });
    expect([settings.keys.file, settings.clients.file, settings.authenticator.module, settings.claims.modules]).toEqual([join(etc, 'keys.json'), join(etc, 'clients/static.json'), join(etc, 'auth.mjs'), [join(etc, 'claims/nick.mjs')]]);
  });

  it('leaves absolute paths, file: URLs and package names of a file as written', () => {
    const file = join(etc, 'absolute.properties');
    const url = pathToFileURL(join(etc, 'auth.mjs')).href;
    writeFileSync(file, `svc.keys.file = ${join(top, 'elsewhere/keys.json')}\nsvc.authenticator.module = ${url}\nsvc.claims.modules = acme-claims, @acme/claims/mail\n`);
    const settings = loadSettings({ env: {}, file });
    expect([settings.keys.file, settings.authenticator.module, settings.claims.modules]).toEqual([join(top, 'elsewhere/keys.json'), url, ['acme-claims', '@acme/claims/mail']]);
  });

  it('resolves the environment\'s paths against the working directory, also when they override the file, and names the absolute path that is missing', async () => {
    const settings = loadSettings({ env: { SVC_KEYS_FILE: 'keys.json', SVC_AUTHENTICATOR_MODULE: './auth.mjs' }, file: join(etc, 'svc.properties') });
    expect([settings.keys.file, settings.authenticator.module]).toEqual(['keys.json', './auth.mjs']);

    const keys = await spawnCli(work, ['config', 'check'], { SVC_CONFIG: join(etc, 'svc.properties'), SVC_KEYS_FILE: 'keys.json' });
    expect(ours(keys.stderr)).toEqual([`svc-connect config: cannot start: svc.keys.file: cannot read ${work}/keys.json: no such file (ENOENT)`]);
    const module = await spawnCli(work, ['config', 'check'], { SVC_CONFIG: join(etc, 'svc.properties'), SVC_AUTHENTICATOR_MODULE: './auth.mjs' });
    expect(ours(module.stderr)).toEqual([expect.stringMatching(new RegExp(`^svc-connect config: cannot start: cannot load svc.authenticator.module \\./auth\\.mjs \\(${work}/auth\\.mjs\\): ERR_MODULE_NOT_FOUND`))]);
  });

  it('names the resolved absolute path when a file\'s relative path leads nowhere', async () => {
    const file = join(etc, 'missing.properties');
    writeFileSync(file, 'svc.clients.file = clients/none.json\n');
    const clients = await spawnCli(work, ['config', 'check'], { SVC_CONFIG: file });
    expect(ours(clients.stderr)).toEqual([`svc-connect config: cannot start: svc.clients.file: cannot read ${etc}/clients/none.json: no such file (ENOENT)`]);
    writeFileSync(file, 'svc.authenticator.module = ./no-auth.mjs\n');
    const module = await spawnCli(work, ['config', 'check'], { SVC_CONFIG: file });
    expect(ours(module.stderr)).toEqual([expect.stringMatching(new RegExp(`^svc-connect config: cannot start: cannot load svc.authenticator.module ${etc}/no-auth\\.mjs: ERR_MODULE_NOT_FOUND`))]);
  });

  it('loads a package name from node_modules by Node\'s rules, and says where it looked when there is none', async () => {
    const found = await spawnCli(work, ['config', 'check'], { SVC_AUTHENTICATOR_MODULE: 'acme-auth', SVC_DEMO_ENABLED: 'false' });
    expect(ours(found.stderr)).toEqual([]);
    expect(found.code).toBe(0);
    const missing = await spawnCli(work, ['config', 'check'], { SVC_AUTHENTICATOR_MODULE: 'acme-missing', SVC_DEMO_ENABLED: 'false' });
    expect(ours(missing.stderr)).toEqual([
      `svc-connect config: cannot start: cannot load svc.authenticator.module acme-missing: no package acme-missing in the node_modules folders from ${work} up, and no file ${work}/acme-missing (write ./acme-missing for a file relative to the configuration file or the working directory)`,
    ]);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

import { describe, expect, it } from '@jest/globals';

import { createApp, loadSettings, SettingsError, silentLogger, type ClaimModule } from '../../lib/index.js';
import { createStaticAuthenticator } from '../../lib/demo/accounts.js';
import { confidentialClient, startApp } from '../helpers/app.js';
import { testProviderKeys } from '../helpers/provider-keys.js';
import { runCodeFlow } from '../helpers/flow.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-plugin-modules-'));
let count = 0;
/** Writes an ES module and returns its absolute path. */
const moduleFile = (source: string): string => {
  count += 1;
  const path = join(dir, `module-${count}.mjs`);
  writeFileSync(path, source);
  return path;
};

const AUTHENTICATOR = `export default {
  async authenticate(login, password) { return login === 'carol' && password === 'carol-password' ? 'carol-0001' : undefined; },
  async exists(id) { return id === 'carol-0001'; },
};`;

/** The SettingsError `createApp` fails with for `properties` (the demo off, so nothing else signs in). */
async function startFailure(properties: Record<string, string>): Promise<SettingsError> {
  const settings = loadSettings({ env: {}, properties: { 'svc.demo.enabled': false, ...properties } });
  try {
    const app = await createApp(settings, { logger: silentLogger, jwks: await testProviderKeys() });
    await app.svc.close();
  } catch (err) {
    if (err instanceof SettingsError) return err;
    throw err;
  }
  throw new Error('expected the start to fail');
}

describe('svc.authenticator.module', () => {
  it('signs people in through the module, by absolute path, relative path and file: URL', async () => {
    const path = moduleFile(AUTHENTICATOR);
    for (const written of [path, relative(process.cwd(), path), pathToFileURL(path).href]) {
      const client = confidentialClient({ subject_type: 'public' });
      const running = await startApp({ clients: [client], properties: { 'svc.demo.enabled': false, 'svc.authenticator.module': written } });
      try {
        const { claims } = await runCodeFlow(running.issuer, client, { login: 'carol', password: 'carol-password' });
        expect(claims.sub).toBe('carol-0001');
      } finally {
        await running.close();
      }
    }
  });

  it('calls a default-exported function with the base URL, the production flag and the logger, and awaits it; never a secret', async () => {
    const path = moduleFile(`export default async (context) => {
  const { baseUrl, production, logger } = context;
  if (typeof baseUrl !== 'string' || production !== false || typeof logger.info !== 'function') throw new Error('no context');
  logger.info('module_context', { base: baseUrl, members: Object.keys(context).sort().join(' '), dump: JSON.stringify(context) });
  return { authenticate: async () => 'dave-0001', exists: async () => true };
};`);
    const lines: string[] = [];
    const client = confidentialClient({ subject_type: 'public' });
    const secrets = { 'svc.management.password': 'plugin-must-not-see-this-password', 'svc.cookies.keys': 'plugin-must-not-see-this-cookie-key-0123456789', 'svc.subject.pairwise-key': 'plugin-must-not-see-this-pairwise-key-0123456789' };
    const running = await startApp({
      clients: [client],
      logger: { ...silentLogger, info: (event, fields) => lines.push(`${event} ${String(fields?.base)} [${String(fields?.members)}] ${String(fields?.dump)}`) },
      properties: { 'svc.demo.enabled': false, 'svc.authenticator.module': path, ...secrets },
    });
    try {
      const line = lines.find((l) => l.startsWith('module_context '));
      expect(line).toMatch(new RegExp(`^module_context ${running.baseUrl} \\[baseUrl logger production\\] `));
      for (const secret of Object.values(secrets)) expect(line).not.toContain(secret);
      expect((await runCodeFlow(running.issuer, client, { login: 'anyone', password: 'anything' })).claims.sub).toBe('dave-0001');
    } finally {
      await running.close();
    }
  });

  it('replaces the demo accounts while the demo is on', async () => {
    const client = confidentialClient({ subject_type: 'public' });
    const running = await startApp({ clients: [client], properties: { 'svc.authenticator.module': moduleFile(AUTHENTICATOR) } });
    try {
      await expect(runCodeFlow(running.issuer, client, { login: 'demo', password: 'demo' })).rejects.toThrow();
      expect((await runCodeFlow(running.issuer, client, { login: 'carol', password: 'carol-password' })).claims.sub).toBe('carol-0001');
    } finally {
      await running.close();
    }
  });

  it('is not loaded when code gives an authenticator (code wins)', async () => {
    const broken = moduleFile('throw new Error("never imported");');
    const settings = loadSettings({ env: {}, properties: { 'svc.demo.enabled': false, 'svc.authenticator.module': broken } });
    const app = await createApp(settings, { logger: silentLogger, authenticator: createStaticAuthenticator() });
    await app.svc.close();
  });

  it('names svc.authenticator.module when the demo is off and nothing signs people in', async () => {
    const err = await startFailure({});
    expect(err.properties).toEqual(['svc.authenticator.module', 'svc.demo.enabled']);
    expect(err.message).toContain('set svc.authenticator.module to a module signing in your users');
  });

  const missing = join(dir, 'does-not-exist.mjs');
  it.each<[string, () => string, string]>([
    ['a missing file', () => missing, `cannot load svc.authenticator.module ${missing}: `],
    ['a syntax error', () => moduleFile('export default {'), 'cannot load svc.authenticator.module '],
    ['a throw at import', () => moduleFile('throw new Error("import-time failure");'), 'Error: import-time failure'],
    ['no default export', () => moduleFile('export const authenticator = {};'), 'has no default export (export default the authenticator, or a function returning it)'],
    ['a default string', () => moduleFile('export default "carol";'), 'must export default an authenticator (an object with authenticate and exists functions) or a function returning one; got string'],
    ['a default null', () => moduleFile('export default null;'), 'got null'],
    ['a factory that throws', () => moduleFile('export default () => { throw new TypeError("cannot reach the directory"); };'), ': its default export failed: TypeError: cannot reach the directory'],
    ['a factory resolving to nothing', () => moduleFile('export default async () => undefined;'), 'got undefined'],
    ['an object without exists', () => moduleFile('export default { authenticate: async () => undefined };'), ': the authenticator has no exists function (see the Authenticator interface)'],
    ['an object with neither function', () => moduleFile('export default { authenticate: "yes", exists: 1 };'), ': the authenticator has no authenticate and no exists function'],
  ])('stops the start on %s, naming the property and the module', async (_what, path, expected) => {
    const written = path();
    const err = await startFailure({ 'svc.authenticator.module': written });
    expect(err.properties).toEqual(['svc.authenticator.module']);
    expect(err.message).toContain('svc.authenticator.module');
    expect(err.message).toContain(written);
    expect(err.message).toContain(expected);
  });

  it('never echoes more than the first line of a failure (no module source in the message)', async () => {
    const err = await startFailure({ 'svc.authenticator.module': moduleFile('export default () => { throw new Error("first line\\nsecond line with details"); };') });
    expect(err.message).toContain('first line');
    expect(err.message).not.toContain('second line');
  });
});

describe('svc.claims.modules', () => {
  const CLAIMS = `export default { name: 'mail-directory', provides: ['email', 'email_verified'], resolve: (id) => (id === 'demo-0001' ? { email: 'erika@example.org', email_verified: true } : {}) };`;

  it('loads every module in order, after those given in code, and offers the scopes they complete', async () => {
    const first: ClaimModule = { name: 'from-code', provides: ['name'], resolve: () => ({ name: 'From Code' }) };
    const person = moduleFile(`export default async () => [
  { name: 'people', provides: ['name', 'given_name', 'family_name', 'birthdate'], resolve: () => ({ name: 'From Module', given_name: 'Erika' }) },
];`);
    const client = confidentialClient({ allow_unencrypted_userinfo: true });
    const running = await startApp({ clients: [client], claimModules: [first], properties: { 'svc.claims.modules': `${moduleFile(CLAIMS)}, ${person}` } });
    try {
      const doc = (await (await fetch(`${running.issuer}/.well-known/openid-configuration`)).json()) as { scopes_supported: string[] };
      expect(doc.scopes_supported).toEqual(['openid', 'profile', 'email']);
      const { claims } = await runCodeFlow(running.issuer, client, { scope: 'openid profile email' });
      // `name` comes from the module given in code: it is asked first.
      expect(claims).toMatchObject({ name: 'From Code', given_name: 'Erika', email: 'erika@example.org', email_verified: true });
    } finally {
      await running.close();
    }
  });

  it.each<[string, () => string, string]>([
    ['no default export', () => moduleFile('export const m = 1;'), 'has no default export (export default the claim module, or a function returning it)'],
    ['a default number', () => moduleFile('export default 42;'), 'must export default a claim module (name, provides, resolve), a list of them, or a function returning either; got number'],
    ['an empty list', () => moduleFile('export default [];'), 'exports no claim module (an empty list)'],
    ['no resolve', () => moduleFile("export default { name: 'x', provides: ['email'] };"), ': the claim module needs a resolve function (see the ClaimModule interface)'],
    ['provides not a list of names', () => moduleFile("export default { name: 'x', provides: ['email', 7], resolve() { return {}; } };"), ': the claim module needs provides (a list of claim names)'],
    ['an empty name', () => moduleFile("export default { name: '', provides: 'email', resolve: 1 };"), ': the claim module needs a name (string), provides (a list of claim names), a resolve function'],
    ['a bad second entry of a list', () => moduleFile("export default () => [{ name: 'a', provides: [], resolve() { return {}; } }, null];"), ' [1] must export default a claim module'],
    ['a factory that throws', () => moduleFile('export default async () => { throw new Error("no database"); };'), ': its default export failed: Error: no database'],
  ])('stops the start on %s, naming the property and the module', async (_what, path, expected) => {
    const written = path();
    const err = await startFailure({ 'svc.authenticator.module': moduleFile(AUTHENTICATOR), 'svc.claims.modules': written });
    expect(err.properties).toEqual(['svc.claims.modules']);
    expect(err.message).toContain(`svc.claims.modules ${written}`);
    expect(err.message).toContain(expected);
  });

  it('refuses an empty entry in the list', () => {
    expect(() => loadSettings({ env: {}, properties: { 'svc.claims.modules': 'a.mjs,,b.mjs' } })).toThrow(
      'invalid value for svc.claims.modules (from code): expected comma-separated module paths, none of them empty',
    );
  });
});

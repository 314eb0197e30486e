import { spawnSync } from 'node:child_process';

import { describe, expect, it } from '@jest/globals';

import { loadSettings } from '../../lib/index.js';
import { closestResembled, editDistance } from '../../lib/settings/resemblance.js';
import { captureError, scratchFiles } from '../helpers/settings-errors.js';


const SECRET = 'a-secret-value-that-must-never-be-echoed';
const root = new URL('../..', import.meta.url).pathname;

describe('which SVC_ variables are ours (docs/configuration.md "Names")', () => {
  it.each([
    // the docs' own variables (the relying-party guide)
    'SVC_ISSUER',
    'SVC_INITIAL_ACCESS_TOKEN',
    // someone else's variables in a host's environment
    'SVC_FOO_BAR',
    'SVC_HOST',
    'SVC_URL',
    'SVC_SERVICE_NAME',
    'SVC_REDIRECT_URI', // the relying-party example's own
    'SVC_SMTP_URL', // a word left out is not a misspelling (docs/configuration.md "Names")
    'SVC_LOG', // the start of SVC_LOG_LEVEL, but one word is too little to say
    'SVC_',
    'svc_deployment_id',
  ])('ignores %s, reporting its name (never its value) once', (variable) => {
    const reported: [string, string][] = [];
    const settings = loadSettings({ env: { [variable]: SECRET, PORT: '4100' }, onIgnoredVariable: (name, message) => reported.push([name, message]) });
    expect(settings.port).toBe(4100);
    expect(reported).toEqual([[variable, `ignoring environment variable ${variable}: it is not an svc-connect property and does not look like one`]]);
    expect(JSON.stringify(reported)).not.toContain(SECRET);
  });

  it('warns by default with one process warning per name and process', () => {
    const script = `import { loadSettings } from './lib/index.ts';
loadSettings({ env: { SVC_SOMETHING_ELSE_ENTIRELY: '${SECRET}' } });
loadSettings({ env: { SVC_SOMETHING_ELSE_ENTIRELY: '${SECRET}' } });`;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(result.status).toBe(0);
    const lines = result.stderr.split('\n').filter((l) => l.includes('SVC_SOMETHING_ELSE_ENTIRELY'));
    expect(lines).toEqual([expect.stringContaining('[SVC_IGNORED_VARIABLE] Warning: ignoring environment variable SVC_SOMETHING_ELSE_ENTIRELY: it is not an svc-connect property and does not look like one')]);
    expect(result.stderr).not.toContain(SECRET);
  });

  it.each([
    ['SVC_REDIS_ULR', 'SVC_REDIS_URL', 'svc.redis.url'], // two letters swapped
    ['SVC_REDIS_KEYPREFIX', 'SVC_REDIS_KEY_PREFIX', 'svc.redis.key-prefix'], // a separator missing
    ['SVC_PROXY_HOP', 'SVC_PROXY_HOPS', 'svc.proxy.hops'], // a letter missing
    ['SVC_MANAGEMENT_PASSWD', 'SVC_MANAGEMENT_PASSWORD', 'svc.management.password'], // two letters missing
    ['SVC_COOKIE_KEYS', 'SVC_COOKIES_KEYS', 'svc.cookies.keys'],
    ['SVC_PROT', 'SVC_PORT', 'svc.port'], // short name: one edit
    ['SVC_URL_BASE', 'SVC_BASE_URL', 'svc.base-url'], // the same words reordered
    ['SVC_ENABLED_DEMO', 'SVC_DEMO_ENABLED', 'svc.demo.enabled'],
    ['SVC_REQUIRE_PAR', 'SVC_PAR_REQUIRED', 'svc.par.required'], // words reordered and inflected
    ['SVC_MANAGEMENT_PASS', 'SVC_MANAGEMENT_PASSWORD', 'svc.management.password'], // a word cut short
    ['SVC_PASSWORD_MANAGEMENT', 'SVC_MANAGEMENT_PASSWORD', 'svc.management.password'],
    ['SVC_LOGIN_LOCKOUT_SECOND', 'SVC_LOGIN_LOCKOUT_SECONDS', 'svc.login.lockout-seconds'],
    ['svc_redis_url', 'SVC_REDIS_URL', 'svc.redis.url'], // another letter case
    ['Svc_Base_Url', 'SVC_BASE_URL', 'svc.base-url'],
  ])('stops on %s, naming the variable it resembles and its property', (variable, like, property) => {
    const err = captureError(() => loadSettings({ env: { [variable]: SECRET } }));
    expect(err.properties).toEqual([variable]);
    expect(err.message).toBe(`unknown environment variable ${variable} (did you mean ${like}, property ${property}?): no svc-connect property has this name`);
    expect(err.message).not.toContain(SECRET);
  });

  it('stops on a misspelling of SVC_CONFIG', () => {
    const err = captureError(() => loadSettings({ env: { SVC_CONFG: '/etc/svc.properties' } }));
    expect(err.message).toBe('unknown environment variable SVC_CONFG (did you mean SVC_CONFIG?): no svc-connect property has this name');
  });

  it.each([
    ['SVC_CONFIG_FILE', 'SVC_CONFIG', 'the configuration file'],
    ['SVC_CONFIG_PATH', 'SVC_CONFIG', 'the configuration file'],
    ['SVC_COOKIES_KEYS_FILE', 'SVC_COOKIES_KEYS', 'property svc.cookies.keys'],
    ['SVC_MANAGEMENT_PASSWORD_FILE', 'SVC_MANAGEMENT_PASSWORD', 'property svc.management.password'],
    ['svc_subject_pairwise_key_file', 'SVC_SUBJECT_PAIRWISE_KEY', 'property svc.subject.pairwise-key'],
  ])('stops on %s, a variable of ours with _FILE or _PATH added (the Docker secrets habit), naming the one that is read', (variable, ours, what) => {
    const err = captureError(() => loadSettings({ env: { [variable]: '/run/secrets/a-secret-value-that-must-never-be-echoed' } }));
    expect(err.properties).toEqual([variable]);
    expect(err.message).toContain(`unknown environment variable ${variable} (did you mean ${ours}`);
    expect(err.message).toContain(what);
    expect(err.message).toContain('svc-connect reads no _FILE or _PATH variables');
    expect(err.message).not.toContain('a-secret-value');
  });

  it('honest: SVC_KEYS_FILE and SVC_CLIENTS_FILE name files by their own right, and someone else\'s _FILE variables are left alone', () => {
    const reported: string[] = [];
    const s = loadSettings({ env: { SVC_KEYS_FILE: '/etc/keys.json', SVC_CLIENTS_FILE: '/etc/clients.json', SVC_LOG_FILE: '/var/log/x', SVC_SECRETS_PATH: '/run' }, onIgnoredVariable: (name) => reported.push(name) });
    expect([s.keys.file, s.clients.file]).toEqual(['/etc/keys.json', '/etc/clients.json']);
    expect(reported).toEqual(['SVC_LOG_FILE', 'SVC_SECRETS_PATH']);
  });

  it('names every mistyped variable at once, and reports nothing as ignored when it stops', () => {
    const reported: string[] = [];
    const err = captureError(() => loadSettings({ env: { SVC_PROT: '1', SVC_REDIS_ULR: 'x', SVC_ISSUER: 'y' }, onIgnoredVariable: (name) => reported.push(name) }));
    expect(err.properties).toEqual(['SVC_PROT', 'SVC_REDIS_ULR']);
    expect(reported).toEqual(['SVC_ISSUER']);
  });

  it('still reads the contract and rule-derived variables, and leaves other prefixes alone', () => {
    const reported: string[] = [];
    const s = loadSettings({ env: { REDIS_URL: 'redis://r:6379', SVC_REDIS_KEY_PREFIX: 'p:', REDIS_ULR: 'x', MY_SVC_PORT: '1' }, onIgnoredVariable: (name) => reported.push(name) });
    expect([s.redis.url, s.redis.keyPrefix]).toEqual(['redis://r:6379', 'p:']);
    expect(reported).toEqual([]);
  });
});

describe('unknown properties in a file or in code (C9: they stop the start)', () => {
  const file = scratchFiles('svc-names-');

  it.each([
    ['svc.prot', 'svc.port'],
    ['svc.redis.keyprefix', 'svc.redis.key-prefix'],
    ['svc.url.base', 'svc.base-url'],
    ['SVC.PORT', 'svc.port'],
  ])('stops on %s and suggests %s', (name, like) => {
    const err = captureError(() => loadSettings({ env: {}, file: file(`${name}.properties`, `${name}=1\n`) }));
    expect(err.properties).toEqual([name]);
    expect(err.message).toContain(`unknown property: ${name} (from `);
    expect(err.message).toContain(`; did you mean ${like}?)`);
  });

  it('stops on a wrapped secret list without repeating the line that lost its name (a key of the list, not a name)', () => {
    const second = 'second-cookie-key-Zq8vWm2LxR7tNc4Hb9YpKd3';
    const text = `svc.cookies.keys = first-cookie-key-aaaaaaaaaaaaaaaaaaaaaaaa,\n                   ${second}\n`;
    const err = captureError(() => loadSettings({ env: {}, file: file('wrapped.properties', text) }));
    expect(err.message).not.toContain(second);
    expect(err.properties.join(' ')).not.toContain(second);
    expect(err.message).toContain('wrapped.properties');
    expect(err.message).toMatch(/unknown property: a name without a dot \(from .*wrapped\.properties; not repeated: it may be a value, and a value wrapped onto the next line needs a \\ at the end of the line before\)/);
  });

  it.each([
    ['a dot', 'second.cookie-key-Zq8vWm2LxR7tNc4Hb9YpKd3'],
    ['a dot and an =', 'second.cookie-key-Zq8vWm2LxR7tNc4Hb9YpKd3=='],
    ['dots only in lower case and digits', 'k3y.0f.the.s3cond.cookie.9c1e5b7a02d4f8e6'],
  ])('attack: stops on a wrapped secret list holding %s without repeating the key (a name of ours has no digit, nor mixed case in a part)', (_, second) => {
    const text = `svc.cookies.keys = first-cookie-key-aaaaaaaaaaaaaaaaaaaaaaaa,\n                   ${second}\n`;
    const err = captureError(() => loadSettings({ env: {}, file: file('wrapped-dots.properties', text) }));
    const key = second.replace(/=+$/, '');
    expect(err.message).not.toContain(key);
    expect(err.properties.join(' ')).not.toContain(key);
    expect(err.message).toMatch(/unknown property: a name that is no property's \(from .*wrapped-dots\.properties; not repeated: it may be a value/);
  });

  it.each([
    ['SVC_BASE_URL', 'svc.base-url'],
    ['PORT', 'svc.port'],
    ['svc_redis_url', 'svc.redis.url'],
  ])('stops on the environment variable %s written in a file, naming it and the property to write instead', (name, property) => {
    for (const [ext, text] of [['properties', `${name}=1\n`], ['json', JSON.stringify({ [name]: '1' })]]) {
      const err = captureError(() => loadSettings({ env: {}, file: file(`env-name.${ext}`, text as string) }));
      expect(err.properties).toEqual([name]);
      expect(err.message).toMatch(new RegExp(`^unknown property: ${name} \\(from .*env-name\\.${ext}; an environment variable's name: in a file write ${property.replace(/\./g, '\\.')}\\)$`));
    }
  });

  it.each([
    ['svc.base_url', 'svc.base-url'],
    ['svc.baseUrl', 'svc.base-url'],
    ['svc.redis.key_prefix', 'svc.redis.key-prefix'],
    ['svc.cookies.keys2', 'svc.cookies.keys'],
  ])('stops on %s, a name of ours with another separator, case or a digit, naming it and suggesting %s', (name, like) => {
    const err = captureError(() => loadSettings({ env: {}, file: file('near.properties', `${name}=1\n`) }));
    expect(err.properties).toEqual([name]);
    expect(err.message).toMatch(/^unknown property: .* \(from .*near\.properties; did you mean .*\?\)$/);
    expect(err.message).toContain(`unknown property: ${name} (from `);
    expect(err.message).toContain(`; did you mean ${like}?)`);
  });

  it('stops on a property like nothing of ours, without a suggestion', () => {
    const err = captureError(() => loadSettings({ env: {}, properties: { 'svc.frobnicate': 'x', 'issuer.url': 'y' } }));
    expect(err.properties).toEqual(['svc.frobnicate', 'issuer.url']);
    expect(err.message).toBe('unknown properties: svc.frobnicate (from code), issuer.url (from code)');
  });
});

describe('editDistance and closestResembled', () => {
  it.each([
    ['', '', 0],
    ['port', 'port', 0],
    ['port', 'prot', 1],
    ['port', 'host', 2],
    ['key_prefix', 'keyprefix', 1],
    ['abc', 'cab', 2],
  ])('%s → %s: %d', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });

  it('needs the prefix on both sides', () => {
    expect(closestResembled('PORT', ['SVC_PORT'], { prefix: 'SVC_', separator: /_/ })).toBeUndefined();
    expect(closestResembled('SVC_PORT', ['SVC_PORT'], { prefix: 'SVC_', separator: /_/ })).toBe('SVC_PORT');
  });
});

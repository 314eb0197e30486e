import { describe, expect, it } from '@jest/globals';

import { loadSettings, silentLogger } from '../../lib/index.js';
import { SettingsError } from '../../lib/errors.js';
import { readJsonFile } from '../../lib/user-files.js';
import { generateSigningKeys, readSigningKeys } from '../../lib/provider/keys.js';
import { findUnsafeDefaults, enforceSafeDefaults } from '../../lib/settings/unsafe.js';
import { PROPERTY_DEFINITIONS, readValue, ruleDerivedEnv } from '../../lib/settings/definitions.js';
import type { Settings } from '../../lib/settings/types.js';
import { captureError, scratchFiles } from '../helpers/settings-errors.js';

const file = scratchFiles('svc-settings-');

/** A valid value for each property, and where it lands in Settings. */
const SAMPLES: Record<string, { raw: string; read: (s: Settings) => unknown; expected: unknown }> = {
  'svc.port': { raw: '8080', read: (s) => s.port, expected: 8080 },
  'svc.base-url': { raw: 'https://id.example.com/', read: (s) => s.baseUrl, expected: 'https://id.example.com' },
  'svc.redis.url': { raw: 'redis://10.1.2.3:6380/2', read: (s) => s.redis.url, expected: 'redis://10.1.2.3:6380/2' },
  'svc.redis.cluster-nodes': {
    raw: 'a:7000,b:7001',
    read: (s) => s.redis.clusterNodes,
    expected: [
      { host: 'a', port: 7000 },
      { host: 'b', port: 7001 },
    ],
  },
  'svc.redis.key-prefix': { raw: 'idp:', read: (s) => s.redis.keyPrefix, expected: 'idp:' },
  'svc.redis.previous-base-url': { raw: 'https://old.example/', read: (s) => s.redis.previousBaseUrl, expected: 'https://old.example' },
  'svc.redis.operation-timeout-ms': { raw: '2500', read: (s) => s.redis.operationTimeoutMs, expected: 2500 },
  'svc.memory-store.max-mb': { raw: '256', read: (s) => s.memoryStore.maxMb, expected: 256 },
  'svc.mail.smtp-url': { raw: 'smtp://mail.example.com:587', read: (s) => s.mail.smtpUrl, expected: 'smtp://mail.example.com:587' },
  'svc.mail.outbox-dir': { raw: '/var/mail/out', read: (s) => s.mail.outboxDir, expected: '/var/mail/out' },
  'svc.mail.from': { raw: 'idp@example.com', read: (s) => s.mail.from, expected: 'idp@example.com' },
  'svc.management.user': { raw: 'ops', read: (s) => s.management.user, expected: 'ops' },
  'svc.management.password': { raw: 's3cret-pass', read: (s) => s.management.password, expected: 's3cret-pass' },
  'svc.management.lockout-threshold': { raw: '3', read: (s) => s.management.lockoutThreshold, expected: 3 },
  'svc.management.lockout-seconds': { raw: '60', read: (s) => s.management.lockoutSeconds, expected: 60 },
  'svc.stage.include-scopes-in-user-info': { raw: 'true', read: (s) => s.stage.includeScopesInUserInfo, expected: true },
  'svc.keys.file': { raw: '/etc/svc/keys.json', read: (s) => s.keys.file, expected: '/etc/svc/keys.json' },
  'svc.cookies.keys': {
    raw: 'k'.repeat(32) + ',' + 'j'.repeat(40),
    read: (s) => s.cookies.keys,
    expected: ['k'.repeat(32), 'j'.repeat(40)],
  },
  'svc.subject.default-type': { raw: 'public', read: (s) => s.subject.defaultType, expected: 'public' },
  'svc.subject.pairwise-key': { raw: 'p'.repeat(32), read: (s) => s.subject.pairwiseKey, expected: 'p'.repeat(32) },
  'svc.access-token.ttl': { raw: '600', read: (s) => s.accessToken.ttl, expected: 600 },
  'svc.par.required': { raw: 'true', read: (s) => s.par.required, expected: true },
  'svc.client-assertion.endpoint-audience': { raw: 'true', read: (s) => s.clientAssertion.endpointAudience, expected: true },
  'svc.demo.enabled': { raw: 'false', read: (s) => s.demo.enabled, expected: false },
  'svc.fetch.allow-private-network': { raw: 'true', read: (s) => s.fetch.allowPrivateNetwork, expected: true },
  'svc.ops.port': { raw: '9000', read: (s) => s.ops.port, expected: 9000 },
  'svc.ops.host': { raw: '0.0.0.0', read: (s) => s.ops.host, expected: '0.0.0.0' },
  'svc.fetch.private-hosts': { raw: 'Keys.Internal,[fd00::7]:8443', read: (s) => s.fetch.privateHosts, expected: ['keys.internal:443', '[fd00::7]:8443'] },
  'svc.proxy': { raw: 'true', read: (s) => s.proxy, expected: true },
  'svc.proxy.hops': { raw: '2', read: (s) => s.proxyHops, expected: 2 },
  'svc.login.lockout-threshold': { raw: '7', read: (s) => s.login.lockoutThreshold, expected: 7 },
  'svc.login.address-threshold': { raw: '250', read: (s) => s.login.addressThreshold, expected: 250 },
  'svc.login.start-threshold': { raw: '500', read: (s) => s.login.startThreshold, expected: 500 },
  'svc.login.consecutive-limit': { raw: '50', read: (s) => s.login.consecutiveLimit, expected: 50 },
  'svc.login.device-cookie-days': { raw: '30', read: (s) => s.login.deviceCookieDays, expected: 30 },
  'svc.login.lockout-window': { raw: '600', read: (s) => s.login.lockoutWindowSeconds, expected: 600 },
  'svc.login.lockout-seconds': { raw: '30', read: (s) => s.login.lockoutSeconds, expected: 30 },
  'svc.login.lockout-max-seconds': { raw: '7200', read: (s) => s.login.lockoutMaxSeconds, expected: 7200 },
  'svc.metrics.enabled': { raw: 'true', read: (s) => s.metrics.enabled, expected: true },
  'svc.log.level': { raw: 'WARN', read: (s) => s.log.level, expected: 'warn' },
  'svc.log.format': { raw: 'JSON', read: (s) => s.log.format, expected: 'json' },
  'svc.clients.file': { raw: '/etc/svc/clients.json', read: (s) => s.clients.file, expected: '/etc/svc/clients.json' },
  'svc.authenticator.module': { raw: '/opt/idp/authenticator.js', read: (s) => s.authenticator.module, expected: '/opt/idp/authenticator.js' },
  'svc.authenticator.timeout-ms': { raw: '2500', read: (s) => s.authenticator.timeoutMs, expected: 2500 },
  // Read alike from every source: a package name and an absolute path (relative paths: test/e2e/config-paths.test.ts).
  'svc.claims.module-timeout-ms': { raw: '2500', read: (s) => s.claims.moduleTimeoutMs, expected: 2500 },
  'svc.claims.modules': { raw: '@acme/claims/person, /opt/idp/mail.js', read: (s) => s.claims.modules, expected: ['@acme/claims/person', '/opt/idp/mail.js'] },
};

describe('loadSettings (C9)', () => {
  it('has a sample for every property (this table grows with the definitions)', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(PROPERTY_DEFINITIONS.map((d) => d.name).sort());
  });

  it('reads back every property as its definition says (what config check prints)', () => {
    for (const [name, sample] of Object.entries(SAMPLES)) {
      const definition = PROPERTY_DEFINITIONS.find((d) => d.name === name);
      const settings = loadSettings({ env: {}, properties: { [name]: sample.raw } });
      expect([name, definition && readValue(settings, definition)]).toEqual([name, sample.expected]);
    }
  });

  it('applies the documented defaults', () => {
    const s = loadSettings({ env: {} });
    expect(s.port).toBe(3000);
    expect(s.baseUrl).toBe('http://localhost:3000');
    expect(s.redis).toEqual({ keyPrefix: 'svc:', operationTimeoutMs: 800 });
    expect(s.mail).toEqual({ outboxDir: './outbox', from: 'no-reply@localhost' });
    expect(s.management).toEqual({ user: 'admin', password: 'admin', lockoutThreshold: 5, lockoutSeconds: 300 });
    expect(s.stage.includeScopesInUserInfo).toBe(false);
    expect(s.accessToken.ttl).toBe(3600);
    expect(s.par.required).toBe(false);
    expect(s.demo.enabled).toBe(true);
    expect(s.fetch.allowPrivateNetwork).toBe(false);
    expect(s.proxy).toBe(false);
    expect(s.production).toBe(false);
  });

  it('derives the base URL from the port when unset', () => {
    expect(loadSettings({ env: { PORT: '4000' } }).baseUrl).toBe('http://localhost:4000');
  });

  it('turns the demo off by default in production', () => {
    expect(loadSettings({ env: { NODE_ENV: 'production' } }).demo.enabled).toBe(false);
  });

  describe.each(Object.entries(SAMPLES))('%s', (name, sample) => {
    const definition = PROPERTY_DEFINITIONS.find((d) => d.name === name);

    it('is read from a .properties file', () => {
      const path = file(`${name}.properties`, `# comment\n${name} = ${sample.raw}\n`);
      expect(sample.read(loadSettings({ env: {}, file: path }))).toEqual(sample.expected);
    });

    it('is read from a .json file (flat and nested)', () => {
      const flat = file(`${name}.json`, JSON.stringify({ [name]: sample.raw }));
      expect(sample.read(loadSettings({ env: {}, file: flat }))).toEqual(sample.expected);
      const nested = name.split('.').reduceRight<unknown>((acc, part) => ({ [part]: acc }), sample.raw);
      const nestedPath = file(`${name}.nested.json`, JSON.stringify(nested));
      expect(sample.read(loadSettings({ env: {}, file: nestedPath }))).toEqual(sample.expected);
    });

    it('is read from its rule-derived environment variable', () => {
      expect(sample.read(loadSettings({ env: { [ruleDerivedEnv(name)]: sample.raw } }))).toEqual(sample.expected);
    });

    if (definition?.env) {
      it(`is read from ${definition.env}`, () => {
        expect(sample.read(loadSettings({ env: { [definition.env as string]: sample.raw } }))).toEqual(sample.expected);
      });
    }
  });

  it('lets the environment win over the file', () => {
    const path = file('wins.properties', 'svc.port=1111\nsvc.redis.key-prefix=file:\n');
    const s = loadSettings({ env: { PORT: '2222', SVC_CONFIG: path } });
    expect(s.port).toBe(2222);
    expect(s.redis.keyPrefix).toBe('file:');
  });

  it('reads the file named by SVC_CONFIG', () => {
    const path = file('named.json', JSON.stringify({ svc: { port: 5555 } }));
    expect(loadSettings({ env: { SVC_CONFIG: path } }).port).toBe(5555);
  });

  it.each([
    ['dup.properties', 'svc.cookies.keys=NEW-SECRET-0123456789abcdefghijklmnop\nsvc.port=4000\nsvc.cookies.keys = OLD-SECRET-0123456789abcdefghijklmnop\n', 'svc.cookies.keys', 'lines 1 and 3'],
    ['dup.json', JSON.stringify({ 'svc.cookies.keys': 'NEW-SECRET-0123456789abcdefghijklmnop', svc: { cookies: { keys: 'OLD-SECRET-0123456789abcdefghijklmnop' } } }), 'svc.cookies.keys', 'twice'],
  ])('stops on a property %s gives twice with different values, naming it and neither value', (name, text, property, where) => {
    const err = captureError(() => loadSettings({ env: {}, file: file(name, text) }));
    expect(err.message).toContain(property);
    expect(err.message).toContain(where);
    expect(err.message).not.toMatch(/SECRET/);
  });

  it('honest: a property a file repeats with the same value is read once', () => {
    expect(loadSettings({ env: {}, file: file('same.properties', 'svc.port=4000\nsvc.port = 4000\n') }).port).toBe(4000);
    expect(loadSettings({ env: {}, file: file('same.json', JSON.stringify({ 'svc.port': 4000, svc: { port: '4000' } })) }).port).toBe(4000);
  });

  it('stops on an unknown svc.* property in a file, naming it', () => {
    const path = file('unknown.properties', 'svc.prot=3000\n');
    const err = captureError(() => loadSettings({ env: {}, file: path }));
    expect(err.properties).toEqual(['svc.prot']);
    expect(err.message).toContain('svc.prot');
  });

  it('stops on an unknown SVC_ environment variable, naming it', () => {
    const err = captureError(() => loadSettings({ env: { SVC_REDIS_ULR: 'redis://x' } }));
    expect(err.properties).toEqual(['SVC_REDIS_ULR']);
    expect(err.message).toContain('SVC_REDIS_ULR');
  });

  it.each([
    ['svc.port', '70000'],
    ['svc.port', 'abc'],
    ['svc.base-url', 'ftp://x'],
    ['svc.base-url', 'https://x/?q=1'],
    ['svc.redis.url', 'http://redis'],
    ['svc.redis.cluster-nodes', 'hostonly'],
    ['svc.redis.key-prefix', 'a b'],
    ['svc.redis.previous-base-url', 'old.example'],
    ['svc.redis.operation-timeout-ms', '0'],
    ['svc.redis.operation-timeout-ms', '1.5'],
    ['svc.memory-store.max-mb', '0'],
    ['svc.mail.smtp-url', 'mail.example.com'],
    ['svc.mail.from', 'not-an-address'],
    ['svc.management.user', 'a:b'],
    ['svc.management.lockout-threshold', '0'],
    ['svc.management.lockout-seconds', 'soon'],
    ['svc.stage.include-scopes-in-user-info', 'maybe'],
    ['svc.cookies.keys', 'short'],
    ['svc.subject.default-type', 'PAIRWISE'],
    ['svc.subject.pairwise-key', 'short'],
    ['svc.subject.pairwise-key', `${'p'.repeat(32)},${'q'.repeat(32)}`],
    ['svc.access-token.ttl', '10'],
    ['svc.demo.enabled', '2'],
    ['svc.fetch.allow-private-network', 'yes please'],
    ['svc.proxy', ''],
    ['svc.proxy.hops', '0'],
    ['svc.login.lockout-threshold', 'five'],
    ['svc.login.lockout-window', '-1'],
    ['svc.metrics.enabled', 'on'],
    ['svc.log.level', 'verbose'],
    ['svc.log.format', 'yaml'],
    ['svc.authenticator.module', ' '],
    ['svc.claims.modules', 'a.js,'],
    ['svc.claims.module-timeout-ms', '0'],
    ['svc.claims.module-timeout-ms', '600001'],
  ])('stops on an invalid %s (%j), naming the property', (name, raw) => {
    const err = captureError(() => loadSettings({ env: {}, properties: { [name]: raw } }));
    expect(err.properties).toEqual([name]);
    expect(err.message).toContain(`invalid value for ${name}`);
  });

  it.each([
    ['svc.redis.url', 'redis://:S3CRET%ZZpw@redis:6379/0', 'the user name or password is not valid percent-encoding'],
    ['svc.redis.url', 'rediss://user%@redis:6380', 'the user name or password is not valid percent-encoding'],
    // ioredis decodes `user:password` as one: a `%` ending the user name takes the `:` and the password's start.
    ['svc.redis.url', 'redis://user%:41S3CRETpw@redis:6379/0', 'the user name or password is not valid percent-encoding'],
    ['svc.redis.url', 'redis://:S3CRETpw@redis:6379/zero', 'the path is not a database number'],
    ['svc.redis.url', 'redis://redis:6379/0/1', 'the path is not a database number'],
    ['svc.mail.smtp-url', 'smtps://u:S3CRET%ZZpw@mail.example.com:465', 'the user name or password is not valid percent-encoding'],
    // nodemailer's own logger writes every mail, the invitation's token in it, to stdout.
    ['svc.mail.smtp-url', 'smtp://u:S3CRET@mail.example.com:587?logger=true&debug=true', "the query turns on nodemailer's logging (logger, debug)"],
    ['svc.mail.smtp-url', 'smtp://u:S3CRET@mail.example.com:587?%6Cogger=true', "the query turns on nodemailer's logging (logger)"],
    ['svc.mail.smtp-url', 'smtp://u:S3CRET@mail.example.com:587?transactionLog=true', "the query turns on nodemailer's logging (transactionLog)"],
    // With pool=false nodemailer built the transport the query named: 202 and a receipt for mail never sent.
    ['svc.mail.smtp-url', 'smtp://u:S3CRET@mail.example.com:587?pool=false&jsonTransport=true', 'the query makes nodemailer send no mail over SMTP (jsonTransport)'],
    ['svc.mail.smtp-url', 'smtp://mail.example.com?pool=false&sendmail=true&path=/usr/sbin/sendmail', 'the query makes nodemailer send no mail over SMTP (sendmail)'],
    // nodemailer reads only the scheme: the mail went in plain text.
    ['svc.mail.smtp-url', 'smtp://u:S3CRET@mail.example.com:465?secure=true', 'secure in the query is ignored, the scheme decides: write smtps:// for implicit TLS'],
    // Through a proxy the connection is nodemailer's own: no deadline closes it, and the receipt names a host never reached.
    ['svc.mail.smtp-url', 'smtp://u:S3CRET@mail.example.com:587?proxy=http://pu:S3CRET@proxy.example:3128', 'the query makes nodemailer reach the SMTP server another way than straight to the host and port of the URL (proxy)'],
    ['svc.mail.smtp-url', 'smtps://mail.example.com?%70roxy=socks5://proxy.example:1080', '(proxy)'],
    ['svc.mail.smtp-url', 'smtp://mail.example.com:587?connection=x', '(connection)'],
    ['svc.mail.smtp-url', 'smtp://mail.example.com:587?socket=x', '(socket)'],
    ['svc.mail.smtp-url', 'smtp://mail.example.com:587?service=gmail', '(service)'],
    ['svc.mail.smtp-url', 'smtp://mail.example.com:587?url=smtp://u:S3CRET@other.example', '(url)'],
    // nodemailer takes a port or host from the query when the URL names none: the receipt named 587, or no host at all.
    ['svc.mail.smtp-url', 'smtp://u:S3CRET@mail.example.com?port=2525', '(port)'],
    ['svc.mail.smtp-url', 'smtp://mail.example.com:587?host=other.example', '(host)'],
    ['svc.mail.smtp-url', 'smtp:///?host=mail.example.com', 'names no host'],
    ['svc.mail.smtp-url', 'smtp:mail.example.com:25', 'names no host'],
  ])('stops on %s %j its client cannot read, naming the fault and never the password', (name, raw, fault) => {
    const err = captureError(() => loadSettings({ env: {}, properties: { [name]: raw } }));
    expect(err.properties).toEqual([name]);
    expect(err.message).toContain(fault);
    expect(err.message).not.toContain('S3CRET');
  });

  it.each([
    ['svc.redis.url', 'redis://10.1.2.3:6380/2'],
    ['svc.redis.url', 'redis://:p%40ss%2Fw0rd@redis:6379/0'],
    ['svc.redis.url', 'redis://ops%25:41pw@redis:6379/0'],
    ['svc.redis.url', 'rediss://svc:secret@redis.example.com:6380'],
    ['svc.redis.url', 'redis://redis/'],
    ['svc.mail.smtp-url', 'smtp://user:p%40ss@mail.example.com:587'],
    ['svc.mail.smtp-url', 'smtp://127.0.0.1:25/?requireTLS=false'],
    ['svc.mail.smtp-url', 'smtp://localhost:25?ignoreTLS=true'],
    ['svc.mail.smtp-url', 'smtps://user:pass@mail.example.com:465'],
    ['svc.mail.smtp-url', 'smtps://mail.example.com?secure=true'],
    ['svc.mail.smtp-url', 'smtp://relay.example.com:25?secure=false'],
    ['svc.mail.smtp-url', 'smtp://mail.example.com:587?pool=true&tls.rejectUnauthorized=false'],
    ['svc.mail.smtp-url', 'smtp://mail.example.com:587?name=idp.example.com&tls.servername=mail.example.com'],
    ['svc.mail.smtp-url', 'smtp://mail.example.com:2525?name=idp.example.com'],
  ])('accepts %s %j', (name, raw) => {
    expect(() => loadSettings({ env: {}, properties: { [name]: raw } })).not.toThrow();
  });

  it('names a Kubernetes service link given as a port (a Service named svc or svc-ops puts SVC_PORT=tcp://… into the pod); honest: a port is read', () => {
    expect(() => loadSettings({ env: { SVC_OPS_PORT: 'tcp://10.0.0.2:9000' } })).toThrow('invalid value for svc.ops.port (from SVC_OPS_PORT): expected a whole number, got "tcp://10.0.0.2:9000", a Kubernetes service link (set enableServiceLinks: false in the pod spec)');
    expect(loadSettings({ env: { SVC_OPS_PORT: '9000' } }).ops.port).toBe(9000);
  });

  it('never echoes a secret value in its error', () => {
    const err = captureError(() => loadSettings({ env: { SVC_COOKIES_KEYS: 'tiny-secret-value' } }));
    expect(err.message).not.toContain('tiny-secret-value');
  });

  it('stops on conflicting contract and rule-derived variables', () => {
    const err = captureError(() => loadSettings({ env: { PORT: '1000', SVC_PORT: '2000' } }));
    expect(err.properties).toEqual(['svc.port']);
  });

  it('stops on a malformed configuration file', () => {
    const path = file('broken.json', '{ not json');
    expect(captureError(() => loadSettings({ env: {}, file: path })).properties).toEqual(['SVC_CONFIG']);
  });

  it('stops on a JSON file nested deeper than any property, saying so (not the engine\'s stack overflow)', () => {
    const path = file('deep.json', `${'{"svc":'.repeat(20_000)}1${'}'.repeat(20_000)}`);
    const err = captureError(() => loadSettings({ env: {}, file: path }));
    expect(err.message).toMatch(/^malformed configuration file .*deep\.json: svc\.svc\.svc.*: nested deeper than any property$/);
    expect(err.message.length).toBeLessThan(400);
  });
});

describe('unsafe defaults', () => {
  it('lists every unsafe default of a bare configuration', () => {
    const found = findUnsafeDefaults(loadSettings({ env: {} }), { management: true }).map((f) => f.property);
    expect(found).toEqual(['svc.redis.url', 'svc.mail.smtp-url', 'svc.management.password', 'svc.keys.file', 'svc.cookies.keys', 'svc.subject.pairwise-key', 'svc.demo.enabled']);
  });

  it('refuses them in production, naming every property to set', () => {
    const settings = loadSettings({ env: { NODE_ENV: 'production' } });
    const err = captureError(() => enforceSafeDefaults(settings, findUnsafeDefaults(settings, { management: true }), silentLogger));
    expect(err.properties).toEqual(['svc.redis.url', 'svc.mail.smtp-url', 'svc.management.password', 'svc.keys.file', 'svc.cookies.keys', 'svc.subject.pairwise-key']);
    for (const p of err.properties) expect(err.message).toContain(p);
  });

  it('warns once per default outside production', () => {
    const lines: string[] = [];
    const logger = { ...silentLogger, warn: (event: string, fields?: Record<string, unknown>) => lines.push(`${event} ${String(fields?.property)}`) };
    const settings = loadSettings({ env: {} });
    enforceSafeDefaults(settings, findUnsafeDefaults(settings, { management: true }), logger);
    expect(lines).toEqual([
      'unsafe_default svc.redis.url',
      'unsafe_default svc.mail.smtp-url',
      'unsafe_default svc.management.password',
      'unsafe_default svc.keys.file',
      'unsafe_default svc.cookies.keys',
      'unsafe_default svc.subject.pairwise-key',
      'unsafe_default svc.demo.enabled',
    ]);
  });

  const production = {
    NODE_ENV: 'production',
    REDIS_URL: 'redis://127.0.0.1:6379',
    SVC_KEYS_FILE: '/etc/keys.json',
    SVC_COOKIES_KEYS: 'x'.repeat(32),
    SVC_SUBJECT_PAIRWISE_KEY: 'p'.repeat(32),
    SVC_MANAGEMENT_PASSWORD: 'a-strong-password',
    SMTP_URL: 'smtp://mail:25',
    SVC_MAIL_FROM: 'idp@example.com',
  };

  it.each([
    ['SVC_DEMO_ENABLED', 'svc.demo.enabled', 'demo accounts'],
    ['SVC_FETCH_ALLOW_PRIVATE_NETWORK', 'svc.fetch.allow-private-network', 'private addresses'],
  ])('refuses %s=true in production, naming %s', (variable, property, words) => {
    for (const value of ['true', ' TRUE ', '1', 'Yes']) {
      const settings = loadSettings({ env: { ...production, [variable]: value } });
      const err = captureError(() => enforceSafeDefaults(settings, findUnsafeDefaults(settings, { management: true }), silentLogger));
      expect(err.properties).toEqual([property]);
      expect(err.message).toContain(property);
      expect(err.message).toContain(words);
    }
    const settings = loadSettings({ env: { ...production, [variable]: 'true' } });
    expect(findUnsafeDefaults(settings, { management: true }).map((f) => f.property)).toEqual([property]);
  });

  it.each([
    ['SVC_DEMO_ENABLED', 'true', 'svc.demo.enabled=false'],
    ['SVC_FETCH_ALLOW_PRIVATE_NETWORK', 'true', 'svc.fetch.allow-private-network=false'],
    ['SVC_BASE_URL', 'http://idp.example.com', 'svc.base-url to an https URL'],
    ['SVC_MAIL_FROM', 'idp@localhost', 'svc.mail.from to an address of your own domain'],
    ['SVC_MANAGEMENT_PASSWORD', 'admin', 'svc.management.password to a password of your own'],
  ])('a refusal of %s=%s the operator set says what to set it to (%s), in production and in the warning', (variable, value, fix) => {
    const settings = loadSettings({ env: { ...production, [variable]: value } });
    const found = findUnsafeDefaults(settings, { management: true });
    expect(captureError(() => enforceSafeDefaults(settings, found, silentLogger)).message).toMatch(new RegExp(`; set ${fix.replace(/[.=]/g, '\\$&')} \\(`));
    const fixes: unknown[] = [];
    enforceSafeDefaults({ ...settings, production: false }, found, { ...silentLogger, warn: (_event: string, fields?: Record<string, unknown>) => void fixes.push(fields?.fix) });
    expect(fixes).toEqual([`set ${fix} before production`]);
  });

  it('names the other way to set what an unset default lacks: svc.redis.url or svc.redis.cluster-nodes', () => {
    const { REDIS_URL: _redis, ...withoutRedis } = production;
    const settings = loadSettings({ env: withoutRedis });
    expect(captureError(() => enforceSafeDefaults(settings, findUnsafeDefaults(settings, { management: true }), silentLogger)).message).toContain('; set svc.redis.url or svc.redis.cluster-nodes (');
  });

  it('refuses the shipped password admin in production when only the user was changed', () => {
    const { SVC_MANAGEMENT_PASSWORD: _password, ...withoutPassword } = production;
    for (const env of [{ ...withoutPassword, SVC_MANAGEMENT_USER: 'ops' }, { ...production, SVC_MANAGEMENT_USER: 'ops', SVC_MANAGEMENT_PASSWORD: 'admin' }]) {
      const settings = loadSettings({ env });
      const err = captureError(() => enforceSafeDefaults(settings, findUnsafeDefaults(settings, { management: true }), silentLogger));
      expect(err.properties).toEqual(['svc.management.password']);
    }
  });

  it('honest: a user of its own with a password of its own starts in production; the shipped user with a password of its own too', () => {
    for (const user of ['ops', 'admin']) {
      const settings = loadSettings({ env: { ...production, SVC_MANAGEMENT_USER: user } });
      expect(findUnsafeDefaults(settings, { management: true })).toEqual([]);
    }
  });

  it('refuses, once mail goes over SMTP, the sender no-reply@localhost in production, and any sender at localhost', () => {
    const { SVC_MAIL_FROM: _from, ...withoutSender } = production;
    for (const env of [withoutSender, { ...production, SVC_MAIL_FROM: 'idp@LocalHost' }, { ...production, SVC_MAIL_FROM: 'idp@mail.localhost' }]) {
      const settings = loadSettings({ env });
      const err = captureError(() => enforceSafeDefaults(settings, findUnsafeDefaults(settings, { management: true }), silentLogger));
      expect(err.properties).toEqual(['svc.mail.from']);
      expect(err.message).toContain('localhost');
    }
  });

  it('honest: a sender at a domain of its own starts in production; without SMTP (the outbox) no-reply@localhost is no reason of its own', () => {
    for (const from of ['idp@example.com', 'no-reply@localhost.example.com']) {
      expect(findUnsafeDefaults(loadSettings({ env: { ...production, SVC_MAIL_FROM: from } }), { management: true })).toEqual([]);
    }
    const { SMTP_URL: _smtp, ...withoutSmtp } = production;
    expect(findUnsafeDefaults(loadSettings({ env: withoutSmtp }), { management: true }).map((f) => f.property)).toEqual(['svc.mail.smtp-url']);
    const { SVC_MAIL_FROM: _from, ...withoutSender } = production;
    expect(findUnsafeDefaults(loadSettings({ env: withoutSender }), {})).toEqual([]);
  });

  it('does not say the demo accounts sign in when an authenticator is configured (code or svc.authenticator.module)', () => {
    const reasonFor = (settings: Settings, supplied = {}): string | undefined => findUnsafeDefaults(settings, supplied).find((f) => f.property === 'svc.demo.enabled')?.reason;
    expect(reasonFor(loadSettings({ env: {} }))).toContain('the demo accounts demo/demo and demo-basic/demo-basic sign in');
    for (const [settings, supplied] of [
      [loadSettings({ env: {} }), { authenticator: true }],
      [loadSettings({ env: { SVC_AUTHENTICATOR_MODULE: './auth.js' } }), {}],
    ] as const) {
      expect(reasonFor(settings, supplied)).toBe('/oidcdemo/login registers clients and runs flows for anyone who can sign in (the demo accounts do not: an authenticator is configured)');
    }
  });

  it('warns about a private-network fetch outside production', () => {
    const lines: string[] = [];
    const logger = { ...silentLogger, warn: (event: string, fields?: Record<string, unknown>) => lines.push(`${event} ${String(fields?.property)}`) };
    const settings = loadSettings({ env: { SVC_FETCH_ALLOW_PRIVATE_NETWORK: 'true', SVC_DEMO_ENABLED: 'false' } });
    enforceSafeDefaults(settings, findUnsafeDefaults(settings), logger);
    expect(lines).toEqual(['unsafe_default svc.redis.url', 'unsafe_default svc.keys.file', 'unsafe_default svc.cookies.keys', 'unsafe_default svc.subject.pairwise-key', 'unsafe_default svc.fetch.allow-private-network']);
  });

  it('accepts a production configuration without unsafe defaults', () => {
    const settings = loadSettings({
      env: {
        NODE_ENV: 'production',
        REDIS_URL: 'redis://127.0.0.1:6379',
        SVC_KEYS_FILE: '/etc/keys.json',
        SVC_COOKIES_KEYS: 'x'.repeat(32),
        SVC_SUBJECT_PAIRWISE_KEY: 'p'.repeat(32),
        SVC_MANAGEMENT_PASSWORD: 'a-strong-password',
        SMTP_URL: 'smtp://mail:25',
        SVC_MAIL_FROM: 'idp@example.com',
      },
    });
    expect(findUnsafeDefaults(settings, { management: true })).toEqual([]);
  });
});

describe('an http base URL', () => {
  const refusedIn = (baseUrl: string): boolean =>
    findUnsafeDefaults(loadSettings({ env: { NODE_ENV: 'production', SVC_BASE_URL: baseUrl } })).some((f) => f.property === 'svc.base-url');

  it.each(['http://idp.example.com', 'http://10.0.0.5:3000', 'http://[fd00::1]:3000', 'http://LOCALHOST.example.com', 'http://[::ffff:10.0.0.5]:3000', 'http://127.0.0.1.example.com'])('is refused in production for %s', (baseUrl) => {
    expect(refusedIn(baseUrl)).toBe(true);
    const settings = loadSettings({ env: { NODE_ENV: 'production', SVC_BASE_URL: baseUrl } });
    expect(captureError(() => enforceSafeDefaults(settings, findUnsafeDefaults(settings), silentLogger)).properties).toContain('svc.base-url');
  });

  it.each(['https://idp.example.com', 'http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000', 'http://app.localhost:3000', 'http://[::ffff:127.0.0.1]:3000', 'http://127.1:3000', 'http://0.0.0.0:3000'])('passes for %s (https, or loopback however spelled)', (baseUrl) => {
    expect(refusedIn(baseUrl)).toBe(false);
  });
});

describe('the path of the base URL', () => {
  it.each(['https://id.example.com//auth', 'https://id.example.com//auth/', 'https://id.example.com/auth//sso', 'http://localhost:3000//x'])(
    'attack on relying parties: %s, whose path holds an empty segment, stops the start naming svc.base-url (each endpoint would be //…, on another host)',
    (baseUrl) => {
      const err = captureError(() => loadSettings({ env: { SVC_BASE_URL: baseUrl } }));
      expect([err.properties, err.message]).toEqual([['svc.base-url'], 'invalid value for svc.base-url (from SVC_BASE_URL): its path must not hold an empty segment (//)']);
    },
  );

  it.each([
    ['https://id.example.com', 'https://id.example.com'],
    ['https://id.example.com//', 'https://id.example.com'],
    ['https://ID.Example.com:443/auth/', 'https://id.example.com/auth'],
    ['https://id.example.com/auth/sso//', 'https://id.example.com/auth/sso'],
  ])('honest: %s (trailing slashes, letter case of the host, the default port) is %s', (given, baseUrl) => {
    expect(loadSettings({ env: { SVC_BASE_URL: given } }).baseUrl).toBe(baseUrl);
  });
});

describe('configuration files as editors save them', () => {
  it('reads a file that starts with a byte order mark (Notepad saves UTF-8 so), .properties and .json alike', () => {
    expect(loadSettings({ env: {}, file: file('bom.properties', '\uFEFFsvc.port=4000\r\nsvc.proxy=true\r\n') }).port).toBe(4000);
    expect(loadSettings({ env: {}, file: file('bom.json', '\uFEFF{"svc.port": 4000}') }).port).toBe(4000);
  });

  it('honest: a byte order mark inside a value is the value\'s own', () => {
    expect(loadSettings({ env: {}, file: file('bom-inside.properties', 'svc.management.password=a\uFEFFsecret-password\n') }).management.password).toBe('a\uFEFFsecret-password');
  });

  it.each([
    ['latin1.properties', Buffer.concat([Buffer.from('svc.port=4000\nsvc.management.password=p'), Buffer.from([0xe4]), Buffer.from('ssw0rd-SECRET\n')])],
    ['latin1.json', Buffer.concat([Buffer.from('{"svc.port": 4000,\n"svc.management.password": "p'), Buffer.from([0xe4]), Buffer.from('ssw0rd-SECRET"}\n')])],
  ])('stops on %s that is not UTF-8, naming the line and never the text (a password would change without a word)', (name, bytes) => {
    const path = file(name, bytes);
    const err = captureError(() => loadSettings({ env: {}, file: path }));
    expect(err.properties).toEqual(['SVC_CONFIG']);
    expect(err.message).toContain(`malformed configuration file ${path}: line 2 is not UTF-8 text`);
    expect(err.message).not.toContain('SECRET');
  });

  it('honest: UTF-8 text beyond ASCII, written as it is or as a \\u escape, is read as written', () => {
    const path = file('utf8.properties', 'svc.management.password=pässwörd-ünd-€\nsvc.mail.from=idp@bücher.example\n');
    expect(loadSettings({ env: {}, file: path }).management.password).toBe('pässwörd-ünd-€');
    expect(loadSettings({ env: {}, file: file('escaped.properties', 'svc.management.password=p\\u00e4ssw\\u00f6rd\n') }).management.password).toBe('pässwörd');
  });

  it('reads the JSON files settings name (svc.keys.file, svc.clients.file: one reader) when they start with a byte order mark', async () => {
    const keys = file('bom-keys.json', `\uFEFF${JSON.stringify(await generateSigningKeys())}`);
    expect(readSigningKeys(keys).keys).toHaveLength(2);
    expect(readJsonFile(file('bom-clients.json', '\uFEFF[{"client_id": "a"}]'), (reason) => new Error(reason))).toEqual([{ client_id: 'a' }]);
  });

  it('stops on a JSON file settings name (svc.clients.file: one reader) that is not UTF-8, naming the line and never the text: a client secret would change without a word', () => {
    const path = file('latin1-clients.json', Buffer.concat([Buffer.from('[{"client_id": "a",\n"client_secret": "p'), Buffer.from([0xe4]), Buffer.from('ssw0rd-SECRET"}]\n')]));
    const err = captureError(() => readJsonFile(path, (reason) => new SettingsError(`svc.clients.file: ${reason}`, ['svc.clients.file'])));
    expect(err.message).toBe(`svc.clients.file: ${path} line 2 is not UTF-8 text: save the file as UTF-8 (or write each character beyond ASCII as \\uXXXX)`);
    expect(err.message).not.toContain('SECRET');
  });

  it('honest: a JSON file settings name in UTF-8, a byte order mark or not, keeps every character beyond ASCII as written', () => {
    for (const text of ['[{"client_id": "a", "client_name": "Bücher €", "client_secret": "pässwörd"}]', '\uFEFF[{"client_id": "a", "client_name": "Bücher €", "client_secret": "pässwörd"}]']) {
      expect(readJsonFile(file('utf8-clients.json', text), (reason) => new Error(reason))).toEqual([{ client_id: 'a', client_name: 'Bücher €', client_secret: 'pässwörd' }]);
    }
  });

  it('honest: a JSON file that is not JSON is still refused as such, a byte order mark or not', () => {
    for (const text of ['\uFEFF{ not json', '{ not json']) {
      const path = file('broken-keys.json', text);
      expect(() => readSigningKeys(path)).toThrow(`svc.keys.file: ${path} is not valid JSON`);
    }
  });

  it('honest: a trailing space a .properties line keeps does not change svc.subject.default-type', () => {
    expect(loadSettings({ env: {}, file: file('subject.properties', 'svc.subject.default-type = public \n') }).subject.defaultType).toBe('public');
  });
});

describe('settings that cannot hold together', () => {
  it.each([
    [{ PORT: '9000', SVC_OPS_PORT: '9000' }, 'SVC_OPS_PORT'],
    [{ SVC_OPS_PORT: '3000' }, 'SVC_OPS_PORT'],
  ])('stops when svc.ops.port is svc.port (%j): the operations listener would fail as if another process held the port', (env, from) => {
    const err = captureError(() => loadSettings({ env }));
    expect(err.properties).toEqual(['svc.ops.port']);
    expect(err.message).toMatch(new RegExp(`^invalid value for svc\\.ops\\.port \\(from ${from}\\): \\d+ is svc\\.port too; the operations listener needs a port of its own$`));
  });

  it('honest: an operations port of its own, or both ports chosen by the system (0)', () => {
    expect(loadSettings({ env: { PORT: '3000', SVC_OPS_PORT: '9000' } }).ops.port).toBe(9000);
    expect(loadSettings({ env: { PORT: '0', SVC_OPS_PORT: '0' } }).ops.port).toBe(0);
  });
});

describe('values quoted in a refusal', () => {
  it.each([
    ['svc.base-url', 'ftp://ops:S3CRET-pw@id.example.com'],
    ['svc.base-url', 'https://ops:S3CRET-pw@id.example .com'],
    ['svc.fetch.private-hosts', 'keys.internal,ops:S3CRET-pw@keys.internal'],
  ])('never repeat the credentials of a URL a refused %s carries', (name, raw) => {
    const err = captureError(() => loadSettings({ env: {}, properties: { [name]: raw } }));
    expect(err.properties).toEqual([name]);
    expect(err.message).not.toContain('S3CRET');
  });

  it('honest: a refused value without credentials is still quoted, so the operator sees what was read', () => {
    expect(captureError(() => loadSettings({ env: {}, properties: { 'svc.base-url': 'ftp://id.example.com' } })).message).toContain('"ftp://id.example.com"');
    expect(captureError(() => loadSettings({ env: {}, properties: { 'svc.fetch.private-hosts': 'a b' } })).message).toContain('"a b"');
  });

  it('says the number that was written, not what it overflowed to', () => {
    const err = captureError(() => loadSettings({ env: { SVC_ACCESS_TOKEN_TTL: `1${'0'.repeat(400)}` } }));
    expect(err.message).toMatch(/^invalid value for svc\.access-token\.ttl \(from SVC_ACCESS_TOKEN_TTL\): expected a number from 60 to 86400, got 10{20}…$/);
    expect(captureError(() => loadSettings({ env: { PORT: '70000' } })).message).toBe('invalid value for svc.port (from PORT): expected a number from 0 to 65535, got 70000');
  });
});

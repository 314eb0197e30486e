import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken, OutboundFetchError } from '../../lib/index.js';
import { fetchDocument, type OutboundFetchOptions } from '../../lib/net/fetch.js';
import { parsePrivateHosts } from '../../lib/net/private-hosts.js';
import { findUnsafeDefaults } from '../../lib/settings/unsafe.js';
import { loadSettings } from '../../lib/settings/load.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { startPrivateHost, type PrivateHost } from '../helpers/private-network.js';
import { encryptionKey, isUnspent, register, trustForOutboundFetch } from '../helpers/registration.js';

const REFUSED = 'resolves to a loopback, private, link-local or reserved address';

async function failure(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(OutboundFetchError);
  return (err as Error).message;
}

describe('svc.fetch.private-hosts: a relying party on the operator\'s own network (fd00::/8 in a namespace of the test)', () => {
  let host: PrivateHost;
  let enc: Awaited<ReturnType<typeof encryptionKey>>;
  /** Options for `entries`, trusting the key server's certificate; names resolve to the private address. */
  const optionsFor = (entries: string, resolve?: OutboundFetchOptions['resolve']): OutboundFetchOptions => ({
    allowPrivateNetwork: false,
    privateHosts: parsePrivateHosts(entries),
    ca: host.ca,
    resolve: resolve ?? (() => Promise.resolve([{ address: host.address, family: 6 }])),
  });

  beforeAll(async () => {
    enc = await encryptionKey('RSA-OAEP-256');
    host = await startPrivateHost({ keys: [enc.jwk] });
  });
  afterAll(() => host.close());

  it('fetches a listed host at its private address, and refuses the same address unlisted (the default)', async () => {
    const doc = await fetchDocument(`https://[${host.address}]/keys`, optionsFor(`[${host.address}]`));
    expect(JSON.parse(doc.body.toString())).toEqual({ keys: [enc.jwk] });
    const seen = (await host.requests()).length;
    expect(await failure(fetchDocument(`https://[${host.address}]/keys`, optionsFor('')))).toBe(`https://[${host.address}]/keys: ${REFUSED}`);
    expect(await host.requests()).toHaveLength(seen);
  });

  it('opens only the listed port: 443 when the entry names none', async () => {
    expect((await fetchDocument(`https://[${host.address}]:8443/keys`, optionsFor(`[${host.address}]:8443`))).status).toBe(200);
    expect(await failure(fetchDocument(`https://[${host.address}]/keys`, optionsFor(`[${host.address}]:8443`)))).toContain(REFUSED);
    expect(await failure(fetchDocument(`https://[${host.address}]:8443/keys`, optionsFor(`[${host.address}]`)))).toContain(REFUSED);
  });

  it.each(['https://keys.internal/keys', 'https://KEYS.Internal/keys', 'https://keys.internal:443/keys', 'https://keys%2Einternal/keys', 'https://keys.internal./keys'])(
    'treats %s as the listed keys.internal',
    async (url) => {
      const seen = (await host.requests()).length;
      expect((await fetchDocument(url, optionsFor('keys.internal'))).status).toBe(200);
      expect((await host.requests()).slice(seen)).toEqual([`${host.address} GET /keys`]);
    },
  );

  it.each(['https://keys.internal.evil.test/keys', 'https://sub.keys.internal/keys', 'https://xkeys.internal/keys', 'https://keys.internal:8443/keys', 'https://keys.internal@evil.test/keys'])(
    'refuses %s, which is not the listed host and port, at the same private address',
    async (url) => {
      const seen = (await host.requests()).length;
      const message = await failure(fetchDocument(url, optionsFor('keys.internal')));
      expect(message).toMatch(new RegExp(`${REFUSED.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}|must not carry credentials`));
      expect(await host.requests()).toHaveLength(seen);
    },
  );

  it('follows a redirect within the listed host, and refuses one to an unlisted private address before connecting', async () => {
    expect((await fetchDocument(`https://[${host.address}]/to-keys`, optionsFor(`[${host.address}]`))).status).toBe(200);
    const message = await failure(fetchDocument(`https://[${host.address}]/to-other`, optionsFor(`[${host.address}]`)));
    expect(message).toBe(`https://[${host.address}]/to-other: redirects to another host ([${host.otherAddress}])`);
    expect((await host.requests()).filter((line) => line.startsWith(host.otherAddress))).toEqual([]);
  });

  it('treats other spellings of a listed IPv6 literal as the same host, in the URL and in the entry', async () => {
    const [head] = host.address.split('::') as [string];
    const expanded = `${head.toUpperCase()}:0:0:0:0:2`;
    expect((await fetchDocument(`https://[${expanded}]/keys`, optionsFor(`[${host.address}]`))).status).toBe(200);
    expect((await fetchDocument(`https://[${host.address}]:443/keys`, optionsFor(`[${expanded}]:443`))).status).toBe(200);
  });

  it('refuses a redirect to the listed host on a port the entry does not name, before connecting', async () => {
    const seen = (await host.requests()).length;
    const message = await failure(fetchDocument(`https://[${host.address}]/to-8443`, optionsFor(`[${host.address}]`)));
    expect(message).toBe(`https://[${host.address}]/to-8443: redirects to another host ([${host.address}]:8443)`);
    expect((await host.requests()).slice(seen)).toEqual([`${host.address} GET /to-8443`]);
  });

  it('refuses a redirect from a listed name to an unlisted name on the same private address, before resolving it', async () => {
    const asked: string[] = [];
    const resolve: OutboundFetchOptions['resolve'] = (name) => {
      asked.push(name);
      return Promise.resolve([{ address: host.address, family: 6 }]);
    };
    const message = await failure(fetchDocument('https://keys.internal/to-name', optionsFor('keys.internal', resolve)));
    expect(message).toBe('https://keys.internal/to-name: redirects to another host (other.internal)');
    expect(asked).toEqual(['keys.internal']);
  });

  it('connects to the answer it vetted: a resolver that turns to loopback after the check is never asked again', async () => {
    let calls = 0;
    const turning: OutboundFetchOptions['resolve'] = () => {
      calls += 1;
      const address = calls === 1 ? host.address : '127.0.0.1';
      return Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
    };
    const seen = (await host.requests()).length;
    expect((await fetchDocument('https://keys.internal/keys', optionsFor('keys.internal', turning))).status).toBe(200);
    expect(calls).toBe(1);
    expect((await host.requests()).slice(seen)).toEqual([`${host.address} GET /keys`]);
  });

  it('refuses a name whose first answer is loopback, even when a later answer would be the listed private address', async () => {
    let calls = 0;
    const turning: OutboundFetchOptions['resolve'] = () => {
      calls += 1;
      const address = calls === 1 ? '127.0.0.1' : host.address;
      return Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
    };
    const seen = (await host.requests()).length;
    expect(await failure(fetchDocument('https://keys.internal/keys', optionsFor('keys.internal', turning)))).toBe(`https://keys.internal/keys: ${REFUSED}`);
    expect(calls).toBe(1);
    expect(await host.requests()).toHaveLength(seen);
  });

  it('judges every hop on the answer it connects to: a listed name that turns to loopback on the next hop is refused', async () => {
    const answers = [host.address, '127.0.0.1'];
    const changing: OutboundFetchOptions['resolve'] = () => {
      const address = answers.shift() ?? '127.0.0.1';
      return Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
    };
    const seen = (await host.requests()).length;
    expect(await failure(fetchDocument('https://keys.internal/to-keys', optionsFor('keys.internal', changing)))).toBe(`https://keys.internal/keys: ${REFUSED}`);
    expect((await host.requests()).slice(seen)).toEqual([`${host.address} GET /to-keys`]);
  });

  it.each(['127.0.0.1', '::1', '169.254.169.254', 'fe80::1', '100.64.0.1', '::ffff:10.0.0.1', '192.0.2.1', 'fc00::1'])(
    'never opens %s, even for a listed name',
    async (address) => {
      const resolve: OutboundFetchOptions['resolve'] = () => Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
      const seen = (await host.requests()).length;
      expect(await failure(fetchDocument('https://keys.internal/keys', optionsFor('keys.internal', resolve)))).toBe(`https://keys.internal/keys: ${REFUSED}`);
      expect(await host.requests()).toHaveLength(seen);
    },
  );

  it('refuses a listed name when any of its answers is not allowed', async () => {
    const resolve: OutboundFetchOptions['resolve'] = () => Promise.resolve([{ address: host.address, family: 6 }, { address: '169.254.169.254', family: 4 }]);
    const seen = (await host.requests()).length;
    expect(await failure(fetchDocument('https://keys.internal/keys', optionsFor('keys.internal', resolve)))).toBe(`https://keys.internal/keys: ${REFUSED}`);
    expect(await host.requests()).toHaveLength(seen);
  });

  it('keeps https required for a listed host', async () => {
    expect(await failure(fetchDocument(`http://[${host.address}]/keys`, optionsFor(`[${host.address}]`)))).toBe(`http://[${host.address}]/keys: must use https`);
  });

  describe('registration through the app', () => {
    let running: RunningApp;
    let distrust = (): void => undefined;
    beforeAll(async () => {
      // The app's fetch passes no CA of its own: trust the key server's certificate the way an
      // operator's system trust store would.
      distrust = trustForOutboundFetch(host.ca);
      running = await startApp({ properties: { 'svc.fetch.private-hosts': `[${host.address}]` } });
    });
    afterAll(async () => {
      distrust();
      await running.close();
    });

    it('registers a client whose jwks_uri is on the listed private host, and refuses an unlisted one with nothing stored', async () => {
      const listed = (await issueInitialAccessToken(running.app.svc.provider)).token;
      const ok = await register(running, { redirect_uris: ['https://rp.example/cb'], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: `https://[${host.address}]/keys` }, listed);
      expect(ok.status).toBe(201);

      const unlisted = (await issueInitialAccessToken(running.app.svc.provider)).token;
      const refused = await register(running, { redirect_uris: ['https://rp.example/cb'], userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: `https://[${host.otherAddress}]/keys` }, unlisted);
      expect([refused.status, refused.body.error]).toEqual([400, 'invalid_client_metadata']);
      expect(refused.body.error_description).toBe(`jwks_uri: https://[${host.otherAddress}]/keys: ${REFUSED}`);
      expect(await isUnspent(running, unlisted)).toBe(true);
    });
  });
});

describe('svc.fetch.private-hosts entries', () => {
  it('reads host and host:port in canonical form', () => {
    expect(parsePrivateHosts(' Keys.Internal , keys.internal:8443,[FD00:0:0::7], 10.1.2.3:9443, 192.168.1.1')).toEqual(['keys.internal:443', 'keys.internal:8443', '[fd00::7]:443', '10.1.2.3:9443', '192.168.1.1:443']);
    expect(parsePrivateHosts('')).toEqual([]);
  });

  it.each([
    ['127.0.0.1', '127.0.0.1 is not a private address'],
    ['[::1]', '::1 is not a private address'],
    ['169.254.169.254', '169.254.169.254 is not a private address'],
    ['[fe80::1]', 'fe80::1 is not a private address'],
    ['100.64.0.1', '100.64.0.1 is not a private address'],
    ['https://keys.internal', 'expected host or host:port'],
    ['keys.internal/keys', 'expected host or host:port'],
    ['*.internal', 'expected host or host:port'],
    ['user@keys.internal', 'expected host or host:port'],
    ['keys.internal:99999', 'expected host or host:port'],
  ])('refuses %s', (entry, message) => {
    expect(() => parsePrivateHosts(entry)).toThrow(message);
  });

  it('names the property when an entry is refused, and is no unsafe default in production', () => {
    expect(() => loadSettings({ env: {}, properties: { 'svc.fetch.private-hosts': '169.254.169.254' } })).toThrow('svc.fetch.private-hosts');
    const settings = loadSettings({ env: {}, properties: { 'svc.fetch.private-hosts': 'keys.internal' } });
    expect(settings.fetch.privateHosts).toEqual(['keys.internal:443']);
    expect(findUnsafeDefaults(settings).map((u) => u.property)).not.toContain('svc.fetch.private-hosts');
  });
});

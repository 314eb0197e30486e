import { generateKeyPairSync } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { compactDecrypt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { createDemoClaimModules } from '../../lib/demo/claim-modules.js';
import { issueInitialAccessToken } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { b64uint } from '../helpers/hostile-keys.js';
import { capturingLogger } from '../helpers/logs.js';
import { rawIdToken, recordingAnswers, type RawAnswers } from '../helpers/raw-answers.js';
import { encryptionKey, manage, register, startDocServer, type DocServer } from '../helpers/registration.js';
import { rpKeyPair } from '../helpers/rp-keys.js';

const REDIRECT = 'https://rp.example/cb';
const ALG = 'RSA-OAEP-256';
const REFRESH_FAILED = 'client JSON Web Key Set failed to be refreshed';

type Key = Awaited<ReturnType<typeof encryptionKey>>;

/**
 * Moves only `Date` forward (oidc-provider's JWK Set cache and every expiry check read it); timers,
 * sockets and Redis keep real time, so nothing waits.
 */
function advanceClock(seconds: number): void {
  const now = Date.now();
  jest.useFakeTimers({
    doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'],
    advanceTimers: true,
  });
  jest.setSystemTime(now + seconds * 1000);
}

describe('keys fetched again from jwks_uri are vetted at that moment (C6, issue 14 item 2)', () => {
  let running: RunningApp;
  let docs: DocServer;
  const logs = capturingLogger();
  /** The JWK Set each path serves now, and how often each path was fetched. */
  const sets = new Map<string, JWK[]>();
  const hits = new Map<string, number>();
  /** Cache-Control per path, where a test wants another one. */
  const caching = new Map<string, string>();
  /** An Expires header per path, where a test wants one. */
  const expiring = new Map<string, string>();
  /** A failed answer per path, where a test wants one instead of the set. */
  const failing = new Map<string, { status: number; body: string }>();
  /** Paths whose answer is cut short: a declared length, part of the body, then the connection closed. */
  const cutting = new Set<string>();
  let path = 0;

  beforeAll(async () => {
    docs = await startDocServer();
    docs.handler = (req, res) => {
      const url = req.url ?? '';
      hits.set(url, (hits.get(url) ?? 0) + 1);
      res.setHeader('content-type', 'application/json');
      // The strictest caching a server can ask for; oidc-provider still keeps a set for 60 s.
      res.setHeader('cache-control', caching.get(url) ?? 'no-cache, no-store');
      if (expiring.has(url)) res.setHeader('expires', expiring.get(url) as string);
      if (cutting.has(url)) {
        res.setHeader('content-length', 1000);
        res.write('{"keys":[', () => res.socket?.destroy());
        return;
      }
      res.statusCode = failing.get(url)?.status ?? 200;
      res.end(failing.get(url)?.body ?? JSON.stringify({ keys: sets.get(url) ?? [] }));
    };
    running = await startApp({ properties: { 'svc.fetch.allow-private-network': true }, logger: logs.logger, claimModules: createDemoClaimModules() });
  });
  afterEach(() => {
    jest.useRealTimers();
  });
  afterAll(async () => {
    await running.close();
    await docs.close();
  });

  /** Registers a client whose jwks_uri serves `keys` now. */
  async function registerAt(keys: JWK[], metadata: Record<string, unknown> = { id_token_encrypted_response_alg: ALG, userinfo_encrypted_response_alg: ALG }) {
    path += 1;
    const where = `/rp-${path}/jwks`;
    sets.set(where, keys);
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const res = await register(running, { redirect_uris: [REDIRECT], jwks_uri: `${docs.url}${where}`, ...metadata }, token);
    expect([res.status, res.body.error_description]).toEqual([201, undefined]);
    return { client: res.body as unknown as ClientMetadata, where, url: `${docs.url}${where}` };
  }

  /** Runs a code flow, decrypting with `key`; returns what the RP saw, or the error it got. */
  async function flow(client: ClientMetadata, keys: Key[], options: { skipUserinfo?: boolean } = {}) {
    const seen: RawAnswers = {};
    const result = await runCodeFlow(running.issuer, client, { scope: 'openid profile email', configure: recordingAnswers(seen, ...keys), ...options }).catch((e: unknown) => e as Error);
    return { seen, result };
  }

  const refusals = (): Record<string, unknown>[] =>
    logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'client_keys_refused');

  /** The token endpoint refused to issue: the documented error, and no ID token in the body. */
  function expectRefusedAtToken(seen: RawAnswers, result: unknown, url: string, rule: string): void {
    expect(result).toBeInstanceOf(Error);
    expect(seen.token?.status).toBe(400);
    expect(JSON.parse(seen.token?.body ?? '{}')).toEqual({
      error: 'invalid_client_metadata',
      error_description: `${REFRESH_FAILED}: jwks_uri ${url}: no key passed the key rules (${rule})`,
    });
    expect(seen.token?.body).not.toContain('id_token');
    expect(seen.userinfo).toBeUndefined();
  }

  it.each([
    ['an e = 1 RSA key (encryption would be the identity)', (good: JWK): JWK => ({ ...good, e: b64uint(1n) }), 'RSA public exponent 1 is below 65537'],
    [
      'a 1024-bit RSA key',
      (good: JWK): JWK => ({ ...(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' }) as JWK), use: 'enc', kid: good.kid }),
      'RSA modulus of 1024 bits, at least 2048 needed',
    ],
  ])('a good key at registration, then %s: no ID token leaves, the RP gets invalid_client_metadata; fixed at once when the set is fixed', async (_name, hostile, reason) => {
    const good = await encryptionKey(ALG, { kid: 'rp-enc' });
    const { client, where, url } = await registerAt([good.jwk]);
    expect(hits.get(where)).toBe(1);
    sets.set(where, [hostile(good.jwk)]);
    const before = refusals().length;

    const { seen, result } = await flow(client, [good]);
    expect(hits.get(where)).toBe(2);
    const rule = `key #1 ("rp-enc"): ${reason}`;
    expectRefusedAtToken(seen, result, url, rule);
    expect((result as oidc.ResponseBodyError).error).toBe('invalid_client_metadata');
    const logged = refusals().slice(before);
    expect(logged).toEqual([{ e: 'client_keys_refused', request_id: expect.any(String), client_id: client.client_id, host: new URL(url).host, refused: 1, kept: 0, rule }]);
    const n = String(good.jwk.n);
    expect(logs.lines.some((l) => l.includes(n.slice(0, 32)))).toBe(false);

    // A refused set is remembered for 60 s, as long as an accepted one is kept: within them every
    // request is refused at once, with the same description, and nothing is fetched or judged again.
    sets.set(where, [good.jwk]);
    const remembered = await flow(client, [good]);
    expectRefusedAtToken(remembered.seen, remembered.result, url, rule);
    expect(hits.get(where)).toBe(2);
    expect(refusals().slice(before)).toHaveLength(1);

    // After them the set is fetched again, and works once it is good.
    advanceClock(61);
    const fixed = await flow(client, [good]);
    expect(fixed.result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(fixed.seen))).toMatchObject({ alg: ALG, kid: 'rp-enc' });
    expect(hits.get(where)).toBe(3);
  });

  it('UserInfo: an e = 1 key fetched for the UserInfo response is refused; no JWT, invalid_client_metadata', async () => {
    const good = await encryptionKey(ALG, { kid: 'ui-enc' });
    // The ID token is not encrypted (so it carries no user data, C4); only UserInfo is.
    const { client, where, url } = await registerAt([good.jwk], { userinfo_encrypted_response_alg: ALG });
    const signedIn = await flow(client, [good], { skipUserinfo: true });
    expect(signedIn.result).not.toBeInstanceOf(Error);
    expect(hits.get(where)).toBe(1);
    sets.set(where, [{ ...good.jwk, e: b64uint(1n) }]);

    const accessToken = (JSON.parse(signedIn.seen.token?.body ?? '{}') as { access_token: string }).access_token;
    const response = await fetch(`${running.issuer}/userinfo`, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } });
    expect(hits.get(where)).toBe(2);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toEqual({
      error: 'invalid_client_metadata',
      error_description: `${REFRESH_FAILED}: jwks_uri ${url}: no key passed the key rules (key #1 ("ui-enc"): RSA public exponent 1 is below 65537)`,
    });
  });

  it('a swap after a successful flow takes effect when the cached set expires (60 s at least), and is refused then', async () => {
    const good = await encryptionKey(ALG, { kid: 'cached' });
    const { client, where, url } = await registerAt([good.jwk]);
    expect((await flow(client, [good])).result).not.toBeInstanceOf(Error);
    expect(hits.get(where)).toBe(2);
    sets.set(where, [{ ...good.jwk, e: b64uint(1n) }]);

    // Within the cache lifetime the provider keeps encrypting to the key it vetted.
    const cached = await flow(client, [good]);
    expect(cached.result).not.toBeInstanceOf(Error);
    expect(hits.get(where)).toBe(2);

    advanceClock(61);
    const { seen, result } = await flow(client, [good]);
    expect(hits.get(where)).toBe(3);
    expectRefusedAtToken(seen, result, url, 'key #1 ("cached"): RSA public exponent 1 is below 65537');
  });

  it('a max-age longer than 60 s is honoured: the set is fetched again only after it', async () => {
    const good = await encryptionKey(ALG, { kid: 'long' });
    const { client, where, url } = await registerAt([good.jwk]);
    caching.set(where, 'public, max-age=600');
    expect((await flow(client, [good])).result).not.toBeInstanceOf(Error);
    expect(hits.get(where)).toBe(2);
    sets.set(where, [{ ...good.jwk, e: b64uint(1n) }]);
    advanceClock(61);
    expect((await flow(client, [good])).result).not.toBeInstanceOf(Error);
    expect(hits.get(where)).toBe(2);
    advanceClock(600);
    const { seen, result } = await flow(client, [good]);
    expect(hits.get(where)).toBe(3);
    expectRefusedAtToken(seen, result, url, 'key #1 ("long"): RSA public exponent 1 is below 65537');
  });

  it('attack: a max-age or Expires of a year keeps a key the client removed in use at most an hour', async () => {
    for (const header of [['cache-control', 'public, max-age=31536000'], ['expires', new Date(Date.now() + 365 * 86400_000).toUTCString()]] as const) {
      const [old, next] = [await encryptionKey(ALG, { kid: `old-${header[0]}` }), await encryptionKey(ALG, { kid: `next-${header[0]}` })];
      const { client, where } = await registerAt([old.jwk]);
      caching.set(where, header[0] === 'cache-control' ? header[1] : 'public');
      if (header[0] === 'expires') expiring.set(where, header[1]);
      expect((await flow(client, [old])).result).not.toBeInstanceOf(Error);
      sets.set(where, [next.jwk]);
      advanceClock(3601);
      const { seen, result } = await flow(client, [next]);
      expect(result).not.toBeInstanceOf(Error);
      expect(decodeProtectedHeader(rawIdToken(seen))).toMatchObject({ alg: ALG, kid: `next-${header[0]}` });
      expect(hits.get(where)).toBe(3);
    }
  });

  const aYear = (): string => new Date(Date.now() + 365 * 86400_000).toUTCString();
  it.each([
    ['no-cache beside a max-age of a year', 'no-cache, max-age=31536000', undefined],
    ['a short max-age beside an Expires of a year', 'public, max-age=60', aYear],
    ['a max-age of a year after a semicolon', 'public;max-age=31536000', undefined],
    ['a max-age of a year inside another directive\'s name', 'x-max-age=31536000', undefined],
  ])('attack: %s keeps a key the client removed in use at most an hour too', async (_name, control, expires) => {
    const [old, next] = [await encryptionKey(ALG, { kid: 'old' }), await encryptionKey(ALG, { kid: 'next' })];
    const { client, where } = await registerAt([old.jwk]);
    caching.set(where, control);
    if (expires) expiring.set(where, expires());
    expect((await flow(client, [old], { skipUserinfo: true })).result).not.toBeInstanceOf(Error);
    sets.set(where, [next.jwk]);
    advanceClock(3601);
    const { seen, result } = await flow(client, [next], { skipUserinfo: true });
    expect(result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(seen))).toMatchObject({ alg: ALG, kid: 'next' });
    expect(hits.get(where)).toBe(3);
  });

  it('honest: a short max-age beside a longer Expires within the hour is honoured as its longer lifetime', async () => {
    const good = await encryptionKey(ALG, { kid: 'expires' });
    const { client, where } = await registerAt([good.jwk]);
    caching.set(where, 'public, max-age=60');
    expiring.set(where, new Date(Date.now() + 1200_000).toUTCString());
    expect((await flow(client, [good], { skipUserinfo: true })).result).not.toBeInstanceOf(Error);
    expect(hits.get(where)).toBe(2);
    advanceClock(600);
    expect((await flow(client, [good], { skipUserinfo: true })).result).not.toBeInstanceOf(Error);
    expect(hits.get(where)).toBe(2);
  });

  it('keys remain but none can encrypt: invalid_client_metadata names the algorithm and the refused key', async () => {
    const good = await encryptionKey(ALG, { kid: 'enc' });
    const signing = (await rpKeyPair('RS256')).publicJwk;
    const { client, where, url } = await registerAt([good.jwk, { ...signing, use: 'sig', kid: 'sig' }]);
    sets.set(where, [{ ...good.jwk, e: b64uint(1n) }, { ...signing, use: 'sig', kid: 'sig' }]);
    const { seen, result } = await flow(client, [good]);
    expect(result).toBeInstanceOf(Error);
    expect([seen.token?.status, JSON.parse(seen.token?.body ?? '{}')]).toEqual([
      400,
      {
        error: 'invalid_client_metadata',
        error_description: `no suitable encryption key found (${ALG}): jwks_uri ${url}: keys refused by the key rules (key #1 ("enc"): RSA public exponent 1 is below 65537)`,
      },
    ]);
    expect(seen.token?.body).not.toContain('id_token');
  });

  const accessTokens = async (): Promise<number | undefined> => (await running.app.svc.store.inventory?.list('AccessToken', { limit: 500 }))?.records.length;
  const unfits = (): Record<string, unknown>[] => logs.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'client_keys_unfit');
  /** What the RP is told when its keys hold none for `field` `alg`, though none was refused. */
  const unfitDescription = (url: string, field: string, alg: string, family: string): string =>
    `no suitable encryption key found (${alg}): jwks_uri ${url} holds no key for ${field} ${alg}: it needs an ${family} public key with use "enc" or key_ops containing "encrypt", and no alg other than ${alg}`;

  it.each([
    ['signing keys only', (signing: JWK): JWK[] => [{ ...signing, use: 'sig', kid: 'sig' }]],
    ['no key at all', (): JWK[] => []],
    ['an EC encryption key only (RSA-OAEP-256 asked)', (_s: JWK, ec: JWK): JWK[] => [ec]],
    ['an RSA key whose alg is RSA-OAEP', (signing: JWK): JWK[] => [{ ...signing, use: 'enc', alg: 'RSA-OAEP', kid: 'oaep' }]],
    ['an RSA key with key_ops ["verify"] beside a signing key', (signing: JWK): JWK[] => [{ ...signing, key_ops: ['verify'], kid: 'ops' }, { ...signing, use: 'sig', kid: 'sig' }]],
  ])('a set swapped to %s under a year-long max-age: invalid_client_metadata naming the key needed, one client_keys_unfit line, no ID token, and the fixed set serves after 60 s, not a year', async (_name, swapped) => {
    const good = await encryptionKey(ALG, { kid: 'enc' });
    const signing = (await rpKeyPair('RS256')).publicJwk;
    const ec = (await encryptionKey('ECDH-ES', { kid: 'ec' })).jwk;
    const { client, where, url } = await registerAt([good.jwk]);
    caching.set(where, 'public, max-age=31536000');
    sets.set(where, swapped(signing, ec));
    const [refusedBefore, unfitBefore, tokensBefore] = [refusals().length, unfits().length, await accessTokens()];
    const broken = await flow(client, [good]);
    expect(broken.result).toBeInstanceOf(Error);
    expect([broken.seen.token?.status, JSON.parse(broken.seen.token?.body ?? '{}')]).toEqual([
      400,
      { error: 'invalid_client_metadata', error_description: unfitDescription(url, 'id_token_encrypted_response_alg', ALG, 'RSA') },
    ]);
    expect(broken.seen.token?.body).not.toContain('id_token"');
    expect(broken.seen.userinfo).toBeUndefined();
    expect(hits.get(where)).toBe(2);
    expect(await accessTokens()).toBe(tokensBefore);
    expect(refusals().slice(refusedBefore)).toEqual([]);
    expect(unfits().slice(unfitBefore)).toEqual([{ e: 'client_keys_unfit', request_id: expect.any(String), client_id: client.client_id, field: 'id_token_encrypted_response_alg', alg: ALG }]);
    for (const material of [signing.n, ec.x, good.jwk.n].map((v) => String(v).slice(0, 32))) expect(logs.lines.some((l) => l.includes(material))).toBe(false);

    sets.set(where, [good.jwk]);
    advanceClock(61);
    const fixed = await flow(client, [good]);
    expect(fixed.result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(fixed.seen))).toMatchObject({ alg: ALG, kid: 'enc' });
    expect(hits.get(where)).toBe(3);
    expect(await accessTokens()).toBe((tokensBefore ?? 0) + 1);
  });

  it('attack: the set loses only the key UserInfo encrypts to: the ID token still comes, and every UserInfo request (GET, POST, HEAD, at once) is refused naming userinfo_encrypted_response_alg, each logged once', async () => {
    const rsa = await encryptionKey(ALG, { kid: 'rsa' });
    const ec = await encryptionKey('ECDH-ES', { kid: 'ec' });
    const { client, where, url } = await registerAt([rsa.jwk, ec.jwk], { id_token_encrypted_response_alg: ALG, userinfo_encrypted_response_alg: 'ECDH-ES' });
    sets.set(where, [rsa.jwk]);
    advanceClock(61);
    const signedIn = await flow(client, [rsa], { skipUserinfo: true });
    expect(decodeProtectedHeader(rawIdToken(signedIn.seen))).toMatchObject({ alg: ALG, kid: 'rsa' });
    const fetched = hits.get(where);
    const accessToken = (JSON.parse(signedIn.seen.token?.body ?? '{}') as { access_token: string }).access_token;
    const before = unfits().length;
    const ask = (method: string) =>
      fetch(`${running.issuer}/userinfo`, {
        method,
        headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        ...(method === 'POST' ? { body: '' } : {}),
      });
    const answers = await Promise.all(['GET', 'POST', 'GET', 'HEAD'].map(ask));
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400, 400]);
    const description = unfitDescription(url, 'userinfo_encrypted_response_alg', 'ECDH-ES', 'EC P-256/384/521 or X25519');
    for (const answer of answers.slice(0, 3)) expect(await answer.json()).toStrictEqual({ error: 'invalid_client_metadata', error_description: description });
    expect(hits.get(where)).toBe(fetched);
    const logged = unfits().slice(before);
    expect(logged).toEqual(Array(4).fill({ e: 'client_keys_unfit', request_id: expect.any(String), client_id: client.client_id, field: 'userinfo_encrypted_response_alg', alg: 'ECDH-ES' }));
    expect(new Set(logged.map((l) => l.request_id)).size).toBe(4);
    expect(logs.lines.some((l) => l.includes('erika'))).toBe(false);
  });

  it('honest: a set mixing a signing key and one encryption key labelled key_ops ["encrypt"] (the spec\'s label) serves after a refetch, nothing logged', async () => {
    const first = await encryptionKey(ALG, { kid: 'first' });
    const next = await encryptionKey(ALG, { kid: 'next', use: undefined, key_ops: ['encrypt'] });
    const signing = (await rpKeyPair('RS256')).publicJwk;
    const { client, where } = await registerAt([{ ...signing, use: 'sig', kid: 'sig' }, first.jwk]);
    sets.set(where, [{ ...signing, use: 'sig', kid: 'sig' }, next.jwk]);
    advanceClock(61);
    const before = [refusals().length, unfits().length];
    const { seen, result } = await flow(client, [next]);
    expect(result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(seen))).toMatchObject({ alg: ALG, kid: 'next' });
    expect(decodeProtectedHeader(seen.userinfo?.body ?? '')).toMatchObject({ alg: ALG, kid: 'next' });
    expect((result as { claims: Record<string, unknown> }).claims.email).toBe('erika.mustermann@example.com');
    expect([refusals().length, unfits().length]).toEqual(before);
  });

  /** An ECDH-ES key pair on `crv`, labelled as `extra` says (no `use` unless given). */
  async function ecdhKey(crv: 'P-256' | 'X25519', extra: Partial<JWK>): Promise<Key> {
    const { publicKey, privateKey } = await generateKeyPair('ECDH-ES', { crv, extractable: true });
    return { privateKey, jwk: { ...(await exportJWK(publicKey)), ...extra } };
  }
  const ed25519 = (kid: string): JWK => ({ ...(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as JWK), kid });
  const pick = (why: string): string => `the provider may pick it for id_token_encrypted_response_alg ECDH-ES (its use, key_ops and alg allow that), and it would fail: ${why}`;

  // Issue 14 F4: registration's rule 7 (a key the provider may pick must work) applies at every
  // fetch too, with the algorithms the client registered; these ended in 500s before.
  const unpickable: [string, () => JWK[], string][] = [
    // (A key with neither use nor key_ops is dropped unjudged for a client asking for encryption, C6.2.)
    ['an Ed25519 key labelled only key_ops ["verify"]', () => [{ ...ed25519('ed'), key_ops: ['verify'] }], `key #1 ("ed"): ${pick('OKP Ed25519 key, but ECDH-ES needs EC P-256/384/521 or X25519')}`],
    [
      'a P-256 key with key_ops ["verify"] and no use',
      () => [{ ...(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }) as JWK), key_ops: ['verify'], kid: 'ecv' }],
      `key #1 ("ecv"): ${pick('key_ops ["verify"], but an ECDH-ES public key must carry no key_ops (use "enc" instead)')}`,
    ],
  ];
  it.each(unpickable)(
    'ECDH-ES registered, then the set swapped to %s: 400 invalid_client_metadata naming rule 7, no ID token (not a 500)',
    async (_name, swapped, rule) => {
      const good = await ecdhKey('P-256', { use: 'enc', kid: 'p256-enc' });
      const { client, where, url } = await registerAt([good.jwk], { id_token_encrypted_response_alg: 'ECDH-ES', userinfo_encrypted_response_alg: 'ECDH-ES' });
      sets.set(where, swapped());
      const before = refusals().length;
      const { seen, result } = await flow(client, [good]);
      expect(hits.get(where)).toBe(2);
      expect(result).toBeInstanceOf(Error);
      expect(seen.token?.status).toBe(400);
      // Exactly these two members (the description names id_token_encrypted_response_alg, so no substring test).
      expect(JSON.parse(seen.token?.body ?? '{}')).toStrictEqual({
        error: 'invalid_client_metadata',
        error_description: `${REFRESH_FAILED}: jwks_uri ${url}: no key passed the key rules (${rule})`,
      });
      expect(seen.userinfo).toBeUndefined();
      expect(refusals().slice(before)).toEqual([expect.objectContaining({ client_id: client.client_id, refused: 1, kept: 0, rule })]);
    },
  );

  it('ECDH-ES registered, then [Ed25519 with key_ops ["verify"], a good X25519 with key_ops ["deriveKey"]]: the Ed25519 key is left out and the X25519 key used, normalised', async () => {
    const good = await ecdhKey('P-256', { use: 'enc', kid: 'p256-enc' });
    const x25519 = await ecdhKey('X25519', { kid: 'x25519', key_ops: ['deriveKey'] });
    const { client, where } = await registerAt([good.jwk], { id_token_encrypted_response_alg: 'ECDH-ES', userinfo_encrypted_response_alg: 'ECDH-ES' });
    sets.set(where, [{ ...ed25519('ed'), key_ops: ['verify'] }, x25519.jwk]);
    const before = refusals().length;
    const { seen, result } = await flow(client, [x25519]);
    expect(hits.get(where)).toBe(2);
    expect(result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(seen))).toMatchObject({ alg: 'ECDH-ES', kid: 'x25519', epk: { crv: 'X25519' } });
    expect((result as { claims: Record<string, unknown> }).claims.email).toBe('erika.mustermann@example.com');
    expect(refusals().slice(before)).toEqual([
      expect.objectContaining({ refused: 1, kept: 1, rule: `key #1 ("ed"): ${pick('OKP Ed25519 key, but ECDH-ES needs EC P-256/384/521 or X25519')}` }),
    ]);
  });

  it('a legitimate rotation: the new key published first is used after the cache expires; a hostile key beside it is dropped', async () => {
    const keyA = await encryptionKey(ALG, { kid: 'key-a' });
    const keyB = await encryptionKey(ALG, { kid: 'key-b' });
    const { client, where } = await registerAt([keyA.jwk]);
    const first = await flow(client, [keyA, keyB]);
    expect(first.result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(first.seen))).toMatchObject({ kid: 'key-a' });

    // Rotation: the new key first, the old one still listed (tokens already encrypted to it stay readable).
    sets.set(where, [keyB.jwk, keyA.jwk]);
    advanceClock(61);
    const second = await flow(client, [keyA, keyB]);
    expect(hits.get(where)).toBe(3);
    expect(second.result).not.toBeInstanceOf(Error);
    const idToken = rawIdToken(second.seen);
    expect(decodeProtectedHeader(idToken)).toMatchObject({ alg: ALG, kid: 'key-b' });
    await expect(compactDecrypt(idToken, keyB.privateKey)).resolves.toBeDefined();
    await expect(compactDecrypt(idToken, keyA.privateKey)).rejects.toThrow();
    expect((second.result as { claims: Record<string, unknown> }).claims.email).toBe('erika.mustermann@example.com');

    // A hostile key listed first is removed; the provider encrypts to the good key behind it.
    const before = refusals().length;
    sets.set(where, [{ ...keyB.jwk, kid: 'hostile', e: b64uint(1n) }, keyB.jwk]);
    advanceClock(61);
    const third = await flow(client, [keyB]);
    expect(hits.get(where)).toBe(4);
    expect(third.result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(third.seen))).toMatchObject({ kid: 'key-b' });
    expect(third.seen.userinfo?.contentType).toContain('application/jwt');
    expect(decodeProtectedHeader(third.seen.userinfo?.body ?? '')).toMatchObject({ kid: 'key-b' });
    expect(refusals().slice(before)).toEqual([
      expect.objectContaining({ refused: 1, kept: 1, rule: 'key #1 ("hostile"): RSA public exponent 1 is below 65537' }),
    ]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a numeric kid', { kid: 7 }, 'key #1: kid must be a non-empty string'],
    ['an x5c that is no list of certificates', { kid: 'bad-x5c', x5c: 'MIIB' }, 'key #1 ("bad-x5c"): x5c must be an array of non-empty strings (base64 DER certificates)'],
    ['a member named "constructor"', JSON.parse('{"kid":"ctor","constructor":"x"}') as Record<string, unknown>, 'key #1 ("ctor"): a member named "constructor" is not allowed (it is no JWK parameter)'],
    ['a member named "__proto__" holding a private d', JSON.parse('{"kid":"proto","__proto__":{"d":"AAAA"}}') as Record<string, unknown>, 'key #1 ("proto"): a member named "__proto__" is not allowed (it is no JWK parameter)'],
    ['a member named "prototype"', JSON.parse('{"kid":"prototype","prototype":{}}') as Record<string, unknown>, 'key #1 ("prototype"): a member named "prototype" is not allowed (it is no JWK parameter)'],
  ])('attack: a set swapped to [a key with %s, a good key without kid]: that key alone is left out, the kid-less key serves (oidc-provider refused the whole set)', async (_name, malformed, rule) => {
    const old = await encryptionKey(ALG, { kid: 'old' });
    const next = await encryptionKey(ALG);
    const { kid: _kid, ...kidless } = next.jwk;
    const { client, where } = await registerAt([old.jwk]);
    const hostile: JWK = { ...old.jwk, ...malformed };
    sets.set(where, [hostile, kidless]);
    advanceClock(61);
    const before = refusals().length;
    const { seen, result } = await flow(client, [{ privateKey: next.privateKey, jwk: kidless }]);
    expect(hits.get(where)).toBe(2);
    expect(result).not.toBeInstanceOf(Error);
    for (const jwe of [rawIdToken(seen), seen.userinfo?.body ?? '']) {
      expect(decodeProtectedHeader(jwe)).not.toHaveProperty('kid');
      await expect(compactDecrypt(jwe, next.privateKey)).resolves.toBeDefined();
    }
    expect((result as { claims: Record<string, unknown> }).claims.email).toBe('erika.mustermann@example.com');
    expect(refusals().slice(before)).toEqual([expect.objectContaining({ refused: 1, kept: 1, rule })]);
  });

  it.each([
    ['a 503 with a JSON body', 503, '{"error":"temporarily_unavailable"}'],
    ['a 200 that is no JWK Set', 200, '{"keys":"none"}'],
    ['a 500 that lists the old key', 500, ''],
  ])('attack: a refresh answered by %s and max-age of a day does not keep the key fetched before: the set published next is used 60 s later', async (_name, status, body) => {
    const old = await encryptionKey(ALG, { kid: 'before-failure' });
    const fresh = await encryptionKey(ALG, { kid: 'after-failure' });
    const { client, where } = await registerAt([old.jwk]);
    expect(decodeProtectedHeader(rawIdToken((await flow(client, [old], { skipUserinfo: true })).seen)).kid).toBe('before-failure');
    advanceClock(61);
    failing.set(where, { status, body: body || JSON.stringify({ keys: [old.jwk] }) });
    caching.set(where, 'public, max-age=86400');
    const failed = await flow(client, [old], { skipUserinfo: true });
    expect([failed.seen.token?.status, JSON.parse(failed.seen.token?.body ?? '{}')]).toEqual([400, { error: 'invalid_client_metadata', error_description: REFRESH_FAILED }]);

    failing.delete(where);
    caching.delete(where);
    sets.set(where, [fresh.jwk]);
    advanceClock(61);
    const fetched = hits.get(where) ?? 0;
    const next = await flow(client, [old, fresh], { skipUserinfo: true });
    expect(hits.get(where)).toBe(fetched + 1);
    const idToken = rawIdToken(next.seen);
    expect(decodeProtectedHeader(idToken).kid).toBe('after-failure');
    await expect(compactDecrypt(idToken, old.privateKey)).rejects.toThrow();
    expect((next.result as { claims: Record<string, unknown> }).claims.email).toBe('erika.mustermann@example.com');
  });

  it('honest: within 60 s of a failed refresh the set vetted before still serves sign-ins, and is fetched again after them', async () => {
    const key = await encryptionKey(ALG, { kid: 'steady' });
    const { client, where } = await registerAt([key.jwk]);
    expect((await flow(client, [key], { skipUserinfo: true })).result).not.toBeInstanceOf(Error);
    advanceClock(61);
    failing.set(where, { status: 503, body: '{"error":"temporarily_unavailable"}' });
    expect((await flow(client, [key], { skipUserinfo: true })).seen.token?.status).toBe(400);
    const fetched = hits.get(where) ?? 0;
    const during = await flow(client, [key]);
    expect(hits.get(where)).toBe(fetched);
    expect((during.result as { claims: Record<string, unknown> }).claims.email).toBe('erika.mustermann@example.com');
    failing.delete(where);
    advanceClock(61);
    const after = await flow(client, [key]);
    expect(hits.get(where)).toBe(fetched + 1);
    expect(decodeProtectedHeader(rawIdToken(after.seen)).kid).toBe('steady');
  });

  it.each([
    ['a 404', 404, '{"error":"not_found"}'],
    ['a 200 that is no JWK Set', 200, '{"status":"maintenance"}'],
  ])('attack: a jwks_uri answering %s for good no longer publishes the key: nothing is encrypted to it an hour after it was last fetched, and a restored set serves again', async (_name, status, body) => {
    const gone = await encryptionKey(ALG, { kid: 'gone' });
    const { client, where } = await registerAt([gone.jwk]);
    expect(decodeProtectedHeader(rawIdToken((await flow(client, [gone], { skipUserinfo: true })).seen)).kid).toBe('gone');
    failing.set(where, { status, body });
    advanceClock(3601);
    const tokensBefore = await accessTokens();
    for (let i = 0; i < 3; i += 1) {
      const { seen, result } = await flow(client, [gone], { skipUserinfo: true });
      expect(result).toBeInstanceOf(Error);
      expect([seen.token?.status, JSON.parse(seen.token?.body ?? '{}')]).toEqual([400, { error: 'invalid_client_metadata', error_description: REFRESH_FAILED }]);
      expect(seen.token?.body).not.toContain('id_token');
    }
    expect(await accessTokens()).toBe(tokensBefore);
    failing.delete(where);
    advanceClock(61);
    expect(decodeProtectedHeader(rawIdToken((await flow(client, [gone], { skipUserinfo: true })).seen)).kid).toBe('gone');
  });

  it('attack: a jwks_uri that cuts its answer short fails the request that needs the keys, and does not hold the client\'s later requests', async () => {
    const key = await encryptionKey(ALG, { kid: 'cut' });
    const { client, where } = await registerAt([key.jwk]);
    expect((await flow(client, [key], { skipUserinfo: true })).result).not.toBeInstanceOf(Error);
    cutting.add(where);
    advanceClock(61);
    const cut = await flow(client, [key], { skipUserinfo: true });
    expect([cut.seen.token?.status, JSON.parse(cut.seen.token?.body ?? '{}')]).toEqual([400, { error: 'invalid_client_metadata', error_description: REFRESH_FAILED }]);
    cutting.delete(where);
    const next = await flow(client, [key], { skipUserinfo: true });
    expect(decodeProtectedHeader(rawIdToken(next.seen)).kid).toBe('cut');
  });

  it.each([
    ['answers 503', (where: string) => failing.set(where, { status: 503, body: '{"error":"temporarily_unavailable"}' })],
    ['cuts its answer short', (where: string) => cutting.add(where)],
  ])('a jwks_uri that %s at the client\'s first sign-in: the refresh failed, and nothing says the set holds no fitting key', async (_name, fail) => {
    const key = await encryptionKey(ALG, { kid: 'first' });
    const { client, where } = await registerAt([key.jwk]);
    fail(where);
    const before = unfits().length;
    const { seen } = await flow(client, [key], { skipUserinfo: true });
    expect([seen.token?.status, JSON.parse(seen.token?.body ?? '{}')]).toEqual([400, { error: 'invalid_client_metadata', error_description: REFRESH_FAILED }]);
    expect(unfits().slice(before)).toEqual([]);
  });

  it('honest: a jwks_uri failing now and then within the hour after its last good answer keeps serving sign-ins with the set vetted then', async () => {
    const key = await encryptionKey(ALG, { kid: 'flaky' });
    const { client, where } = await registerAt([key.jwk]);
    expect((await flow(client, [key], { skipUserinfo: true })).result).not.toBeInstanceOf(Error);
    failing.set(where, { status: 503, body: '{"error":"temporarily_unavailable"}' });
    for (const seconds of [61, 1200, 1200]) {
      advanceClock(seconds);
      expect((await flow(client, [key], { skipUserinfo: true })).seen.token?.status).toBe(400);
      const during = await flow(client, [key], { skipUserinfo: true });
      expect(decodeProtectedHeader(rawIdToken(during.seen)).kid).toBe('flaky');
    }
  });

  it('honest: a set kept as long as allowed (a max-age of a day) whose jwks_uri answers a JSON 503 when it is fetched again still serves sign-ins, one a minute failing, until the hour since its fetch is out', async () => {
    const key = await encryptionKey(ALG, { kid: 'day' });
    const { client, where } = await registerAt([key.jwk]);
    caching.set(where, 'public, max-age=86400');
    expect((await flow(client, [key], { skipUserinfo: true })).result).not.toBeInstanceOf(Error);
    const fetched = hits.get(where);
    failing.set(where, { status: 503, body: '{"error":"temporarily_unavailable"}' });
    // Minute by minute, a sign-in each, until one fetches the set again: it hears the failure.
    let minutes = 0;
    let refetching: Awaited<ReturnType<typeof flow>> | undefined;
    while (refetching === undefined && minutes < 60) {
      advanceClock(60);
      minutes += 1;
      const signIn = await flow(client, [key], { skipUserinfo: true });
      if (hits.get(where) !== fetched) refetching = signIn;
      else expect(decodeProtectedHeader(rawIdToken(signIn.seen)).kid).toBe('day');
    }
    expect([refetching?.seen.token?.status, JSON.parse(refetching?.seen.token?.body ?? '{}')]).toEqual([400, { error: 'invalid_client_metadata', error_description: REFRESH_FAILED }]);
    expect(decodeProtectedHeader(rawIdToken((await flow(client, [key], { skipUserinfo: true })).seen)).kid).toBe('day');
    // Past the hour since the set was fetched, nothing more is encrypted to it while the jwks_uri fails.
    advanceClock((60 - minutes) * 60 + 1);
    for (let i = 0; i < 2; i += 1) expect((await flow(client, [key], { skipUserinfo: true })).seen.token?.status).toBe(400);
  });

  /** RFC 7592 PUT of `client`'s metadata as it is (plus `changes`); the new view (200 expected). */
  async function put(client: ClientMetadata, changes: Record<string, unknown> = {}): Promise<ClientMetadata> {
    const { registration_access_token: token, registration_client_uri: uri, client_secret_expires_at: _e, client_id_issued_at: _i, ...metadata } = client as Record<string, unknown>;
    const res = await manage(uri as string, 'PUT', token as string, { ...metadata, ...changes });
    expect([res.status, res.body.error_description]).toEqual([200, undefined]);
    return { ...client, ...res.body };
  }

  it.each([
    ['of the same metadata', {}],
    ['that also renames the client', { client_name: 'renamed after the rotation' }],
  ])('keys replaced at jwks_uri and confirmed by a PUT %s: the next ID token is encrypted to the new key (C6: an update applies at once)', async (_name, changes) => {
    const old = await encryptionKey(ALG, { kid: 'rp-enc-old' });
    const fresh = await encryptionKey(ALG, { kid: 'rp-enc-new' });
    const { client, where } = await registerAt([old.jwk]);
    const first = await flow(client, [old], { skipUserinfo: true });
    expect(decodeProtectedHeader(rawIdToken(first.seen)).kid).toBe('rp-enc-old');
    // The old private key is compromised: the RP publishes only the new key and tells the provider (RFC 7592),
    // whose update fetches and vets the new set.
    sets.set(where, [fresh.jwk]);
    const fetchedBefore = hits.get(where) ?? 0;
    const updated = await put(client, changes);
    expect(hits.get(where)).toBe(fetchedBefore + 1);
    const next = await flow(updated, [old, fresh], { skipUserinfo: true });
    expect(next.result).not.toBeInstanceOf(Error);
    expect(decodeProtectedHeader(rawIdToken(next.seen)).kid).toBe('rp-enc-new');
  });

  it('attack: metadata changed by a PUT and back brings back the client as oidc-provider cached it, holding a set fetched over an hour ago: a failing jwks_uri never puts that set back in use', async () => {
    const [old, next] = [await encryptionKey(ALG, { kid: 'old' }), await encryptionKey(ALG, { kid: 'next' })];
    const { client, where } = await registerAt([old.jwk]);
    const named = await put(client, { client_name: 'first' });
    expect(decodeProtectedHeader(rawIdToken((await flow(named, [old], { skipUserinfo: true })).seen)).kid).toBe('old');
    // The RP replaces its key; an hour on, a sign-in under other metadata fetches the new set.
    sets.set(where, [next.jwk]);
    advanceClock(3601);
    const renamed = await put(named, { client_name: 'second' });
    expect(decodeProtectedHeader(rawIdToken((await flow(renamed, [next], { skipUserinfo: true })).seen)).kid).toBe('next');
    // The metadata as it was: oidc-provider finds the client it cached for it, its copy of the set fetched over an hour ago.
    const back = await put(renamed, { client_name: 'first' });
    failing.set(where, { status: 503, body: '{"error":"temporarily_unavailable"}' });
    for (let i = 0; i < 3; i += 1) {
      const { seen } = await flow(back, [old, next], { skipUserinfo: true });
      expect([seen.token?.status, JSON.parse(seen.token?.body ?? '{}')]).toEqual([400, { error: 'invalid_client_metadata', error_description: REFRESH_FAILED }]);
    }
    failing.delete(where);
    expect(decodeProtectedHeader(rawIdToken((await flow(back, [next], { skipUserinfo: true })).seen)).kid).toBe('next');
  });

  it('a jwks_uri failing just after a PUT that changed other metadata: the refresh failed, and nothing says the set holds no fitting key', async () => {
    const key = await encryptionKey(ALG, { kid: 'kept' });
    const { client, where } = await registerAt([key.jwk]);
    expect((await flow(client, [key], { skipUserinfo: true })).result).not.toBeInstanceOf(Error);
    const renamed = await put(client, { client_name: 'renamed' });
    failing.set(where, { status: 503, body: '{"error":"temporarily_unavailable"}' });
    const before = unfits().length;
    for (let i = 0; i < 2; i += 1) {
      const { seen } = await flow(renamed, [key], { skipUserinfo: true });
      expect([seen.token?.status, JSON.parse(seen.token?.body ?? '{}')]).toEqual([400, { error: 'invalid_client_metadata', error_description: REFRESH_FAILED }]);
    }
    expect(unfits().slice(before)).toEqual([]);
    failing.delete(where);
    expect(decodeProtectedHeader(rawIdToken((await flow(renamed, [key], { skipUserinfo: true })).seen)).kid).toBe('kept');
  });

  it('honest: a refused set, fixed at jwks_uri and vetted by a successful PUT, serves the next sign-in at once (the refusal is not remembered past it)', async () => {
    const good = await encryptionKey(ALG, { kid: 'rp-enc' });
    const { client, where } = await registerAt([good.jwk]);
    sets.set(where, [{ ...good.jwk, e: b64uint(1n) }]);
    const broken = await flow(client, [good], { skipUserinfo: true });
    expect(broken.seen.token?.status).toBe(400);
    sets.set(where, [good.jwk]);
    const updated = await put(client, { client_name: 'fixed keys' });
    const fixed = await flow(updated, [good], { skipUserinfo: true });
    expect(fixed.seen.token?.status).toBe(200);
    expect(fixed.result).not.toBeInstanceOf(Error);
  });
});

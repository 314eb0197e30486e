import { generateKeyPairSync } from 'node:crypto';

import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { JWK } from 'jose';

import { providerFetch } from '../../lib/net/provider-fetch.js';
import { ClientKeysRefusedError } from '../../lib/errors.js';
import { vettedJwksFetch } from '../../lib/provider/vetted-jwks-fetch.js';
import { b64uint } from '../helpers/hostile-keys.js';
import { capturingLogger } from '../helpers/logs.js';
import { startDocServer, type DocServer } from '../helpers/registration.js';

const good = { ...(generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' }) as JWK), use: 'enc', kid: 'good' };
const ec = { ...(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }) as JWK), use: 'enc', kid: 'ec' };
const weak = { ...(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' }) as JWK), use: 'enc', kid: 'weak' };

describe('vettedJwksFetch: every JWK Set oidc-provider fetches is judged (C6, issue 14 item 2)', () => {
  let docs: DocServer;
  const bodies = new Map<string, string>();
  const hits = new Map<string, number>();
  const logs = capturingLogger();
  let fetch: ReturnType<typeof vettedJwksFetch>;

  beforeAll(async () => {
    docs = await startDocServer();
    docs.handler = (req, res) => {
      hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
      res.setHeader('content-type', 'application/json');
      res.setHeader('cache-control', 'max-age=300');
      res.end(bodies.get(req.url ?? '') ?? '');
    };
    fetch = vettedJwksFetch(providerFetch({ allowPrivateNetwork: true }), logs.logger);
  });
  afterAll(async () => docs.close());
  afterEach(() => {
    jest.useRealTimers();
  });

  const serve = (path: string, body: unknown): string => {
    bodies.set(path, typeof body === 'string' ? body : JSON.stringify(body));
    return `${docs.url}${path}`;
  };

  it('passes a good set, and anything that is not a JWK Set, byte for byte with its caching headers', async () => {
    const before = logs.lines.length;
    for (const [path, body] of [
      ['/good', { keys: [good, ec], extra: 'kept' }],
      ['/sector', ['https://rp.example/cb']],
      ['/text', 'not json {'],
      ['/keys-not-array', { keys: 'x' }],
      ['/empty', { keys: [] }],
    ] as const) {
      const url = serve(path, body);
      const response = await fetch(url, { headers: { accept: 'application/json' } });
      expect([path, response.status, await response.text(), response.headers.get('cache-control')]).toEqual([path, 200, bodies.get(path), 'max-age=300']);
    }
    expect(logs.lines.slice(before)).toEqual([]);
  });

  it('removes refused keys, keeps the rest of the set, and logs one line without key material', async () => {
    const before = logs.lines.length;
    const hostile = { ...good, kid: 'e1', e: b64uint(1n) };
    const url = serve('/mixed', { keys: [hostile, good, weak, ec, 'junk'], extra: 'kept' });
    const response = await fetch(url);
    expect(response.headers.get('cache-control')).toBe('max-age=300');
    expect(await response.json()).toEqual({ keys: [good, ec], extra: 'kept' });
    expect(logs.lines.slice(before).map((l) => JSON.parse(l) as unknown)).toEqual([
      { e: 'client_keys_refused', host: new URL(url).host, refused: 3, kept: 2, rule: 'key #5 is not a JWK (needs a "kty")' },
    ]);
    expect(logs.lines.join('\n')).not.toContain(String(good.n).slice(0, 24));
    expect(logs.lines.join('\n')).not.toContain(String(weak.n).slice(0, 24));
  });

  it('fails the fetch when no key remains, naming the URL and the rules (at most three)', async () => {
    const url = serve('/none', { keys: [weak, { ...good, e: b64uint(3n) }, { ...good, d: 'AAAA' }, { ...ec, kty: 'oct', k: 'AAAA' }] });
    const err = await fetch(url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientKeysRefusedError);
    expect((err as Error).message).toBe(
      // The one judgement (issue 23) reports what a set holds that no key may (private, symmetric) first.
      `jwks_uri ${url}: no key passed the key rules (key #3 ("good") contains private key material; register public keys only; key #4 ("ec") is a symmetric key; only public RSA, EC and OKP keys are accepted; key #1 ("weak"): RSA modulus of 1024 bits, at least 2048 needed; and 1 more)`,
    );
  });

  it.each([
    ['two Cache-Control lines, the longer second', [['cache-control', 'public'], ['cache-control', 'max-age=31536000']], 3000],
    ['an upper-case directive', [['cache-control', 'MAX-AGE=31536000']], 3000],
    ['a quoted value', [['cache-control', 'max-age="31536000"']], 3000],
    ['a value past any number type', [['cache-control', `max-age=${'9'.repeat(400)}`]], 3000],
    ['s-maxage and stale-while-revalidate of a year beside a short max-age', [['cache-control', 'max-age=60, s-maxage=31536000, stale-while-revalidate=31536000']], 60],
    ['an Age header beside a long max-age', [['cache-control', 'max-age=31536000'], ['age', '31535990']], 3000],
    ['a Date header a year ahead beside an Expires two years ahead', [['date', new Date(Date.now() + 365 * 86400_000).toUTCString()], ['expires', new Date(Date.now() + 730 * 86400_000).toUTCString()]], 3000],
    ['honest: a max-age of ten minutes', [['cache-control', 'max-age=600']], 600],
  ] as [string, [string, string][], number][])('a good set served with %s is kept, as oidc-provider reads its headers, 50 minutes at most', async (_name, headers, seconds) => {
    const handler = docs.handler;
    docs.handler = (_req, res) => {
      res.setHeader('content-type', 'application/json');
      for (const name of new Set(headers.map(([n]) => n))) res.setHeader(name, headers.filter(([n]) => n === name).map(([, v]) => v));
      res.end(JSON.stringify({ keys: [good] }));
    };
    try {
      const response = await fetch(`${docs.url}/headers`);
      // oidc-provider's own reading (lib/models/client.js): the longest of 60 s, Expires, and the first max-age=digits.
      const control = response.headers.get('cache-control') ?? '';
      const expires = Date.parse(response.headers.get('expires') ?? '');
      const maxAge = /max-age=(\d+)/.exec(control)?.[1];
      const kept = Math.max(60, Number.isNaN(expires) ? 0 : Math.floor((expires - Date.now()) / 1000), maxAge === undefined ? 0 : parseInt(maxAge, 10));
      expect(kept).toBe(seconds);
    } finally {
      docs.handler = handler;
    }
  });

  it('refuses a set of more than 32 keys whole, unjudged, as registration does', async () => {
    const before = logs.lines.length;
    const url = serve('/many', { keys: Array.from({ length: 33 }, (_, i) => ({ ...good, kid: `k${i}` })) });
    const err = await fetch(url).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientKeysRefusedError);
    expect((err as Error).message).toBe(`jwks_uri ${url}: no key passed the key rules (a JWK Set may hold at most 32 keys; this one holds 33)`);
    expect(logs.lines.slice(before).map((l) => JSON.parse(l) as unknown)).toEqual([
      { e: 'client_keys_refused', host: new URL(url).host, refused: 33, kept: 0, rule: 'a JWK Set may hold at most 32 keys; this one holds 33' },
    ]);
    const ok = serve('/thirty-two', { keys: Array.from({ length: 32 }, (_, i) => ({ ...good, kid: `k${i}` })) });
    expect(((await (await fetch(ok)).json()) as { keys: unknown[] }).keys).toHaveLength(32);
  });

  it('remembers a refused set for 60 s: the same URL fails at once, unfetched and unjudged, then is fetched again', async () => {
    const url = serve('/remembered', { keys: [{ ...good, kid: 'e1', e: b64uint(1n) }] });
    const refused = `jwks_uri ${url}: no key passed the key rules (key #1 ("e1"): RSA public exponent 1 is below 65537)`;
    const beforeRefusal = Date.now();
    await expect(fetch(url)).rejects.toThrow(refused);
    expect(hits.get('/remembered')).toBe(1);
    const lines = logs.lines.length;
    serve('/remembered', { keys: [good] });
    for (let i = 0; i < 5; i += 1) await expect(fetch(url)).rejects.toThrow(refused);
    expect(hits.get('/remembered')).toBe(1);
    expect(logs.lines.length).toBe(lines);

    // Only Date moves: oidc-provider keeps an accepted set for 60 s at least, a refused one as long.
    const now = Date.now();
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'queueMicrotask', 'hrtime', 'performance'], advanceTimers: true });
    jest.setSystemTime(beforeRefusal + 59_000);
    await expect(fetch(url)).rejects.toThrow(refused);
    expect(hits.get('/remembered')).toBe(1);
    jest.setSystemTime(now + 61_000);
    expect(await (await fetch(url)).json()).toEqual({ keys: [good] });
    expect(hits.get('/remembered')).toBe(2);
  });

  it('refuses keys by their lengths (a 64 KiB exponent), and a set whose RSA keys weigh too much to judge, whole', async () => {
    const hugeE = serve('/huge-e', { keys: [{ ...good, kid: 'huge', e: Buffer.alloc(64 * 1024, 0xff).toString('base64url') }, ec] });
    expect(await (await fetch(hugeE)).json()).toEqual({ keys: [ec] });
    const heavy = serve('/heavy', { keys: Array.from({ length: 5 }, (_v, i) => ({ ...good, kid: `big${i}`, n: Buffer.alloc(512, 0xff).toString('base64url') })) });
    await expect(fetch(heavy)).rejects.toThrow(
      `jwks_uri ${heavy}: no key passed the key rules (the RSA keys of a JWK Set may weigh at most 40 together (a key of up to 2048 bits weighs 1, up to 3072 bits 3, up to 4096 bits 10, as judging it costs); these weigh 50)`,
    );
  });

  it('outside a client request, drops a key any offered encryption algorithm could pick and fail on (rule 7 for every algorithm)', async () => {
    const ed25519 = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as JWK;
    const x25519 = generateKeyPairSync('x25519').publicKey.export({ format: 'jwk' }) as JWK;
    // Labelled for encryption: unlabelled keys are dropped unjudged (C6 item 2), as at registration.
    const url = serve('/no-client', { keys: [{ ...ed25519, kid: 'ed', use: 'enc' }, { ...ed25519, kid: 'ed-sig', use: 'sig' }, { ...x25519, kid: 'x', use: 'enc' }] });
    expect(((await (await fetch(url)).json()) as { keys: JWK[] }).keys.map((k) => k.kid)).toEqual(['ed-sig', 'x']);
    expect(JSON.parse(logs.lines.at(-1) ?? '{}')).toMatchObject({
      refused: 1,
      kept: 2,
      rule: 'key #1 ("ed"): an Ed25519 key can only sign, but it is marked for encryption',
    });
  });

  it('bounds what an attacker-chosen kid and member put into messages and logs', async () => {
    const longKid = 'k'.repeat(10_000);
    const url = serve('/long', { keys: [{ ...good, kid: longKid, key_ops: ['x'.repeat(10_000)] }] });
    const err = (await fetch(url).catch((e: unknown) => e)) as Error;
    expect(err.message.length).toBeLessThan(600);
    expect(logs.lines.every((l) => l.length < 1000)).toBe(true);
  });
});

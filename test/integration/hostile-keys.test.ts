import { execFile, execFileSync } from 'node:child_process';
import { createPublicKey, randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';

import { createStore, issueInitialAccessToken, loadSettings } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { hostileCases, keyMaterial, type HostileCase } from '../helpers/hostile-keys.js';
import { isUnspent, manage, register, startDocServer, type DocServer } from '../helpers/registration.js';
import { RFC7517_PUBLIC_KEYS } from '../helpers/rfc7517-keys.js';

const R = ['https://rp.example/cb'];
const material = keyMaterial();
const CASES = hostileCases(material);
const FIELDS = ['jwks', 'jwks_uri'] as const;

/** A self-signed certificate (Debian's openssl) for a fresh RSA key made with `keyOptions`. */
function selfSigned(keyOptions: string[]): { jwk: JWK; pem: string; der: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-weak-cert-'));
  const run = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  };
  try {
    run('genpkey', '-algorithm', 'RSA', ...keyOptions.flatMap((o) => ['-pkeyopt', o]), '-out', 'weak.key');
    run('req', '-x509', '-new', '-key', 'weak.key', '-subj', '/CN=weak relying party', '-days', '1', '-out', 'weak.pem');
    const pem = readFileSync(join(dir, 'weak.pem'), 'utf8');
    const jwk = { ...(createPublicKey(readFileSync(join(dir, 'weak.key'), 'utf8')).export({ format: 'jwk' }) as JWK), use: 'enc', kid: 'weak-cert' };
    return { jwk, pem, der: new X509Certificate(pem).raw.toString('base64') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A leaf certificate for a fresh RSA key, issued by a CA whose key has a 66-bit public exponent (openssl).
 * Asynchronous: key generation blocking the event loop past the app's keep-alive timeout (a busy machine) sent
 * the next request on a socket the server was closing (ECONNRESET).
 */
async function chainWithHugeIssuerExponent(): Promise<{ jwk: JWK; x5c: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-issuer-e-'));
  const run = async (...args: string[]): Promise<void> => {
    await promisify(execFile)('openssl', args, { cwd: dir });
  };
  try {
    await run('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-pkeyopt', `rsa_keygen_pubexp:${(1n << 65n) + 1n}`, '-out', 'ca.key');
    await run('req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=issuer with a long exponent', '-days', '1', '-out', 'ca.pem');
    await run('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', 'leaf.key');
    await run('req', '-new', '-key', 'leaf.key', '-subj', '/CN=relying party', '-out', 'leaf.csr');
    await run('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-out', 'leaf.pem');
    const der = (file: string): string => new X509Certificate(readFileSync(join(dir, file), 'utf8')).raw.toString('base64');
    const jwk = { ...(createPublicKey(readFileSync(join(dir, 'leaf.key'), 'utf8')).export({ format: 'jwk' }) as JWK), use: 'enc', kid: 'chained' };
    return { jwk, x5c: [der('leaf.pem'), der('ca.pem')] };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const json = (res: ServerResponse, body: unknown): void => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
};

describe('the hostile key corpus', () => {
  it('covers every attack of issue 14 item 1', () => {
    const names = CASES.map((c) => c.name).join('\n');
    for (const attack of [
      'e = 1', 'e = 3', 'even exponent', 'padded with zero bytes', 'plain 1024-bit', 'P-256 point off', 'P-384 point off', 'P-521 point off', 'X25519 x of 31',
      'use "sig" with key_ops ["encrypt"]', 'private member', 'weak key before a good one', 'weak key after a good one',
      // Issue 14 follow-up (F1, F2, F3, F7).
      'prime modulus', 'square of a prime', 'divisible by 262139', 'exponent of 65 bits', '32 KiB exponent', '"AAEAAQ"', 'one leading zero byte',
    ]) {
      expect(names).toContain(attack);
    }
  });
});

describe('hostile client keys (C6 items 6-7)', () => {
  let running: RunningApp;
  let store: CountingStore;
  let token: string;
  let docs: DocServer;
  const routes = new Map<string, (res: ServerResponse) => void>();
  /** Paths the doc server was asked for. */
  const requested: string[] = [];
  const weak1024 = selfSigned(['rsa_keygen_bits:1024']);
  const weakE3 = selfSigned(['rsa_keygen_bits:2048', 'rsa_keygen_pubexp:3']);
  const goodCert = selfSigned(['rsa_keygen_bits:2048']);
  const certified = { ...goodCert, jwk: { ...goodCert.jwk, kid: 'good-cert' } };

  beforeAll(async () => {
    docs = await startDocServer();
    docs.handler = (req, res) => {
      requested.push(req.url ?? '');
      (routes.get(req.url ?? '') ?? ((s) => { s.statusCode = 404; s.end(); }))(res);
    };
    CASES.forEach((c, i) => routes.set(`/jwks/${i}`, (res) => json(res, { keys: c.keys })));
    routes.set('/weak-1024.pem', (res) => res.end(weak1024.pem));
    routes.set('/weak-e3.pem', (res) => res.end(weakE3.pem));
    const props = { 'svc.fetch.allow-private-network': true };
    store = countingStore(createStore(loadSettings({ env: {}, properties: props }).redis));
    running = await startApp({ store, properties: props });
    token = (await issueInitialAccessToken(running.app.svc.provider)).token;
  }, 30_000);

  afterAll(async () => {
    await docs.close();
    await running.close();
  });

  const body = (c: HostileCase, field: (typeof FIELDS)[number]): Record<string, unknown> => ({
    redirect_uris: R,
    userinfo_encrypted_response_alg: c.alg,
    id_token_encrypted_response_alg: c.alg,
    ...(field === 'jwks' ? { jwks: { keys: c.keys } } : { jwks_uri: `${docs.url}/jwks/${CASES.indexOf(c)}` }),
  });

  /**
   * Registers `payload` with the shared token and expects the exact rejection, with nothing stored
   * and the token left unspent in the store (so no test depends on running before another).
   */
  async function expectRejected(payload: unknown, description: string, presented = token): Promise<void> {
    const before = { clients: store.writes('Client'), rats: store.writes('RegistrationAccessToken') };
    const res = await register(running, payload, presented);
    expect({ status: res.status, error: res.body.error, description: res.body.error_description }).toEqual({
      status: 400,
      error: 'invalid_client_metadata',
      description,
    });
    expect({ clients: store.writes('Client'), rats: store.writes('RegistrationAccessToken') }).toEqual(before);
    expect(await isUnspent(running, presented)).toBe(true);
  }

  it.each(CASES.flatMap((c) => FIELDS.map((field) => [c.name, field, c] as const)))('rejects %s in %s', async (_name, field, c) => {
    await expectRejected(body(c, field), `${field}: ${c.message}`);
  });

  it.each([
    ['"__proto__" holding a private d', '{"__proto__":{"d":"AAAA"}}', '__proto__'],
    ['"__proto__" holding use "enc" and a kid', '{"__proto__":{"use":"enc","kid":"lent"}}', '__proto__'],
    ['"prototype"', '{"prototype":{"d":"AAAA"}}', 'prototype'],
  ])('attack: a key with a member named %s is refused at jwks_uri (inline in jwks a "__proto__" is refused with the body); honest: a kid "__proto__" registers', async (_name, member, name) => {
    const { use: _use, ...unlabelled } = material.rsa.jwk;
    const key = { ...(name === 'prototype' ? material.rsa.jwk : unlabelled), kid: 'weak', ...(JSON.parse(member) as object) };
    routes.set('/named', (res) => json(res, { keys: [key] }));
    const rule = `key #1 ("weak"): a member named "${name}" is not allowed (it is no JWK parameter)`;
    // Tokens of its own: the shared one stays unspent whatever this case comes to.
    const own = async (): Promise<string> => (await issueInitialAccessToken(running.app.svc.provider)).token;
    await expectRejected({ redirect_uris: R, jwks_uri: `${docs.url}/named` }, `jwks_uri: ${rule}`, await own());
    if (name === 'prototype') await expectRejected({ redirect_uris: R, jwks: { keys: [key] } }, `jwks: ${rule}`, await own());
    const honest = { ...material.rsa.jwk, kid: '__proto__' };
    routes.set('/honest-kid', (res) => json(res, { keys: [honest] }));
    for (const where of [{ jwks: { keys: [honest] } }, { jwks_uri: `${docs.url}/honest-kid` }]) {
      const res = await register(running, { redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', ...where }, await own());
      expect([res.status, res.body.error_description]).toEqual([201, undefined]);
    }
  });

  it.each(FIELDS)("honest: RFC 7517's example public keys (Appendix A.1) register by %s as written; attack: respelled (a leading zero byte before n, or before y), they are refused naming the key and the rule (RFC 7518: the fewest octets, a coordinate at its curve's size)", async (field) => {
    const zeroed = (member: unknown): string => Buffer.concat([Buffer.alloc(1), Buffer.from(String(member), 'base64url')]).toString('base64url');
    const [ec, rsa] = RFC7517_PUBLIC_KEYS;
    const where = (keys: JWK[]): Record<string, unknown> => {
      routes.set('/rfc7517', (res) => json(res, { keys }));
      return { redirect_uris: R, ...(field === 'jwks' ? { jwks: { keys } } : { jwks_uri: `${docs.url}/rfc7517` }) };
    };
    const res = await register(running, where(RFC7517_PUBLIC_KEYS), (await issueInitialAccessToken(running.app.svc.provider)).token);
    expect([res.status, field === 'jwks' ? res.body.jwks : res.body.jwks_uri]).toEqual([201, field === 'jwks' ? { keys: RFC7517_PUBLIC_KEYS } : `${docs.url}/rfc7517`]);
    await expectRejected(where([ec, { ...rsa, n: zeroed(rsa.n) }]), `${field}: key #2 ("2011-04-29"): n carries 1 leading zero byte; RFC 7518 requires the fewest octets`);
    await expectRejected(where([{ ...ec, y: zeroed(ec.y) }, rsa]), `${field}: key #1 ("1"): y is 33 bytes, but a P-256 coordinate is exactly 32`);
  });

  it.each([
    ['a 1024-bit RSA key', 'weak-1024', weak1024, 'RSA modulus of 1024 bits, at least 2048 needed'],
    ['an e = 3 RSA key', 'weak-e3', weakE3, 'RSA public exponent 3 is below 65537'],
  ] as const)('rejects an x5c / x5u certificate of %s', async (_name, file, cert, rule) => {
    const payload = (key: JWK): Record<string, unknown> => ({ redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [material.rsa.jwk, key] } });
    await expectRejected(payload({ ...cert.jwk, x5c: [cert.der] }), `jwks: key #2 ("weak-cert"): ${rule}`);
    await expectRejected(payload({ ...cert.jwk, x5u: `${docs.url}/${file}.pem` }), `jwks: key #2 ("weak-cert"): ${rule}`);
    expect(requested).not.toContain(`/${file}.pem`); // judged before any certificate is fetched
  });

  it.each(FIELDS)('refuses a %s set of 33 keys before judging any (each judgement imports a key)', async (field) => {
    const keys = Array.from({ length: 33 }, (_v, i) => ({ ...material.ec['P-521'].jwk, kid: `k${i}` }));
    routes.set('/many', (res) => json(res, { keys }));
    const where = field === 'jwks' ? { jwks: { keys } } : { jwks_uri: `${docs.url}/many` };
    await expectRejected({ redirect_uris: R, userinfo_encrypted_response_alg: 'ECDH-ES', ...where }, `${field}: a JWK Set may hold at most 32 keys; this one holds 33`);
  });

  it('refuses a jwks_uri document whose key has a 300 KB exponent by its length, and the token still works', async () => {
    const e = randomBytes(300 * 1024);
    e[0] = 0x80;
    routes.set('/huge-e', (res) => json(res, { keys: [{ ...material.rsa.jwk, kid: 'huge-e', e: e.toString('base64url') }] }));
    const payload = { redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: `${docs.url}/huge-e` };
    await expectRejected(payload, 'jwks_uri: key #1 ("huge-e"): RSA public exponent is longer than 64 bits');
    await expectRejected(payload, 'jwks_uri: key #1 ("huge-e"): RSA public exponent is longer than 64 bits');
  });

  it.each(FIELDS)('refuses a %s set whose RSA keys are too costly to judge together, before judging any (five of 4096 bits)', async (field) => {
    // Weighed by the length of n alone: these moduli are random and never judged.
    const keys = Array.from({ length: 5 }, (_v, i) => ({ kty: 'RSA', use: 'enc', kid: `big${i}`, n: Buffer.concat([Buffer.from([0x80]), randomBytes(511)]).toString('base64url'), e: 'AQAB' }));
    routes.set('/heavy', (res) => json(res, { keys }));
    const where = field === 'jwks' ? { jwks: { keys } } : { jwks_uri: `${docs.url}/heavy` };
    await expectRejected(
      { redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', ...where },
      `${field}: the RSA keys of a JWK Set may weigh at most 40 together (a key of up to 2048 bits weighs 1, up to 3072 bits 3, up to 4096 bits 10, as judging it costs); these weigh 50`,
    );
  });

  describe('certificate chains cost what one key costs', () => {
    const payload = (key: JWK): Record<string, unknown> => ({ redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [key] } });

    it('refuses an issuer whose key has a 66-bit exponent before verifying anything with it', async () => {
      const chain = await chainWithHugeIssuerExponent();
      await expectRejected(payload({ ...chain.jwk, x5c: chain.x5c }), 'jwks: key #1 ("chained"): x5c certificate #2\'s public key: RSA public exponent is longer than 64 bits');
    });

    it('refuses an x5c of 9 certificates, and an x5u of 9, before parsing them', async () => {
      await expectRejected(payload({ ...certified.jwk, x5c: Array.from({ length: 9 }, () => certified.der) }), 'jwks: key #1 ("good-cert"): x5c holds 9 certificates, at most 8');
      routes.set('/nine.pem', (res) => res.end(Array.from({ length: 9 }, () => certified.pem).join('\n')));
      await expectRejected(payload({ ...certified.jwk, x5u: `${docs.url}/nine.pem` }), `jwks: key #1 ("good-cert"): x5u ${docs.url}/nine.pem holds more than 8 certificates`);
    });

    it('reads an x5u of 18,000 BEGIN lines without an END in one pass (a lazy regular expression took seconds)', async () => {
      routes.set('/begins.pem', (res) => res.end('-----BEGIN CERTIFICATE-----\n'.repeat(18_000)));
      await expectRejected(payload({ ...certified.jwk, x5u: `${docs.url}/begins.pem` }), `jwks: x5u ${docs.url}/begins.pem holds no PEM certificate`);
    });
  });

  it('drops a weak key with neither use nor key_ops from a jwks_uri document as from an inline jwks (one judgement): the provider never sees it', async () => {
    const { use: _use, ...unlabelled } = material.rsa1024.jwk;
    routes.set('/unlabelled', (res) => json(res, { keys: [material.rsa.jwk, unlabelled] }));
    const body = { redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks_uri: `${docs.url}/unlabelled` };
    const res = await register(running, body, (await issueInitialAccessToken(running.app.svc.provider)).token);
    expect([res.status, res.body.jwks_uri]).toEqual([201, body.jwks_uri]);
    // Alone, it leaves no key: refused as no key usable, naming why it was dropped.
    routes.set('/unlabelled-only', (res) => json(res, { keys: [unlabelled] }));
    await expectRejected(
      { ...body, jwks_uri: `${docs.url}/unlabelled-only` },
      'jwks_uri: no key usable for userinfo_encrypted_response_alg RSA-OAEP-256 (keys need use=enc or key_ops containing encrypt); key #1 ("weak"): has neither use nor key_ops, so it is dropped',
    );
  });

  it('refuses an update that brings a weak key, keeping the stored keys and the registration access token', async () => {
    const created = await register(running, { redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [material.rsa.jwk] } }, (await issueInitialAccessToken(running.app.svc.provider)).token);
    expect(created.status).toBe(201);
    const uri = created.body.registration_client_uri as string;
    const rat = created.body.registration_access_token as string;
    const before = store.writes('Client');
    const update = await manage(uri, 'PUT', rat, {
      client_id: created.body.client_id,
      redirect_uris: R,
      userinfo_encrypted_response_alg: 'RSA-OAEP-256',
      jwks: { keys: [material.rsa.jwk, { ...material.rsa.jwk, kid: 'weak', e: 'AQ' }] },
    });
    expect({ status: update.status, error: update.body.error, description: update.body.error_description }).toEqual({
      status: 400,
      error: 'invalid_client_metadata',
      description: 'jwks: key #2 ("weak"): RSA public exponent 1 is below 65537',
    });
    expect(store.writes('Client')).toBe(before);
    const read = await manage(uri, 'GET', rat);
    expect(read.status).toBe(200);
    expect((read.body.jwks as { keys: JWK[] }).keys.map((k) => k.kid)).toEqual(['good']);
  });

  it('leaves the initial access token usable after a rejection: it then registers a set of 32 good keys', async () => {
    // Every rejection above checks that the shared token stays unspent; this one spends its own.
    const own = (await issueInitialAccessToken(running.app.svc.provider)).token;
    const first = CASES[0] as HostileCase;
    await expectRejected(body(first, 'jwks'), `jwks: ${first.message}`, own);
    const keys = [material.rsa.jwk, material.rsaSig.jwk, ...Array.from({ length: 30 }, (_v, i) => ({ ...material.ec['P-521'].jwk, kid: `k${i}` }))];
    const res = await register(running, { redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys } }, own);
    expect(res.status).toBe(201);
    expect((res.body.jwks as { keys: JWK[] }).keys.map((k) => k.kid)).toEqual(keys.map((k) => k.kid));
  });
});

describe('unlabelled keys of an inline jwks (C6 item 2)', () => {
  const running = appPerSuite();

  it('are still dropped, not judged, when encryption is asked for: they are never stored or used', async () => {
    const { use: _use, ...unlabelled } = material.rsa1024.jwk;
    const res = await register(
      running,
      { redirect_uris: R, userinfo_encrypted_response_alg: 'RSA-OAEP-256', jwks: { keys: [unlabelled, material.rsa.jwk] } },
      (await issueInitialAccessToken(running.app.svc.provider)).token,
    );
    expect(res.status).toBe(201);
    expect((res.body.jwks as { keys: JWK[] }).keys.map((k) => k.kid)).toEqual(['good']);
  });

  it('are judged when no encryption is asked for, because they are stored', async () => {
    const { use: _use, ...unlabelled } = material.rsa1024.jwk;
    const res = await register(running, { redirect_uris: R, jwks: { keys: [unlabelled] } }, (await issueInitialAccessToken(running.app.svc.provider)).token);
    expect({ status: res.status, error: res.body.error, description: res.body.error_description }).toEqual({
      status: 400,
      error: 'invalid_client_metadata',
      description: 'jwks: key #1 ("weak"): RSA modulus of 1024 bits, at least 2048 needed',
    });
  });
});

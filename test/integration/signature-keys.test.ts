import type { ServerResponse } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';

import { createStore, issueInitialAccessToken, loadSettings } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { countingStore, type CountingStore } from '../helpers/counting-store.js';
import { flipY, keyMaterial } from '../helpers/hostile-keys.js';
import { isUnspent, manage, register, startDocServer, type DocServer } from '../helpers/registration.js';

const R = ['https://rp.example/cb'];
const m = keyMaterial();
/** A good RSA signature key (use sig), a good P-256 one, and variants cut from them. */
const rsaSig = m.rsaSig.jwk;
const ecSig: JWK = { ...m.ec['P-256'].jwk, use: 'sig', kid: 'ec-sig' };
const { use: _use, ...rsaUnlabelled } = { ...rsaSig, kid: 'unlabelled' };
const NEED = '(keys need use=sig or key_ops containing verify)';
const NOT_SIG = 'not a signature key (needs use=sig or key_ops containing verify)';
const PKJ = 'token_endpoint_auth_method private_key_jwt (RS256, PS256, ES256)';

/** One registration body that must be refused, and the exact description. */
interface SignatureCase {
  name: string;
  body: Record<string, unknown>;
  description: string;
}

const ros = (alg: string, keys: JWK[]): Record<string, unknown> => ({ redirect_uris: R, request_object_signing_alg: alg, jwks: { keys } });
const pkj = (keys: JWK[], extra: Record<string, unknown> = {}): Record<string, unknown> => ({ redirect_uris: R, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys }, ...extra });

const CASES: SignatureCase[] = [
  // No keys at all
  { name: 'request_object_signing_alg without keys', body: { redirect_uris: R, request_object_signing_alg: 'PS256' }, description: "jwks: request_object_signing_alg PS256 needs the client's public signature keys: register jwks or jwks_uri" },
  { name: 'private_key_jwt without keys', body: { redirect_uris: R, token_endpoint_auth_method: 'private_key_jwt' }, description: `jwks: ${PKJ} needs the client's public signature keys: register jwks or jwks_uri` },
  {
    name: 'both without keys',
    body: { redirect_uris: R, token_endpoint_auth_method: 'private_key_jwt', request_object_signing_alg: 'ES256' },
    description: `jwks: request_object_signing_alg ES256 and ${PKJ} need the client's public signature keys: register jwks or jwks_uri`,
  },
  // Keys that are not signature keys
  { name: 'only an encryption key', body: ros('PS256', [m.rsa.jwk]), description: `jwks: no key usable for request_object_signing_alg PS256 ${NEED}; key #1 ("good"): ${NOT_SIG}` },
  { name: 'only an unlabelled key', body: pkj([rsaUnlabelled]), description: `jwks: no key usable for ${PKJ} ${NEED}; key #1 ("unlabelled"): ${NOT_SIG}` },
  { name: 'an empty set', body: ros('RS256', []), description: `jwks: no key usable for request_object_signing_alg RS256 ${NEED}; the set is empty` },
  // Signature keys that do not fit the algorithm
  { name: 'an EC P-256 key for PS256', body: ros('PS256', [ecSig]), description: `jwks: no key usable for request_object_signing_alg PS256 ${NEED}; key #1 ("ec-sig"): EC P-256 key, but PS256 needs RSA` },
  { name: 'an RSA key for ES256', body: ros('ES256', [rsaSig]), description: `jwks: no key usable for request_object_signing_alg ES256 ${NEED}; key #1 ("good-sig"): RSA key, but ES256 needs EC P-256` },
  {
    name: 'an EC P-384 key for ES256',
    body: ros('ES256', [{ ...m.ec['P-384'].jwk, use: 'sig', kid: 'p384' }]),
    description: `jwks: no key usable for request_object_signing_alg ES256 ${NEED}; key #1 ("p384"): EC P-384 key, but ES256 needs EC P-256`,
  },
  {
    name: 'an RSA key whose own alg is RS256 for PS256',
    body: ros('PS256', [{ ...rsaSig, alg: 'RS256' }]),
    description: `jwks: no key usable for request_object_signing_alg PS256 ${NEED}; key #1 ("good-sig"): its alg is RS256`,
  },
  {
    name: 'an RSA key whose key_ops lack verify',
    body: ros('RS256', [{ ...rsaSig, key_ops: ['sign'] }]),
    description: `jwks: no key usable for request_object_signing_alg RS256 ${NEED}; key #1 ("good-sig"): key_ops ["sign"] lack "verify"`,
  },
  {
    name: 'an Ed25519 key for private_key_jwt (EdDSA is not offered)',
    body: pkj([m.ed25519.jwk]),
    description: `jwks: no key usable for ${PKJ} ${NEED}; key #1 ("good-ed25519"): RS256: OKP Ed25519 key, but RS256 needs RSA, PS256: OKP Ed25519 key, but PS256 needs RSA, ES256: OKP Ed25519 key, but ES256 needs EC P-256`,
  },
  {
    name: 'an RSA key for private_key_jwt with token_endpoint_auth_signing_alg ES256',
    body: pkj([rsaSig], { token_endpoint_auth_signing_alg: 'ES256' }),
    description: `jwks: no key usable for token_endpoint_auth_method private_key_jwt with token_endpoint_auth_signing_alg ES256 ${NEED}; key #1 ("good-sig"): RSA key, but ES256 needs EC P-256`,
  },
  {
    name: 'a good key for one need but not the other',
    body: { ...pkj([ecSig]), request_object_signing_alg: 'PS256' },
    description: `jwks: no key usable for request_object_signing_alg PS256 ${NEED}; key #1 ("ec-sig"): EC P-256 key, but PS256 needs RSA`,
  },
  // Weak signature keys: judged as keys before anything else
  { name: 'a 1024-bit RSA signature key', body: ros('RS256', [{ ...m.rsa1024.jwk, use: 'sig' }]), description: 'jwks: key #1 ("weak"): RSA modulus of 1024 bits, at least 2048 needed' },
  { name: 'an e = 3 RSA signature key', body: pkj([{ ...m.rsaE3.jwk, use: 'sig' }]), description: 'jwks: key #1 ("weak"): RSA public exponent 3 is below 65537' },
  { name: 'a P-256 signature key off the curve', body: ros('ES256', [flipY(ecSig)]), description: 'jwks: key #1 ("ec-sig"): its point (x, y) is not on the P-256 curve' },
  { name: 'a weak signature key beside a good one', body: ros('PS256', [rsaSig, { ...m.rsa1024.jwk, use: 'sig' }]), description: 'jwks: key #2 ("weak"): RSA modulus of 1024 bits, at least 2048 needed' },
  // Algorithms
  { name: 'request_object_signing_alg EdDSA', body: ros('EdDSA', [m.ed25519.jwk]), description: 'request_object_signing_alg: EdDSA is not an RFC 7518 algorithm' },
  { name: 'request_object_signing_alg none', body: ros('none', [rsaSig]), description: 'request_object_signing_alg: none is never supported' },
  { name: 'request_object_signing_alg HS256', body: ros('HS256', [rsaSig]), description: 'request_object_signing_alg: symmetric algorithm HS256 is not supported' },
];

const ACCEPTED: [string, Record<string, unknown>][] = [
  ['PS256 with an RSA use=sig key', ros('PS256', [rsaSig])],
  ['ES256 with a P-256 key labelled only key_ops ["verify"]', ros('ES256', [{ ...m.ec['P-256'].jwk, use: undefined, key_ops: ['verify'], kid: 'ops' }])],
  ['private_key_jwt with a P-256 signature key (any offered alg)', pkj([ecSig])],
  ['private_key_jwt ES256 and request objects PS256 with one key each', { ...pkj([rsaSig, ecSig], { token_endpoint_auth_signing_alg: 'ES256' }), request_object_signing_alg: 'PS256' }],
  ['a signature key beside an encryption key, encryption asked for', { ...ros('RS256', [m.rsa.jwk, rsaSig]), id_token_encrypted_response_alg: 'RSA-OAEP-256' }],
];

describe('signature keys for request objects and private_key_jwt (C6, issue 17)', () => {
  let running: RunningApp;
  let store: CountingStore;
  let token: string;
  let docs: DocServer;
  const served = new Map<string, unknown>();

  beforeAll(async () => {
    docs = await startDocServer();
    docs.handler = (req, res: ServerResponse) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(served.get(req.url ?? '') ?? { keys: [] }));
    };
    const props = { 'svc.fetch.allow-private-network': 'true' };
    store = countingStore(createStore(loadSettings({ env: {}, properties: props }).redis));
    running = await startApp({ store, properties: props });
    token = (await issueInitialAccessToken(running.app.svc.provider)).token;
  });
  afterAll(async () => {
    await running.close();
    await docs.close();
  });

  const expectRejected = async (body: unknown, description: string): Promise<void> => {
    const before = store.writes('Client');
    const res = await register(running, body, token);
    expect({ status: res.status, error: res.body.error, description: res.body.error_description }).toEqual({ status: 400, error: 'invalid_client_metadata', description });
    expect(store.writes('Client')).toBe(before);
    // The shared token is left unspent (checked in the store, so no test depends on another).
    expect(await isUnspent(running, token)).toBe(true);
  };

  it.each(CASES.map((c) => [c.name, c] as const))('refuses %s', async (_name, c) => {
    await expectRejected(c.body, c.description);
  });

  it('judges a jwks_uri document the same way, naming jwks_uri', async () => {
    served.set('/enc-only', { keys: [m.rsa.jwk] });
    await expectRejected(
      { redirect_uris: R, request_object_signing_alg: 'PS256', jwks_uri: `${docs.url}/enc-only` },
      `jwks_uri: no key usable for request_object_signing_alg PS256 ${NEED}; key #1 ("good"): ${NOT_SIG}`,
    );
    served.set('/sig', { keys: [rsaSig] });
    const ok = await register(running, { redirect_uris: R, request_object_signing_alg: 'PS256', jwks_uri: `${docs.url}/sig` }, (await issueInitialAccessToken(running.app.svc.provider)).token);
    expect(ok.status).toBe(201);
  });

  it('refuses an update that drops the last usable signature key, keeping the stored client', async () => {
    const created = await register(running, pkj([rsaSig]), (await issueInitialAccessToken(running.app.svc.provider)).token);
    expect(created.status).toBe(201);
    const uri = created.body.registration_client_uri as string;
    const rat = created.body.registration_access_token as string;
    const before = store.writes('Client');
    const update = await manage(uri, 'PUT', rat, { client_id: created.body.client_id, ...pkj([m.rsa.jwk]) });
    expect({ status: update.status, error: update.body.error, description: update.body.error_description }).toEqual({
      status: 400,
      error: 'invalid_client_metadata',
      description: `jwks: no key usable for ${PKJ} ${NEED}; key #1 ("good"): ${NOT_SIG}`,
    });
    expect(store.writes('Client')).toBe(before);
    const read = await manage(uri, 'GET', rat);
    expect((read.body.jwks as { keys: JWK[] }).keys.map((k) => k.kid)).toEqual(['good-sig']);
  });

  it.each(ACCEPTED)('registers %s', async (_name, body) => {
    const res = await register(running, JSON.parse(JSON.stringify(body)), (await issueInitialAccessToken(running.app.svc.provider)).token);
    expect({ status: res.status, error: res.body.error_description }).toEqual({ status: 201, error: undefined });
  });

  it('leaves an initial access token usable after a rejection: it then registers a client', async () => {
    const own = (await issueInitialAccessToken(running.app.svc.provider)).token;
    expect((await register(running, ros('PS256', [m.rsa.jwk]), own)).status).toBe(400);
    expect((await register(running, ros('PS256', [rsaSig]), own)).status).toBe(201);
  });
});

describe('the signature key rules are listed with the policies', () => {
  it('registers svc/signature-keys after svc/key-vetting', async () => {
    const { POLICY_NAMES } = await import('../../policies/index.js');
    expect(POLICY_NAMES).toEqual(['svc/redirect-uris', 'svc/served-metadata', 'svc/algorithms', 'svc/privacy-metadata', 'svc/certificates', 'svc/key-vetting', 'svc/signature-keys', 'svc/subject-type']);
  });
});

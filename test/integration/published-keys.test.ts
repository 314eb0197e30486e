import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from '@jest/globals';
import { CompactEncrypt, createRemoteJWKSet, importJWK, jwtVerify, type JWK } from 'jose';
import * as oidc from 'openid-client';

import { generateProviderKeys } from '../../lib/index.js';
import { rotateKeysFile } from '../../lib/provider/key-rotation.js';
import type { StatefulJwk } from '../../lib/provider/key-states.js';
import { generatePrivateJwk } from '../../lib/provider/keys.js';
import { authorizationUrl, pkcePair, runCodeFlow } from '../helpers/flow.js';
import { outcomeOf, registerSigningClient, signRequestObject, type SigningClient } from '../helpers/request-objects.js';
import { appPerSuite } from '../helpers/suite-app.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { capturingLogger } from '../helpers/logs.js';

/*
 * A decryption key that is not current is held to decrypt but not published (docs/operations/key-rotation.md), however
 * the keys file marks it for encryption: by `use`, by an encryption `alg`, or by `key_ops` without `sign`. A key that
 * both signs and decrypts (no `use`, `alg` or `key_ops`) is published while not current for verifying only.
 */
const jwksOf = async (running: RunningApp, path = '/jwks'): Promise<JWK[]> => ((await (await fetch(`${running.issuer}${path}`)).json()) as { keys: JWK[] }).keys;
const PRIVATE_AND_LABELS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'key_ops', 'alg', 'use'];
const publicOf = (key: JWK): JWK => Object.fromEntries(Object.entries(key).filter(([m]) => !PRIVATE_AND_LABELS.includes(m) && !m.startsWith('svc_')));

/** Where an authorization request ends whose signed request object is encrypted to `key` (RSA-OAEP-256): `interaction`, or its error. */
async function sealedTo(running: RunningApp, client: SigningClient, key: JWK): Promise<string> {
  const alg = 'RSA-OAEP-256';
  const jws = await signRequestObject(client, running.issuer, { response_type: 'code', redirect_uri: 'https://rp.example/cb', scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'st' });
  const jwe = await new CompactEncrypt(new TextEncoder().encode(jws)).setProtectedHeader({ alg, enc: 'A256GCM', cty: 'JWT', kid: String(key.kid) }).encrypt(await importJWK(publicOf(key), alg));
  const outcome = await outcomeOf(authorizationUrl(running.issuer, { client_id: client.metadata.client_id, request: jwe }));
  return outcome.interaction ? 'interaction' : String(outcome.error);
}

describe('the JWKS during a rotation, whatever labels the keys file gives its decryption keys', () => {
  const labelled: Record<string, StatefulJwk> = {};
  const running = appPerSuite(async () => {
    const base = await generateProviderKeys();
    const rsa = (): Promise<JWK> => generatePrivateJwk('RSA-OAEP-256', { modulusLength: 2048 });
    Object.assign(labelled, {
      nextByAlg: { ...(await rsa()), alg: 'RSA-OAEP-256', svc_state: 'next' },
      retiringByOps: { ...(await rsa()), key_ops: ['decrypt', 'unwrapKey'], svc_state: 'retiring' },
      nextByUse: { ...(await rsa()), use: 'enc', svc_state: 'next' },
      nextUnlabelled: { ...(await rsa()), svc_state: 'next' },
      retiringSigning: { ...(await generatePrivateJwk('RS256', { modulusLength: 2048 }, 'sig')), svc_state: 'retiring' },
      nextSigningByAlg: { ...(await generatePrivateJwk('ES256', { crv: 'P-256' })), alg: 'ES256', svc_state: 'next' },
      currentByAlg: { ...(await rsa()), alg: 'RSA-OAEP' },
      currentUnlabelled: await generatePrivateJwk('ECDH-ES', { crv: 'P-256' }),
    });
    return { jwks: { keys: [...base.keys, ...Object.values(labelled)] as JWK[] } };
  });
  const listed = (keys: JWK[]): Record<string, string | null> =>
    Object.fromEntries(Object.entries(labelled).map(([name, key]) => [name, keys.some((k) => k.kid === key.kid) ? String(keys.find((k) => k.kid === key.kid)?.use ?? 'no use') : null]));

  it('attack: a next or retiring decryption key marked by alg or by key_ops (oidc-provider lists the first as use "enc") is not listed; one that also signs is listed for signing only', async () => {
    const served = listed(await jwksOf(running));
    expect([served.nextByAlg, served.retiringByOps, served.nextByUse, served.nextUnlabelled]).toEqual([null, null, null, 'sig']);
  });

  it('honest: signing keys in every state and current decryption keys however marked are listed as before', async () => {
    const served = listed(await jwksOf(running));
    expect([served.retiringSigning, served.nextSigningByAlg, served.currentByAlg, served.currentUnlabelled]).toEqual(['sig', 'sig', 'enc', 'no use']);
  });

  it('honest: every key held but not listed for encryption still decrypts a request object a relying party sends to it', async () => {
    const client = await registerSigningClient(running, { request_object_signing_alg: 'PS256', request_object_encryption_alg: 'RSA-OAEP-256', request_object_encryption_enc: 'A256GCM' });
    const outcomes = [];
    for (const name of ['nextByAlg', 'retiringByOps', 'nextByUse', 'nextUnlabelled']) outcomes.push(await sealedTo(running, client, labelled[name] as JWK));
    expect(outcomes).toEqual(['interaction', 'interaction', 'interaction', 'interaction']);
  });

  it('every spelling oidc-provider serves the JWKS at, and HEAD, answers the same list', async () => {
    const kids = async (path: string): Promise<string[]> => (await jwksOf(running, path)).map((k) => String(k.kid));
    const canonical = await kids('/jwks');
    for (const path of ['/JWKS', '/jwks/', '/Jwks/', '/./jwks']) expect(await kids(path)).toEqual(canonical);
    const [head, get] = await Promise.all([fetch(`${running.issuer}/jwks`, { method: 'HEAD' }), fetch(`${running.issuer}/jwks`)]);
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
  });
});

describe('a keys file whose decryption keys carry an alg and no use, rotated and reloaded', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-published-keys-'));
  const keysFile = join(dir, 'keys.json');
  const { logger, lines } = capturingLogger();
  const running = appPerSuite(async () => {
    const { keys } = await generateProviderKeys();
    // As some key tools write them: the alg names the key's purpose, no use member.
    const byAlg = keys.map(({ use, ...key }) => (use === 'enc' ? { ...key, alg: key.kty === 'RSA' ? 'RSA-OAEP-256' : 'ECDH-ES' } : { ...key, use }));
    writeFileSync(keysFile, JSON.stringify({ keys: byAlg }), { mode: 0o600 });
    return { logger, properties: { 'svc.keys.file': keysFile } };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const fileKeys = (): StatefulJwk[] => (JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: StatefulJwk[] }).keys;

  it('attack: after step 1 and a reload the next decryption keys are not listed, and keys_reloaded counts only the keys listed; honest: the next signing keys are listed', async () => {
    expect((await rotateKeysFile(keysFile)).step).toBe('added');
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    const served = new Set((await jwksOf(running)).map((k) => k.kid));
    const next = fileKeys().filter((k) => k.svc_state === 'next');
    const listedNext = (encryption: boolean): boolean[] => next.filter((k) => (k.use === undefined) === encryption).map((k) => served.has(k.kid));
    expect([listedNext(true), listedNext(false)]).toEqual([[false, false], [true, true]]);
    const reloaded = lines.map((l) => JSON.parse(l) as { e: string; published?: number }).filter((l) => l.e === 'keys_reloaded');
    expect(reloaded.map((l) => l.published)).toEqual([served.size]);
  });
});

/*
 * oidc-provider picks a decryption key by its key_ops ("decrypt"; "deriveBits" on EC) and jose decrypts with the key
 * only when they hold what it decrypts with ("unwrapKey" for RSA-OAEP). A current key short of either is listed for
 * encryption, and discovery offers its algs, yet no request object encrypted to it decrypts.
 */
describe('a decryption key whose key_ops do not let it decrypt', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-decryption-ops-'));
  const keysFile = join(dir, 'keys.json');
  const { logger, lines } = capturingLogger();
  let keys: JWK[] = [];
  const withOps = (ops: string[]): JWK[] => keys.map((k) => (k.use === 'enc' && k.kty === 'RSA' ? { ...k, key_ops: ops } : k));
  const running = appPerSuite(async () => {
    keys = (await generateProviderKeys()).keys;
    writeFileSync(keysFile, JSON.stringify({ keys: withOps(['decrypt', 'unwrapKey']) }), { mode: 0o600 });
    return { logger, properties: { 'svc.keys.file': keysFile } };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const rsaEnc = (): JWK => keys.find((k) => k.use === 'enc' && k.kty === 'RSA') as JWK;

  it('honest: labelled ["decrypt", "unwrapKey"], it is listed (as the public key, ["encrypt", "wrapKey"]) and decrypts the request objects encrypted to it', async () => {
    const client = await registerSigningClient(running, { request_object_signing_alg: 'PS256', request_object_encryption_alg: 'RSA-OAEP-256', request_object_encryption_enc: 'A256GCM' });
    expect((await jwksOf(running)).find((k) => k.kid === rsaEnc().kid)?.key_ops).toEqual(['encrypt', 'wrapKey']);
    expect(await sealedTo(running, client, rsaEnc())).toBe('interaction');
  });

  it('attack: labelled ["decrypt"] (the spec\'s word alone), with an empty key_ops or an x5c that is one string, the file is refused at a reload naming the key and the fix; the keys in use stay, and still decrypt', async () => {
    const client = await registerSigningClient(running, { request_object_signing_alg: 'PS256', request_object_encryption_alg: 'RSA-OAEP-256', request_object_encryption_enc: 'A256GCM' });
    const before = await jwksOf(running);
    const reasons: string[] = [];
    const files = [withOps(['decrypt']), withOps([]), keys.map((k) => (k.use === 'enc' && k.kty === 'RSA' ? { ...k, x5c: 'MIIBszCCAVmgAwIBAgIU' } : k))];
    for (const file of files) {
      writeFileSync(keysFile, JSON.stringify({ keys: file }), { mode: 0o600 });
      const reload = await running.app.svc.reloadKeys();
      expect(reload.reloaded).toBe(false);
      reasons.push(String(reload.reason).replace(/^.*\(svc\.keys\.file\): /, ''));
    }
    expect(reasons).toEqual([
      'key #3 is a decryption key whose key_ops ["decrypt"] lack "unwrapKey": oidc-provider picks it by "decrypt" and decrypts with "unwrapKey", so request objects encrypted to it would fail; give it key_ops ["decrypt", "unwrapKey"], or none',
      'key #3 has an empty key_ops; leave it out, or name the ops the key is for',
      'key #3 has an x5c that is not a list of certificates (base64 DER strings)',
    ]);
    const failed = lines.map((l) => JSON.parse(l) as { e: string; reason?: string }).filter((l) => l.e === 'keys_reload_failed');
    expect(failed.map((l) => l.reason?.replace(/^.*\(svc\.keys\.file\): /, ''))).toEqual(reasons);
    expect(await jwksOf(running)).toEqual(before);
    expect(await sealedTo(running, client, rsaEnc())).toBe('interaction');
    for (const key of keys) expect(lines.join('\n')).not.toContain(String(key.d));
  });
});

/*
 * A private key exported by WebCrypto (crypto.subtle.exportKey) carries its private ops: ["sign"], ["decrypt",
 * "unwrapKey"], ["deriveBits"]. oidc-provider lists key_ops as the file gives them; jose and openid-client (oauth4webapi)
 * then find no key to verify with (a listed key_ops must hold "verify"), and refuse to encrypt to the listed keys.
 */
describe('a keys file whose keys carry the key_ops a WebCrypto export gives private keys', () => {
  const client = confidentialClient({ client_id: 'webcrypto-labels-rp' });
  const privateOps: Record<string, string[]> = { 'RSA/sig': ['sign'], 'EC/sig': ['sign'], 'RSA/enc': ['decrypt', 'unwrapKey'], 'EC/enc': ['deriveBits'] };
  const running = appPerSuite(async () => ({
    clients: [client],
    jwks: { keys: (await generateProviderKeys()).keys.map((k) => ({ ...k, key_ops: privateOps[`${String(k.kty)}/${String(k.use)}`] })) },
  }));

  it('attack: the keys are listed with the public ops (verify; encrypt and wrapKey; none for ECDH), so relying parties on jose and openid-client verify the ID tokens and encrypt request objects to the listed keys as listed', async () => {
    const listed = await jwksOf(running);
    // First what relying parties do with the list, then the list itself.
    const flowFirst = await runCodeFlow(running.issuer, client, { skipUserinfo: true, configure: (config) => oidc.enableNonRepudiationChecks(config) }).then(
      () => 'verified',
      (err: unknown) => `openid-client: ${err instanceof Error ? err.message : String(err)}`,
    );
    expect(flowFirst).toBe('verified');
    expect(listed.map((k) => [`${String(k.kty)}/${String(k.use)}`, k.key_ops ?? null])).toEqual([
      ['RSA/sig', ['verify']],
      ['EC/sig', ['verify']],
      ['RSA/enc', ['encrypt', 'wrapKey']],
      ['EC/enc', null],
    ]);
    // openid-client verifying the ID token's signature against the JWKS, and jose's remote key set.
    const flow = await runCodeFlow(running.issuer, client, { skipUserinfo: true, configure: (config) => oidc.enableNonRepudiationChecks(config) });
    await expect(jwtVerify(String(flow.tokens.id_token), createRemoteJWKSet(new URL(`${running.issuer}/jwks`)), { issuer: running.issuer, audience: client.client_id })).resolves.toBeDefined();
    const rp = await registerSigningClient(running, { request_object_signing_alg: 'PS256', request_object_encryption_alg: 'RSA-OAEP-256', request_object_encryption_enc: 'A256GCM' });
    const jws = await signRequestObject(rp, running.issuer, { response_type: 'code', redirect_uri: 'https://rp.example/cb', scope: 'openid', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', state: 'st' });
    const sealed = async (alg: string, key: JWK | undefined): Promise<string> =>
      new CompactEncrypt(new TextEncoder().encode(jws))
        .setProtectedHeader({ alg, enc: 'A256GCM', cty: 'JWT', kid: String(key?.kid) })
        .encrypt(key as JWK)
        .catch((err: unknown) => `refused by jose: ${String(err)}`);
    // jose encrypts to each listed key as listed (it refused the private ops: "wrapKey" missing; a public ECDH key with an op).
    const [rsaJwe, ecJwe] = [await sealed('RSA-OAEP-256', listed[2]), await sealed('ECDH-ES', listed[3])];
    expect([rsaJwe, ecJwe].map((jwe) => jwe.split('.').length)).toEqual([5, 5]);
    const outcome = await outcomeOf(authorizationUrl(running.issuer, { client_id: rp.metadata.client_id, request: rsaJwe }));
    expect(outcome.interaction ? 'interaction' : outcome.error).toBe('interaction');
  });

  it('honest: keys without key_ops are listed without them, as before', async () => {
    const plain = (await generateProviderKeys()).keys;
    const other = await startApp({ jwks: { keys: plain } });
    try {
      expect((await jwksOf(other)).map((k) => k.key_ops)).toEqual([undefined, undefined, undefined, undefined]);
    } finally {
      await other.close();
    }
  });
});

/*
 * A key whose private ops have no public counterpart (ECDH's "deriveBits", an op RFC 7517 leaves to others) must not be
 * listed as a key for anything: dropping its key_ops lists an EC key without `use` as one to verify ES256 with, and a key
 * labelled with an unknown op alone as one to verify with and encrypt to, though the provider signs with neither (nor
 * decrypts with the latter).
 */
describe('a key whose key_ops have no public op', () => {
  const labelled: Record<string, JWK> = {};
  const running = appPerSuite(async () => {
    Object.assign(labelled, {
      ecdhUnlabelled: { ...(await generatePrivateJwk('ECDH-ES', { crv: 'P-256' })), key_ops: ['deriveBits'] },
      ecdhByUse: { ...(await generatePrivateJwk('ECDH-ES', { crv: 'P-256' }, 'enc')), key_ops: ['deriveBits', 'deriveKey'] },
      unknownOnly: { ...(await generatePrivateJwk('RSA-OAEP-256', { modulusLength: 2048 })), key_ops: ['x-hsm-only'] },
    });
    return { jwks: { keys: [...(await generateProviderKeys()).keys, ...Object.values(labelled)] } };
  });
  const listedAs = async (name: string): Promise<Pick<JWK, 'use' | 'key_ops'> | undefined> => {
    const found = (await jwksOf(running)).find((k) => k.kid === labelled[name]?.kid);
    return found && { use: found.use, key_ops: found.key_ops };
  };

  it('attack: an ECDH key without use is listed for encryption only (use "enc"), not as a key to verify with', async () => {
    expect(await listedAs('ecdhUnlabelled')).toEqual({ use: 'enc', key_ops: undefined });
  });

  it('attack: a key labelled with an op RFC 7517 does not define, alone, keeps it: jose neither verifies with it nor encrypts to it', async () => {
    const listed = (await jwksOf(running)).find((k) => k.kid === labelled.unknownOnly?.kid) as JWK;
    expect(listed.key_ops).toEqual(['x-hsm-only']);
    const refused = await new CompactEncrypt(new TextEncoder().encode('x')).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' }).encrypt(listed).then(
      () => 'encrypted',
      () => 'refused',
    );
    expect(refused).toBe('refused');
  });

  it('honest: an ECDH key with use "enc" is listed with its use and no key_ops (a public ECDH key takes none)', async () => {
    expect(await listedAs('ecdhByUse')).toEqual({ use: 'enc', key_ops: undefined });
  });
});

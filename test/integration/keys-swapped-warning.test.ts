import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWK } from 'jose';
import * as oidc from 'openid-client';

import { generateProviderKeys } from '../../lib/index.js';
import { rotateKeysFile } from '../../lib/provider/key-rotation.js';
import type { StatefulJwk } from '../../lib/provider/key-states.js';
import { confidentialClient, startApp, type RunningApp } from '../helpers/app.js';
import { runCodeFlow } from '../helpers/flow.js';
import { capturingLogger } from '../helpers/logs.js';

/*
 * keys rotate, with a reload after each step, publishes a key before it signs and keeps it published until every ID
 * token it signed has expired. A reload that skips that (a step's reload missed, a hand edit, a file copied from
 * elsewhere, or a compromised key replaced at once) is accepted, and must say what relying parties will meet.
 */
describe('a keys reload that swaps the signing keys without the rotation steps', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-keys-swapped-'));
  const keysFile = join(dir, 'keys.json');
  const rp = confidentialClient();
  const { logger, lines } = capturingLogger();
  let running: RunningApp;
  /** The ID token a real relying party (openid-client, its signature verified against the JWKS) receives. */
  const idToken = async (): Promise<string> =>
    String((await runCodeFlow(running.issuer, rp, { skipUserinfo: true, configure: (config) => oidc.enableNonRepudiationChecks(config) })).tokens.id_token);
  const warnings = (): Array<Record<string, unknown>> =>
    lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.e === 'keys_swapped_without_rotation')
      .map(({ dropped, unannounced, fix }) => ({ dropped, unannounced, fix }));
  const signers = (): string[] => {
    const { keys } = JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: StatefulJwk[] };
    return keys.filter((k) => k.use === 'sig' && (k.svc_state ?? 'current') === 'current').map((k) => String(k.kid));
  };
  const verifiesNow = async (jwt: string): Promise<boolean> => {
    const published = (await (await fetch(`${running.issuer}/jwks`)).json()) as JSONWebKeySet;
    return jwtVerify(jwt, createLocalJWKSet(published), { issuer: running.issuer, audience: rp.client_id }).then(
      () => true,
      () => false,
    );
  };

  beforeAll(async () => {
    writeFileSync(keysFile, JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    running = await startApp({ logger, properties: { 'svc.keys.file': keysFile }, clients: [rp] });
  });
  afterAll(async () => running.close());

  it('honest: a whole rotation, reloaded after each step, warns at no step, and the relying party verifies every ID token', async () => {
    const t = Math.floor(Date.now() / 1000);
    for (const [now, step] of [
      [t, 'added'],
      [t + 3601, 'promoted'],
      [t + 3601 + 86_401, 'retired'],
    ] as const) {
      const token = await idToken();
      expect((await rotateKeysFile(keysFile, { now })).step).toBe(step);
      expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
      expect(await verifiesNow(token)).toBe(true);
      expect(signers()).toContain(decodeProtectedHeader(await idToken()).kid);
    }
    expect(warnings()).toEqual([]);
  });

  it('attack: steps 1 and 2 run with no reload between: the new keys sign without ever having been published, and the reload says which', async () => {
    const t = Math.floor(Date.now() / 1000) + 200_000;
    expect((await rotateKeysFile(keysFile, { now: t })).step).toBe('added');
    expect((await rotateKeysFile(keysFile, { now: t + 3601 })).step).toBe('promoted');
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    expect(warnings()).toEqual([{ dropped: '', unannounced: signers().join(' '), fix: expect.any(String) }]);
    expect(await verifiesNow(await idToken())).toBe(true);
  });

  it('attack: the file replaced by a new one (a compromised key replaced at once): the keys that signed until the reload are gone, and the reload names them and the new ones', async () => {
    const before = signers();
    const token = await idToken();
    writeFileSync(keysFile, JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    lines.length = 0;
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    expect(warnings()).toEqual([{ dropped: before.join(' '), unannounced: signers().join(' '), fix: expect.any(String) }]);
    expect(await verifiesNow(token)).toBe(false);
  });

  it('honest: a kind of key added (an EC key to a file of RSA keys only) is not unannounced: no client can have used an alg no key signed (oidc-provider refuses it), so no relying party holds a JWKS to miss its key in', async () => {
    const { keys } = JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: StatefulJwk[] };
    const rsaOnly = keys.filter((k) => k.kty === 'RSA');
    writeFileSync(keysFile, JSON.stringify({ keys: rsaOnly }), { mode: 0o600 });
    lines.length = 0;
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    // Dropped, the EC key's ES256 ID tokens stop verifying: that is said.
    expect(warnings()).toEqual([{ dropped: keys.filter((k) => k.kty === 'EC' && k.use === 'sig').map((k) => k.kid).join(' '), unannounced: '', fix: expect.any(String) }]);
    lines.length = 0;
    const ec = (await generateProviderKeys()).keys.filter((k) => k.kty === 'EC');
    writeFileSync(keysFile, JSON.stringify({ keys: [...rsaOnly, ...ec] }), { mode: 0o600 });
    expect(await running.app.svc.reloadKeys()).toEqual({ reloaded: true, signing: expect.objectContaining({ ES256: ec.find((k) => k.use === 'sig')?.kid }) });
    expect(warnings()).toEqual([]);
    expect(await verifiesNow(await idToken())).toBe(true);
  });

  it('honest: a step rolled back (the file of the step before restored from its backup, and reloaded) reloads without a warning, and ID tokens signed on either side verify', async () => {
    const t = Math.floor(Date.now() / 1000) + 100_000;
    expect((await rotateKeysFile(keysFile, { now: t })).step).toBe('added');
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    const backup = readFileSync(keysFile, 'utf8');
    const before = await idToken();
    expect((await rotateKeysFile(keysFile, { now: t + 3601 })).step).toBe('promoted');
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    const promoted = await idToken();
    lines.length = 0;
    writeFileSync(keysFile, backup, { mode: 0o600 });
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    expect(warnings()).toEqual([]);
    for (const token of [before, promoted, await idToken()]) expect(await verifiesNow(token)).toBe(true);
  });
});

/*
 * A relying party looks a key up by the kid in the token's header and fetches the JWKS again only for a kid it does not
 * hold (openid-client: after a minute; it keeps a JWKS five minutes, jose ten). Another key under a kid already
 * published fails its signature checks until its copy expires, and a token forged with the old key still passes there.
 */
describe('a keys reload that gives a kid already in use to another key (kids assigned by hand)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-keys-kid-reused-'));
  const keysFile = join(dir, 'keys.json');
  const rp = confidentialClient();
  let running: RunningApp;
  /** The relying party's JWKS cache, kept across its sign-ins as a running openid-client RP keeps it. */
  let cache: oidc.ExportedJWKSCache | undefined;

  /** The kid of the ID token openid-client received and verified with its cached JWKS, or its error message. */
  const signIn = async (): Promise<string> => {
    let used: oidc.Configuration | undefined;
    const configure = (config: oidc.Configuration): void => {
      oidc.enableNonRepudiationChecks(config);
      if (cache) oidc.setJwksCache(config, cache);
      used = config;
    };
    return runCodeFlow(running.issuer, rp, { skipUserinfo: true, configure }).then(
      ({ tokens }) => {
        cache = used && oidc.getJwksCache(used);
        return String(decodeProtectedHeader(String(tokens.id_token)).kid);
      },
      (err: Error) => err.message,
    );
  };
  const named = async (): Promise<JWK[]> => {
    const names = ['sig-rsa', 'sig-ec', 'enc-rsa', 'enc-ec'];
    return (await generateProviderKeys()).keys.map((k, i) => ({ ...k, kid: names[i] }));
  };
  const write = (keys: JWK[]): void => writeFileSync(keysFile, JSON.stringify({ keys }), { mode: 0o600 });

  beforeAll(async () => {
    write(await named());
    running = await startApp({ properties: { 'svc.keys.file': keysFile }, clients: [rp] });
  });
  afterAll(async () => running.close());

  it('attack: new keys under the kids in use (a file regenerated with the same names) are refused at the reload naming the kids; the keys in use stay, and the relying party verifies with its cached JWKS', async () => {
    expect(await signIn()).toBe('sig-rsa');
    const good = readFileSync(keysFile, 'utf8');
    const fresh = await named();
    try {
      const inUse = (JSON.parse(good) as { keys: JWK[] }).keys;
      const edits: Array<[JWK[], string]> = [
        [fresh, 'kid sig-rsa, sig-ec, enc-rsa, enc-ec names another key than the one in use'],
        // Only the EC decryption key: a relying party would encrypt request objects to the old one.
        [inUse.map((k) => (k.kid === 'enc-ec' ? (fresh[3] as JWK) : k)), 'kid enc-ec names another key than the one in use'],
      ];
      for (const [keys, reason] of edits) {
        write(keys);
        expect(await running.app.svc.reloadKeys()).toEqual({ reloaded: false, reason: expect.stringContaining(reason) });
        expect(await signIn()).toBe('sig-rsa');
      }
    } finally {
      writeFileSync(keysFile, good, { mode: 0o600 });
    }
  });

  it('honest: the same keys written otherwise (members reordered, n with a leading zero byte, padded, in base64 with + and /), as another tool exports them, reload under their kids, and the relying party verifies with its cached JWKS', async () => {
    const good = readFileSync(keysFile, 'utf8');
    const inUse = (JSON.parse(good) as { keys: JWK[] }).keys;
    const bytes = (member: string): Buffer => Buffer.from(member, 'base64url');
    const spellings: Array<(n: string) => string> = [
      (n) => Buffer.concat([Buffer.from([0]), bytes(n)]).toString('base64url'),
      (n) => bytes(n).toString('base64').replace(/\+/g, '-').replace(/\//g, '_'),
      (n) => bytes(n).toString('base64'),
    ];
    expect(await signIn()).toBe('sig-rsa');
    try {
      for (const spelled of spellings) {
        write(inUse.map((k) => Object.fromEntries(Object.entries(k.kty === 'RSA' ? { ...k, n: spelled(String(k.n)) } : k).reverse()) as JWK));
        expect(await running.app.svc.reloadKeys()).toEqual({ reloaded: true, signing: expect.objectContaining({ RS256: 'sig-rsa' }) });
        expect(await signIn()).toBe('sig-rsa');
      }
    } finally {
      writeFileSync(keysFile, good, { mode: 0o600 });
    }
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
  });

  it('honest: the same keys relabelled (an alg added) reload; rotated, the new keys get kids of their own and the relying party verifies through the rotation with its cached JWKS', async () => {
    const { keys } = JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: JWK[] };
    write(keys.map((k) => (k.kid === 'sig-ec' ? { ...k, alg: 'ES256' } : k)));
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    expect(await signIn()).toBe('sig-rsa');
    const t = Math.floor(Date.now() / 1000);
    expect((await rotateKeysFile(keysFile, { now: t })).step).toBe('added');
    expect((await running.app.svc.reloadKeys()).reloaded).toBe(true);
    // The hour before step 2 outlasts its copy of the JWKS: it fetches the one with the next keys.
    cache = undefined;
    expect(await signIn()).toBe('sig-rsa');
    expect((await rotateKeysFile(keysFile, { now: t + 3601 })).step).toBe('promoted');
    const reload = await running.app.svc.reloadKeys();
    expect(reload.reloaded).toBe(true);
    expect(await signIn()).toBe(reload.signing?.RS256);
  });
});

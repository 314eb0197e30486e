import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';
import type { JWK } from 'jose';

import { generateProviderKeys, SettingsError } from '../../lib/index.js';
import { generateSigningKeys, readSigningKeys, validateProviderKeys } from '../../lib/provider/keys.js';
import { ID_TOKEN_TTL } from '../../lib/provider/configuration.js';
import { keysStatus, rotateKeysFile } from '../../lib/provider/key-rotation.js';
import { RETIRE_AFTER_SECONDS, signingKids, type StatefulJwk } from '../../lib/provider/key-states.js';

const T0 = 1_800_000_000;
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'svc-rotation-')));
let n = 0;

async function keysFile(keys?: StatefulJwk[]): Promise<string> {
  n += 1;
  const file = join(dir, `keys-${n}.json`);
  writeFileSync(file, JSON.stringify({ keys: keys ?? (await generateSigningKeys()).keys }), { mode: 0o600 });
  return file;
}
const read = (file: string): StatefulJwk[] => (JSON.parse(readFileSync(file, 'utf8')) as { keys: StatefulJwk[] }).keys;
const states = (file: string): string[] => read(file).map((k) => `${String(k.kty)}:${typeof k.svc_state === 'string' ? k.svc_state : 'current'}`);
const signers = (file: string): Record<string, string> => signingKids(validateProviderKeys(JSON.parse(readFileSync(file, 'utf8')), file).keys);

describe('signing key rotation', () => {
  it('retires keys after exactly the ID token lifetime', () => {
    expect(RETIRE_AFTER_SECONDS).toBe(ID_TOKEN_TTL);
  });

  it('walks a whole rotation: add (published, not signing) → wait → promote → wait 24 h → drop', async () => {
    const file = await keysFile();
    const original = read(file).map((k) => k.kid);
    const before = signers(file);
    expect(before).toEqual({ RS256: original[0], PS256: original[0], ES256: original[1] });

    const added = await rotateKeysFile(file, { now: T0 });
    expect(added).toMatchObject({ step: 'added', promoteAfter: T0 + 3600 });
    expect(states(file)).toEqual(['RSA:current', 'EC:current', 'RSA:next', 'EC:next']);
    const next = read(file).filter((k) => k.svc_state === 'next');
    expect(next.map((k) => k.svc_since)).toEqual([T0, T0]);
    expect(next.map((k) => [k.kty, k.crv, k.use])).toEqual(read(file).slice(0, 2).map((k) => [k.kty, k.crv, k.use]));
    // Published (the provider gets them), but the current keys still sign every alg.
    expect(validateProviderKeys(JSON.parse(readFileSync(file, 'utf8')), file).keys.map((k) => k.kid)).toEqual([...original, ...next.map((k) => k.kid)]);
    expect(signers(file)).toEqual(before);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const early = await rotateKeysFile(file, { now: T0 + 3599 });
    expect(early).toMatchObject({ step: 'waiting', until: T0 + 3600 });
    expect(states(file)).toEqual(['RSA:current', 'EC:current', 'RSA:next', 'EC:next']);

    const promoted = await rotateKeysFile(file, { now: T0 + 3600 });
    expect(promoted).toEqual({ step: 'promoted', kids: next.map((k) => k.kid), retiring: original, retireAfter: T0 + 3600 + 86_400 });
    expect(states(file)).toEqual(['RSA:retiring', 'EC:retiring', 'RSA:current', 'EC:current']);
    expect(signers(file)).toEqual({ RS256: next[0]?.kid, PS256: next[0]?.kid, ES256: next[1]?.kid });

    expect(await rotateKeysFile(file, { now: T0 + 3600 + 86_399 })).toMatchObject({ step: 'waiting', until: T0 + 3600 + 86_400 });
    expect(await rotateKeysFile(file, { now: T0 + 3600 + 86_400 })).toEqual({ step: 'retired', kids: original });
    expect(read(file).map((k) => k.kid)).toEqual(next.map((k) => k.kid));

    // A new cycle starts with the next run.
    expect((await rotateKeysFile(file, { now: T0 + 200_000 })).step).toBe('added');
  });

  it('rotates decryption keys with the signing keys, keeping each key kind', async () => {
    const file = await keysFile((await generateProviderKeys()).keys);
    await rotateKeysFile(file, { now: T0 });
    const kinds = (keys: StatefulJwk[]): string[] => keys.map((k) => `${String(k.kty)}/${String(k.crv ?? '')}/${String(k.use)}`);
    const keys = read(file);
    expect(kinds(keys.filter((k) => k.svc_state === 'next'))).toEqual(kinds(keys.filter((k) => k.svc_state === undefined)));
  });

  it('honours --publish-seconds', async () => {
    const file = await keysFile();
    await rotateKeysFile(file, { now: T0, publishSeconds: 60 });
    expect(await rotateKeysFile(file, { now: T0 + 59, publishSeconds: 60 })).toMatchObject({ step: 'waiting' });
    expect(await rotateKeysFile(file, { now: T0 + 60, publishSeconds: 60 })).toMatchObject({ step: 'promoted' });
  });

  it('attack: a next or retiring key added by hand without svc_since is neither promoted nor dropped at once (it may be published nowhere yet, or still verify tokens), the file unchanged; honest: dated, it waits its time', async () => {
    const [rsa] = (await generateSigningKeys()).keys as [JWK, JWK];
    const [rsa2] = (await generateSigningKeys()).keys as [JWK, JWK];
    for (const state of ['next', 'retiring'] as const) {
      const file = await keysFile([rsa, { ...rsa2, svc_state: state }]);
      const before = readFileSync(file, 'utf8');
      const fix = `key #2 (${String(rsa2.kid)}) is ${state} without svc_since, so keys rotate cannot tell when it may ${state === 'next' ? 'sign' : 'be dropped'}; add "svc_since": ${T0} (now, epoch seconds) and reload every server`;
      await expect(rotateKeysFile(file, { now: T0 })).rejects.toThrow(fix);
      await expect(keysStatus(file, { now: T0 })).rejects.toThrow(fix);
      expect(readFileSync(file, 'utf8')).toBe(before);

      const dated = await keysFile([rsa, { ...rsa2, svc_state: state, svc_since: T0 }]);
      const due = state === 'next' ? T0 + 3600 : T0 + RETIRE_AFTER_SECONDS;
      expect([(await rotateKeysFile(dated, { now: due - 1 })).step, (await rotateKeysFile(dated, { now: due })).step]).toEqual(['waiting', state === 'next' ? 'promoted' : 'retired']);
    }
  });

  it('refuses a keys file where a next or retiring key would sign before the current ones', async () => {
    const [rsa, ec] = (await generateSigningKeys()).keys as [JWK, JWK];
    const [rsa2] = (await generateSigningKeys()).keys as [JWK, JWK];
    const { use: _use, ...rsaWithoutUse } = rsa;
    // oidc-provider prefers a key that names its use: this next key would sign RS256 and PS256.
    const file = await keysFile([rsaWithoutUse, ec, { ...rsa2, svc_state: 'next', svc_since: T0 }]);
    expect(() => validateProviderKeys(JSON.parse(readFileSync(file, 'utf8')), file)).toThrow(
      `the next key ${String(rsa2.kid)} would sign RS256 before every current key; give it the same use and alg members as the current key`,
    );
    await expect(rotateKeysFile(file, { now: T0 + 10_000 })).rejects.toThrow(SettingsError);
    const withAlg = await keysFile([rsa, ec, { ...rsa2, alg: 'PS256', svc_state: 'retiring', svc_since: T0 }]);
    expect(() => validateProviderKeys(JSON.parse(readFileSync(withAlg, 'utf8')), withAlg)).toThrow(/the retiring key .* would sign PS256/);
  });

  it.each<[string, (keys: StatefulJwk[]) => StatefulJwk[], string]>([
    ['an unknown state', (k) => [{ ...k[0], svc_state: 'old' }, ...k.slice(1)], 'key #1 has svc_state "old"; expected next, current or retiring'],
    ['a since that is not epoch seconds', (k) => [{ ...k[0], svc_since: '2026-01-01' }, ...k.slice(1)], 'key #1 has an svc_since that is not epoch seconds'],
    // Milliseconds (Date.now()) would date the key in the year 57000, and 1e17 beyond any date: keys status and rotate failed with "Invalid time value".
    ['a since in milliseconds', (k) => [...k, { ...k[0], kid: 'retiring', svc_state: 'retiring', svc_since: T0 * 1000 }], 'key #3 has an svc_since that is not epoch seconds'],
    ['a since beyond any date', (k) => [...k, { ...k[0], kid: 'retiring', svc_state: 'retiring', svc_since: 1e17 }], 'key #3 has an svc_since that is not epoch seconds'],
    ['no current RSA signing key', (k) => k.map((key) => (key.kty === 'RSA' ? { ...key, svc_state: 'next', svc_since: T0 } : key)), 'no current RSA signing key (every RSA signing key is next or retiring)'],
  ])('refuses a keys file with %s, naming it', async (_name, change, message) => {
    const file = await keysFile(change((await generateSigningKeys()).keys));
    expect(() => validateProviderKeys(JSON.parse(readFileSync(file, 'utf8')), file)).toThrow(message);
    const before = readFileSync(file, 'utf8');
    await expect(rotateKeysFile(file, { now: T0 })).rejects.toThrow(message);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it("keeps the mode of the file it replaces: a group the service reads through (0640) keeps reading at every step; honest: 0600 and 0400 stay the owner's alone", async () => {
    const modes: Record<string, string[]> = {};
    for (const mode of [0o640, 0o600, 0o400]) {
      const file = await keysFile();
      chmodSync(file, mode);
      const steps = [await rotateKeysFile(file, { now: T0 }), await rotateKeysFile(file, { now: T0 + 3600 }), await rotateKeysFile(file, { now: T0 + 3600 + RETIRE_AFTER_SECONDS })];
      modes[mode.toString(8)] = steps.map((step) => `${step.step} ${(statSync(file).mode & 0o777).toString(8)}`);
    }
    expect(modes).toEqual({
      '640': ['added 640', 'promoted 640', 'retired 640'],
      '600': ['added 600', 'promoted 600', 'retired 600'],
      '400': ['added 400', 'promoted 400', 'retired 400'],
    });
  });

  it('refuses a second rotation while one holds the lock, and leaves the file as it was', async () => {
    const file = await keysFile();
    writeFileSync(`${file}.lock`, '');
    const before = readFileSync(file, 'utf8');
    await expect(rotateKeysFile(file, { now: T0 })).rejects.toThrow(`another rotation of ${file} is running`);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('attack: a pipe named as the keys file (a FIFO nobody writes), or a link to one or to /dev/zero, is refused before it is read, not waited on for ever, by keys rotate, keys status and the server at its start; honest: a link to a regular file is read', async () => {
    const fifo = join(dir, `fifo-${(n += 1)}`);
    execFileSync('mkfifo', [fifo]);
    const toFifo = join(dir, `link-fifo-${n}`);
    const toZero = join(dir, `link-zero-${n}`);
    symlinkSync(fifo, toFifo);
    symlinkSync('/dev/zero', toZero);
    for (const file of [fifo, toFifo, toZero]) {
      for (const call of [rotateKeysFile(file, { now: T0 }), keysStatus(file, { now: T0 })]) await expect(call).rejects.toThrow(`the keys file: ${file} is not a regular file`);
      expect(() => readSigningKeys(file)).toThrow(`svc.keys.file: ${file} is not a regular file`);
    }
    const link = join(dir, `link-${n}`);
    symlinkSync(await keysFile(), link);
    expect((await keysStatus(link, { now: T0 })).next.step).toBe('added');
    expect(readSigningKeys(link).keys).toHaveLength(2);
  });

  it('rotates the file a symbolic link leads to and keeps the link, so processes reading that file through another link see the same rotation', async () => {
    const file = await keysFile();
    const links = [join(dir, `link-a-${n}`), join(dir, `link-b-${n}`)];
    for (const link of links) symlinkSync(file, link);
    const before = read(file).map((k) => k.kid);
    const added = await rotateKeysFile(links[0] as string, { now: T0 });
    expect(added.step).toBe('added');
    expect(lstatSync(links[0] as string).isSymbolicLink()).toBe(true);
    expect(readlinkSync(links[0] as string)).toBe(file);
    expect(states(file)).toEqual(['RSA:current', 'EC:current', 'RSA:next', 'EC:next']);
    expect(read(links[1] as string).map((k) => k.kid)).toEqual([...before, ...(added.step === 'added' ? added.kids : [])]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // One lock for the file, whichever link a rotation came through.
    writeFileSync(`${file}.lock`, '');
    const rotated = readFileSync(file, 'utf8');
    await expect(rotateKeysFile(links[1] as string, { now: T0 + 3600 })).rejects.toThrow(`another rotation of ${file} is running`);
    expect(readFileSync(file, 'utf8')).toBe(rotated);
  });

  it('honest: a link into a folder of versions rotates the version it leads to', async () => {
    const versions = join(dir, `versions-${n}`);
    mkdirSync(versions);
    const file = join(versions, 'keys.json');
    writeFileSync(file, JSON.stringify({ keys: (await generateSigningKeys()).keys }), { mode: 0o600 });
    const link = join(dir, `current-${n}.json`);
    symlinkSync(`versions-${n}/keys.json`, link);
    expect((await rotateKeysFile(link, { now: T0 })).step).toBe('added');
    expect(readlinkSync(link)).toBe(`versions-${n}/keys.json`);
    expect(states(file)).toEqual(['RSA:current', 'EC:current', 'RSA:next', 'EC:next']);
  });

  it('of concurrent rotations exactly one adds keys; the others are refused or find the step done', async () => {
    const file = await keysFile();
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => rotateKeysFile(file, { now: T0 })));
    const added = results.filter((r) => r.status === 'fulfilled' && r.value.step === 'added');
    expect(added).toHaveLength(1);
    expect(read(file).filter((k) => k.svc_state === 'next')).toHaveLength(2);
  });

  it('status shows states, signing algs and the next step', async () => {
    const file = await keysFile();
    await rotateKeysFile(file, { now: T0 });
    const status = await keysStatus(file, { now: T0 + 10 });
    expect(status.keys.map((k) => [k.kty, k.state, k.signs])).toEqual([
      ['RSA 2048', 'current', ['RS256', 'PS256']],
      ['EC P-256', 'current', ['ES256']],
      ['RSA 2048', 'next', []],
      ['EC P-256', 'next', []],
    ]);
    expect(status.next).toMatchObject({ step: 'waiting', until: T0 + 3600 });
  });
});

import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import type { ClientMetadata } from 'oidc-provider';
import * as oidc from 'openid-client';

import { generateProviderKeys } from '../../lib/index.js';
import type { StatefulJwk } from '../../lib/provider/key-states.js';
import { runCodeFlow } from '../helpers/flow.js';
import { exponentOneKey } from '../helpers/hostile-keys.js';
import { freePort, PROCESS_MS, type ServerProcess, startServerProcess, waitFor } from '../helpers/processes.js';

jest.setTimeout(PROCESS_MS);

const root = new URL('../..', import.meta.url).pathname;

/**
 * Runs `svc-connect keys …` (lib/cli.ts under tsx); with `maxFileKiB`, under that file size limit (`ulimit -f`: a write
 * beyond it fails with EFBIG); with `user` (root only), as that user.
 */
function keysCli(args: string[], maxFileKiB?: number, user?: { uid: number; gid: number }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };
    const child =
      maxFileKiB === undefined
        ? spawn(process.execPath, ['--import', 'tsx', 'lib/cli.ts', 'keys', ...args], { cwd: root, env, ...user })
        : spawn('bash', ['-c', `ulimit -f ${maxFileKiB} && exec "$0" --import tsx lib/cli.ts keys "$@"`, process.execPath, ...args], { cwd: root, env, ...user });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('signing key rotation with a running server and a relying party holding the old JWKS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rotate-e2e-'));
  const keysFile = join(dir, 'keys.json');
  const clientsFile = join(dir, 'clients.json');
  const client: ClientMetadata = { client_id: 'rotation-rp', client_secret: 'rotation-rp-secret-that-is-long-enough-012345', redirect_uris: ['https://rp.example/cb'] };
  let server: ServerProcess;
  let issuer: string;

  const keys = (): StatefulJwk[] => (JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: StatefulJwk[] }).keys;
  /** Moves the rotation timestamps back by `seconds`: the time a real rotation waits, without waiting. */
  const age = (seconds: number): void => {
    const jwks = JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: StatefulJwk[] };
    for (const k of jwks.keys) if (typeof k.svc_since === 'number') k.svc_since -= seconds;
    writeFileSync(keysFile, JSON.stringify(jwks), { mode: 0o600 });
  };
  const reloads = (word: string): number => server.output().split('\n').filter((l) => l.includes(`"event":"${word}"`)).length;
  /** Sends SIGHUP and waits for the server to log the outcome. */
  const hup = async (expect: 'keys_reloaded' | 'keys_reload_failed'): Promise<void> => {
    const before = reloads(expect);
    server.child.kill('SIGHUP');
    while (reloads(expect) === before) await new Promise((resolve) => setTimeout(resolve, 50));
  };
  const idToken = async (): Promise<string> => String((await runCodeFlow(issuer, client, { skipUserinfo: true })).tokens.id_token);
  const kidOf = (jwt: string): string | undefined => decodeProtectedHeader(jwt).kid;
  const jwks = async (): Promise<JSONWebKeySet> => (await (await fetch(`${issuer}/jwks`)).json()) as JSONWebKeySet;
  const verifies = async (jwt: string, set: Parameters<typeof jwtVerify>[1]): Promise<boolean> =>
    jwtVerify(jwt, set, { issuer, audience: client.client_id }).then(
      () => true,
      () => false,
    );

  beforeAll(async () => {
    writeFileSync(keysFile, JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    writeFileSync(clientsFile, JSON.stringify([client]));
    const port = await freePort();
    issuer = `http://localhost:${port}/oidc/v1`;
    server = startServerProcess({ PORT: String(port), SVC_KEYS_FILE: keysFile, SVC_CLIENTS_FILE: clientsFile });
    await waitFor(`${issuer}/.well-known/openid-configuration`);
  });
  afterAll(async () => server.stop());

  it('publishes the next key before it signs, signs with it after promotion, keeps the old key verifying for 24 h, then drops it', async () => {
    const [k1] = keys().filter((k) => k.kty === 'RSA' && k.use === 'sig');
    const token0 = await idToken();
    expect(kidOf(token0)).toBe(k1?.kid);
    // An RP that fetched the JWKS before the rotation began, and refetches for an unknown kid.
    const remote = createRemoteJWKSet(new URL(`${issuer}/jwks`), { cooldownDuration: 0 });
    expect(await verifies(token0, remote)).toBe(true);

    // Step 1: the next key is added and published, and does not sign.
    const added = await keysCli(['rotate', '--file', keysFile]);
    expect([added.code, added.stdout]).toEqual([0, expect.stringContaining('added next keys')]);
    await hup('keys_reloaded');
    const [k2] = keys().filter((k) => k.kty === 'RSA' && k.use === 'sig' && k.svc_state === 'next');
    const published = await jwks();
    expect(published.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([k1?.kid, k2?.kid]));
    for (const key of published.keys) expect(Object.keys(key).filter((m) => m.startsWith('svc_') || ['d', 'p', 'q', 'dp', 'dq', 'qi'].includes(m))).toEqual([]);
    // The next decryption keys only decrypt: no relying party encrypts to one a server not yet reloaded lacks.
    const kidsIn = (set: JSONWebKeySet, state: string): boolean[] => keys().filter((k) => k.use === 'enc' && (k.svc_state ?? 'current') === state).map((k) => set.keys.some((p) => p.kid === k.kid));
    expect([kidsIn(published, 'current'), kidsIn(published, 'next')]).toEqual([[true, true], [false, false]]);
    const token1 = await idToken();
    expect(kidOf(token1)).toBe(k1?.kid);
    expect(await verifies(token1, remote)).toBe(true);

    // Not before the publication time has passed.
    const early = await keysCli(['rotate', '--file', keysFile]);
    expect([early.code, early.stdout]).toEqual([0, expect.stringContaining('nothing to do yet')]);

    // Step 2, an hour later: promoted. An RP holding the JWKS of step 1 verifies without fetching.
    const heldSinceStep1 = createLocalJWKSet(published);
    age(3600);
    const promoted = await keysCli(['rotate', '--file', keysFile]);
    expect([promoted.code, promoted.stdout]).toEqual([0, expect.stringContaining(`promoted ${String(k2?.kid)}`)]);
    await hup('keys_reloaded');
    const token2 = await idToken();
    expect(kidOf(token2)).toBe(k2?.kid);
    expect(await verifies(token2, heldSinceStep1)).toBe(true);
    expect(await verifies(token2, remote)).toBe(true);
    // Tokens the old key signed keep verifying against the provider's JWKS as it is now.
    const promotedSet = await jwks();
    const now = createLocalJWKSet(promotedSet);
    for (const token of [token0, token1, token2]) expect(await verifies(token, now)).toBe(true);
    expect([kidsIn(promotedSet, 'current'), kidsIn(promotedSet, 'retiring')]).toEqual([[true, true], [false, false]]);
    expect(server.output()).toContain(`RS256=${String(k2?.kid)}`);

    // Step 3, a day later: the retiring key is dropped; the new one goes on signing.
    age(86_400);
    const retired = await keysCli(['rotate', '--file', keysFile]);
    expect([retired.code, retired.stdout]).toEqual([0, expect.stringContaining(`dropped the retired keys ${String(k1?.kid)}`)]);
    await hup('keys_reloaded');
    const after = await jwks();
    expect(after.keys.map((k) => k.kid)).not.toContain(k1?.kid);
    expect(await verifies(await idToken(), createLocalJWKSet(after))).toBe(true);
  });

  it('keeps serving with the keys in use when the reloaded file is broken, and says so', async () => {
    const before = await jwks();
    const good = readFileSync(keysFile, 'utf8');
    writeFileSync(keysFile, '{"keys": [', { mode: 0o600 });
    try {
      await hup('keys_reload_failed');
      expect(server.output()).toMatch(/"event":"keys_reload_failed".*is not valid JSON/);
      expect(await jwks()).toEqual(before);
      expect(kidOf(await idToken())).toBeDefined();
    } finally {
      writeFileSync(keysFile, good, { mode: 0o600 });
    }
  });

  it("keeps the keys in use when the reloaded file's signing key carries another key's private part (its ID tokens would not verify)", async () => {
    const good = readFileSync(keysFile, 'utf8');
    const { keys: current } = JSON.parse(good) as { keys: StatefulJwk[] };
    const [foreign] = (await generateProviderKeys()).keys;
    const { d, p, q, dp, dq, qi } = foreign as StatefulJwk;
    writeFileSync(keysFile, JSON.stringify({ keys: current.map((k) => (k.kty === 'RSA' && k.use === 'sig' ? { ...k, d, p, q, dp, dq, qi } : k)) }), { mode: 0o600 });
    try {
      await hup('keys_reload_failed');
      expect(server.output()).toMatch(/"event":"keys_reload_failed".*has a private part that does not belong to its public key/);
      expect(await verifies(await idToken(), createLocalJWKSet(await jwks()))).toBe(true);
    } finally {
      writeFileSync(keysFile, good, { mode: 0o600 });
    }
  });

  it('keeps the keys in use when the reloaded file holds a next signing key of public exponent 1 (its signatures would be forgeable by anyone)', async () => {
    const before = await jwks();
    const good = readFileSync(keysFile, 'utf8');
    const { keys: current } = JSON.parse(good) as { keys: StatefulJwk[] };
    const [fresh] = (await generateProviderKeys()).keys;
    const weak: StatefulJwk = { ...exponentOneKey(fresh as StatefulJwk), kid: 'exponent-one', svc_state: 'next', svc_since: Math.floor(Date.now() / 1000) };
    writeFileSync(keysFile, JSON.stringify({ keys: [...current, weak] }), { mode: 0o600 });
    try {
      await hup('keys_reload_failed');
      expect(server.output()).toMatch(/"event":"keys_reload_failed".*key #5 has an unsafe public exponent \(RSA public exponent 1 is below 65537\)/);
      expect(await jwks()).toEqual(before);
      expect(await verifies(await idToken(), createLocalJWKSet(before))).toBe(true);
    } finally {
      writeFileSync(keysFile, good, { mode: 0o600 });
    }
    // Honest: the same file with a sound next key reloads.
    const [sound] = (await generateProviderKeys()).keys;
    writeFileSync(keysFile, JSON.stringify({ keys: [...current, { ...sound, svc_state: 'next', svc_since: Math.floor(Date.now() / 1000) }] }), { mode: 0o600 });
    try {
      await hup('keys_reloaded');
      expect((await jwks()).keys.map((k) => k.kid)).toContain(sound?.kid);
    } finally {
      writeFileSync(keysFile, good, { mode: 0o600 });
      await hup('keys_reloaded');
    }
  });

  it('attack: the keys file made a link to a pipe nobody writes, then to /dev/zero, is refused at the reload unread (a pipe held the server for ever, /dev/zero filled its memory): it says so and goes on signing with the keys in use; honest: a link to a regular keys file reloads', async () => {
    const before = await jwks();
    const good = readFileSync(keysFile, 'utf8');
    const fifo = join(dir, 'keys.fifo');
    execFileSync('mkfifo', [fifo]);
    // A real relying party that verifies the ID token's signature against the JWKS.
    const verifiedByRp = async (): Promise<string | undefined> =>
      kidOf(String((await runCodeFlow(issuer, client, { skipUserinfo: true, configure: (config) => oidc.enableNonRepudiationChecks(config) })).tokens.id_token));
    const lastFailure = (): string => server.output().split('\n').filter((l) => l.includes('"event":"keys_reload_failed"')).at(-1) ?? '';
    try {
      for (const target of [fifo, '/dev/zero']) {
        rmSync(keysFile);
        symlinkSync(target, keysFile);
        await hup('keys_reload_failed');
        expect(lastFailure()).toContain(`${keysFile} is not a regular file`);
        expect(await jwks()).toEqual(before);
        expect(before.keys.map((k) => k.kid)).toContain(await verifiedByRp());
      }
    } finally {
      rmSync(keysFile, { force: true });
      writeFileSync(keysFile, good, { mode: 0o600 });
    }
    const version = join(dir, 'keys-v2.json');
    writeFileSync(version, good, { mode: 0o600 });
    rmSync(keysFile);
    symlinkSync(version, keysFile);
    try {
      await hup('keys_reloaded');
      expect(await jwks()).toEqual(before);
      expect(before.keys.map((k) => k.kid)).toContain(await verifiedByRp());
    } finally {
      rmSync(keysFile);
      writeFileSync(keysFile, good, { mode: 0o600 });
    }
  });
});

describe('a keys file write that fails half-way (the file size limit reached, as a full disk would)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rotate-fault-'));

  it('attack: keys rotate and keys generate --out leave no partial private key file and no lock beside the keys file, which stays as it was', async () => {
    const own = mkdtempSync(join(dir, 'full-'));
    const keysFile = join(own, 'keys.json');
    const before = `${JSON.stringify(await generateProviderKeys(), null, 2)}\n`;
    writeFileSync(keysFile, before, { mode: 0o600 });
    const rotate = await keysCli(['rotate', '--file', keysFile], 2);
    expect(rotate.code).toBe(1);
    expect(rotate.stderr).toContain('cannot write');
    const generate = await keysCli(['generate', '--out', keysFile], 2);
    expect(generate.code).toBe(1);
    expect(generate.stderr).toContain(`cannot write ${keysFile}`);
    expect(readdirSync(own)).toEqual(['keys.json']);
    expect(readFileSync(keysFile, 'utf8')).toBe(before);
  });

  it('honest: under a limit the keys file fits in, keys rotate adds the next keys and leaves only the keys file', async () => {
    const own = mkdtempSync(join(dir, 'fits-'));
    const keysFile = join(own, 'keys.json');
    writeFileSync(keysFile, JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    const rotate = await keysCli(['rotate', '--file', keysFile], 1024);
    expect([rotate.code, rotate.stdout]).toEqual([0, expect.stringContaining('added next keys')]);
    expect(readdirSync(own)).toEqual(['keys.json']);
  });
});

/** Files of another user (the service user of a unit's `User=`) can only be made by root (as CI runs the tests). */
const asRoot = process.getuid?.() === 0 ? it : it.skip;

/**
 * The operator runs `keys rotate` as root (beside `systemctl reload`, which needs root) on the keys file of
 * docs/operations/production.md: the service user's own (0600, in a 0700 folder of its own), or root's with the service
 * group's read (0640). The server, running as the service user, must read the rotated file at its reload and at its next start.
 */
describe('keys rotate run by root on a keys file the server reads as the service user', () => {
  const SERVICE = { uid: 65534, gid: 65534 };
  const base = mkdtempSync(join(tmpdir(), 'svc-rotate-owner-'));
  chmodSync(base, 0o755);
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const server of servers) await server.stop();
  });

  /** A keys file owned `uid:gid` with `mode` in a 0700 folder of the service user's, as production.md makes it. */
  const keysFileOf = async (owner: { uid: number; gid: number }, mode: number): Promise<string> => {
    const folder = mkdtempSync(join(base, 'etc-'));
    chownSync(folder, SERVICE.uid, SERVICE.gid);
    chmodSync(folder, 0o700);
    const file = join(folder, 'keys.json');
    writeFileSync(file, JSON.stringify(await generateProviderKeys()));
    chownSync(file, owner.uid, owner.gid);
    chmodSync(file, mode);
    return file;
  };
  const ownership = (file: string): { uid: number; gid: number; mode: string } => {
    const { uid, gid, mode } = statSync(file);
    return { uid, gid, mode: (mode & 0o777).toString(8) };
  };
  /** The server as the service user reads `file` after its SIGHUP: `keys_reloaded` with the rotated keys listed, or `keys_reload_failed`. */
  const reloadedByService = async (file: string, rotate: () => Promise<unknown>): Promise<{ event: string; nextListed: boolean }> => {
    const port = await freePort();
    const issuer = `http://localhost:${port}/oidc/v1`;
    const server = startServerProcess({ PORT: String(port), SVC_KEYS_FILE: file, SVC_LOG_FORMAT: 'json' }, SERVICE);
    servers.push(server);
    await waitFor(`${issuer}/.well-known/openid-configuration`);
    await rotate();
    const events = (): string[] => server.output().split('\n').flatMap((l) => /"event":"(keys_reload(?:ed|_failed))"/.exec(l)?.[1] ?? []);
    server.child.kill('SIGHUP');
    while (events().length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const next = (JSON.parse(readFileSync(file, 'utf8')) as { keys: StatefulJwk[] }).keys.filter((k) => k.svc_state === 'next' && k.use === 'sig');
    const listed = ((await (await fetch(`${issuer}/jwks`)).json()) as JSONWebKeySet).keys.map((k) => k.kid);
    await server.stop();
    return { event: String(events()[0]), nextListed: next.length > 0 && next.every((k) => listed.includes(k.kid)) };
  };

  asRoot("attack: the service user's own file (0600) keeps its owner and mode, and the server running as that user reloads it", async () => {
    const file = await keysFileOf(SERVICE, 0o600);
    const outcome = await reloadedByService(file, async () => {
      const rotated = await keysCli(['rotate', '--file', file]);
      expect([rotated.code, rotated.stdout]).toEqual([0, expect.stringContaining('added next keys')]);
    });
    expect({ ...ownership(file), ...outcome }).toEqual({ ...SERVICE, mode: '600', event: 'keys_reloaded', nextListed: true });
  });

  asRoot("honest: root's file the service group reads (0640) stays root's, of that group, 0640, and the server reloads it", async () => {
    const file = await keysFileOf({ uid: 0, gid: SERVICE.gid }, 0o640);
    const outcome = await reloadedByService(file, async () => expect((await keysCli(['rotate', '--file', file])).code).toBe(0));
    expect({ ...ownership(file), ...outcome }).toEqual({ uid: 0, gid: SERVICE.gid, mode: '640', event: 'keys_reloaded', nextListed: true });
  });

  asRoot("attack: run by a user who may not give the new file the keys file's owner, rotate changes nothing and says why; honest: the service user rotates its own file", async () => {
    const file = await keysFileOf({ uid: 0, gid: SERVICE.gid }, 0o640);
    const before = readFileSync(file, 'utf8');
    const refused = await keysCli(['rotate', '--file', file], undefined, SERVICE);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`cannot give the rotated keys the owner (uid 0) and group (gid ${SERVICE.gid}) of ${file}`);
    expect([readFileSync(file, 'utf8'), ownership(file), readdirSync(join(file, '..'))]).toEqual([before, { uid: 0, gid: SERVICE.gid, mode: '640' }, ['keys.json']]);

    const own = await keysFileOf(SERVICE, 0o600);
    const rotated = await keysCli(['rotate', '--file', own], undefined, SERVICE);
    expect([rotated.code, ownership(own), readdirSync(join(own, '..'))]).toEqual([0, { ...SERVICE, mode: '600' }, ['keys.json']]);
  });
});

/**
 * `systemctl reload` (SIGHUP) can reach a server that is still starting: restarted by its supervisor, or a deployment
 * under way while a rotation's reloads go out. systemd counts a death by SIGHUP as clean, so `Restart=on-failure` would
 * not start it again.
 */
describe('a SIGHUP that reaches the server while it starts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-rotate-early-hup-'));

  it('attack: sent while the server loads its modules, it neither kills the server nor is lost: once listening, it reloads the keys file', async () => {
    const keysFile = join(dir, 'keys.json');
    writeFileSync(keysFile, JSON.stringify(await generateProviderKeys()), { mode: 0o600 });
    // An authenticator module that holds the start until SIGUSR2, so the SIGHUP lands before the server listens.
    const module = join(dir, 'held-authenticator.mjs');
    writeFileSync(
      module,
      [
        "process.stdout.write('held-authenticator loading\\n');",
        // A signal listener alone does not keep the process alive.
        'const alive = setInterval(() => undefined, 60_000);',
        "await new Promise((resolve) => process.once('SIGUSR2', resolve));",
        'clearInterval(alive);',
        'export default { async authenticate() { return undefined; }, async exists() { return false; } };',
        '',
      ].join('\n'),
    );
    const port = await freePort();
    const server = startServerProcess({ PORT: String(port), SVC_KEYS_FILE: keysFile, SVC_AUTHENTICATOR_MODULE: module, SVC_DEMO_ENABLED: 'false', SVC_LOG_FORMAT: 'json' });
    try {
      while (!server.output().includes('held-authenticator loading')) {
        if (server.child.exitCode !== null || server.child.signalCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // The file rotated after the server read it: the reload must not be skipped.
      const rotated = await keysCli(['rotate', '--file', keysFile]);
      expect(rotated.code).toBe(0);
      server.child.kill('SIGHUP');
      server.child.kill('SIGUSR2');
      const lines = (): string[] => server.output().split('\n');
      while (!lines().some((l) => l.includes('"event":"keys_reloaded"')) && server.child.signalCode === null && server.child.exitCode === null) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect({ signal: server.child.signalCode, exit: server.child.exitCode }).toEqual({ signal: null, exit: null });
      const next = (JSON.parse(readFileSync(keysFile, 'utf8')) as { keys: StatefulJwk[] }).keys.filter((k) => k.svc_state === 'next' && k.use === 'sig').map((k) => k.kid);
      const listed = ((await (await fetch(`http://localhost:${port}/oidc/v1/jwks`)).json()) as JSONWebKeySet).keys.map((k) => k.kid);
      expect(listed).toEqual(expect.arrayContaining(next));
    } finally {
      await server.stop();
    }
  });
});

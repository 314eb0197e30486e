import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { freePort } from '../helpers/processes.js';
import { deletePrefix, SHARED_REDIS_URL, testPrefix } from '../helpers/redis.js';
import { startSmtp, type TestSmtp } from '../helpers/smtp.js';

const root = new URL('../..', import.meta.url).pathname;
const unitFile = join(root, 'examples/systemd/svc-connect.service');
/** Where the unit expects the installed package; the test puts the built repository there. */
const INSTALLED_PACKAGE = '/opt/svc-connect/node_modules/svc-connect';
const NODE = '/usr/bin/node';

/** The `Key=value` lines of a unit's `[Service]` section, in order (a key may repeat). */
function serviceEntries(unit: string): [string, string][] {
  const section = unit.split(/^\[/m).find((s) => s.startsWith('Service]')) ?? '';
  return section
    .split('\n')
    .slice(1)
    .filter((line) => line.trim() && !line.trimStart().startsWith('#'))
    .map((line) => {
      const at = line.indexOf('=');
      return [line.slice(0, at).trim(), line.slice(at + 1).trim()];
    });
}

/** A command line of the unit split into words (the unit's lines use no quoting). */
const words = (line: string): string[] => line.split(/\s+/).filter(Boolean);

/** Polls `check` every 100 ms until it returns true; fails after `seconds`. */
async function eventually(what: string, seconds: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const kids = async (issuer: string): Promise<string[]> => ((await (await fetch(`${issuer}/jwks`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();
const fileKids = (file: string): string[] => (JSON.parse(readFileSync(file, 'utf8')) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();

describe('the example systemd unit (examples/systemd/svc-connect.service)', () => {
  const unit = readFileSync(unitFile, 'utf8');
  const entries = serviceEntries(unit);
  const one = (key: string): string => {
    const found = entries.filter(([k]) => k === key);
    expect(found).toHaveLength(1);
    return (found[0] as [string, string])[1];
  };
  const dir = mkdtempSync(join(tmpdir(), 'svc-unit-'));
  /** The unit's paths replaced by this machine's: node, the built repository, a working folder. */
  const localized = (text: string): string => text.replaceAll(INSTALLED_PACKAGE, root).replaceAll(NODE, process.execPath).replaceAll('/opt/svc-connect', dir);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('starts node on the built command directly, reloads with SIGHUP to the main process, and reads an EnvironmentFile', () => {
    expect(one('Type')).toBe('exec');
    expect(words(one('ExecStart'))).toEqual([NODE, `${INSTALLED_PACKAGE}/dist/lib/cli.js`, 'serve']);
    expect(words(one('ExecReload'))).toEqual(['/bin/kill', '-HUP', '$MAINPID']);
    expect(one('EnvironmentFile')).toMatch(/^\/etc\/svc-connect\//);
    expect(entries).toEqual(expect.arrayContaining([['Environment', 'NODE_ENV=production'], ['NoNewPrivileges', 'yes'], ['ProtectSystem', 'strict']]));
  });

  it('passes systemd-analyze verify (where systemd-analyze exists)', () => {
    const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    if (probe.error) {
      console.warn(`skipped: systemd-analyze verify (systemd-analyze is not installed here: ${probe.error.message})`);
      return;
    }
    // verify checks that ExecStart's program exists: this machine's node stands in for /usr/bin/node.
    const verifyDir = join(dir, 'verify');
    mkdirSync(verifyDir, { recursive: true });
    writeFileSync(join(verifyDir, 'svc-connect.service'), localized(unit));
    const result = spawnSync('systemd-analyze', ['verify', join(verifyDir, 'svc-connect.service')], { encoding: 'utf8' });
    // verify reports parse faults on stderr and still exits 0, so both are asserted.
    expect({ status: result.status, stderr: result.stderr.trim() }).toEqual({ status: 0, stderr: '' });
  });

  describe('its ExecStart command line, run as the unit runs it', () => {
    let smtp: TestSmtp;
    const prefix = testPrefix('systemd-unit');
    beforeAll(async () => {
      smtp = await startSmtp();
    });
    afterAll(async () => {
      await smtp.close();
      await deletePrefix(SHARED_REDIS_URL, prefix);
    });

    it('reloads the keys on ExecReload (SIGHUP), publishing the new keys, and exits 0 on SIGTERM', async () => {
      const keys = join(dir, 'keys.json');
      const next = join(dir, 'next.json');
      const cli = join(root, 'dist/lib/cli.js');
      execFileSync(process.execPath, [cli, 'keys', 'generate', '--out', keys]);
      execFileSync(process.execPath, [cli, 'keys', 'generate', '--out', next]);
      writeFileSync(join(dir, 'users.json'), '[]');
      const port = await freePort();
      // What /etc/svc-connect/svc-connect.env holds in production, with the test's own Redis and SMTP.
      const environmentFile: Record<string, string> = {
        SVC_PORT: String(port),
        SVC_REDIS_URL: SHARED_REDIS_URL,
        SVC_REDIS_KEY_PREFIX: prefix,
        SVC_KEYS_FILE: keys,
        SVC_COOKIES_KEYS: randomBytes(32).toString('base64url'),
        SVC_SUBJECT_PAIRWISE_KEY: randomBytes(32).toString('base64url'),
        SVC_MANAGEMENT_USER: 'ops',
        SVC_MANAGEMENT_PASSWORD: randomBytes(18).toString('base64url'),
        SVC_MAIL_SMTP_URL: smtp.url,
        SVC_MAIL_FROM: 'idp@example.test',
        SVC_AUTHENTICATOR_MODULE: join(root, 'dist/examples/authenticator-file.js'),
        AUTH_USERS_FILE: join(dir, 'users.json'),
      };
      const unitEnvironment = Object.fromEntries(entries.filter(([k]) => k === 'Environment').map(([, v]) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]));
      const [program, ...args] = words(localized(one('ExecStart'))) as [string, ...string[]];
      const cwd = localized(one('WorkingDirectory'));
      expect(existsSync(program) && existsSync(args[0] as string) && existsSync(cwd)).toBe(true);
      const child = spawn(program, args, { cwd, env: { PATH: process.env.PATH ?? '', ...unitEnvironment, ...environmentFile }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const issuer = `http://localhost:${port}/oidc/v1`;
      try {
        await eventually('the server answers', 30, async () => fetch(`${issuer}/jwks`).then((r) => r.ok, () => false));
        expect(out).not.toContain('unsafe_default');
        expect(await kids(issuer)).toEqual(fileKids(keys));

        copyFileSync(next, keys);
        const [kill, ...killArgs] = words(one('ExecReload').replace('$MAINPID', String(child.pid))) as [string, ...string[]];
        execFileSync(kill, killArgs);
        await eventually('keys_reloaded is logged', 30, async () => out.includes('"event":"keys_reloaded"'));
        expect(await kids(issuer)).toEqual(fileKids(next));
        expect(child.exitCode).toBeNull();

        child.kill(one('KillSignal') as NodeJS.Signals);
        expect(await exited).toBe(0);
        expect(out).toContain('"event":"stopped"');
        // Journald gets JSON lines only: no npm banner, no plain sentence.
        expect(out.split('\n').filter((line) => line && !line.startsWith('{'))).toEqual([]);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    }, 90_000);
  });
});

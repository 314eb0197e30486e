import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { issueInitialAccessToken } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { runCli, type CliRun } from '../helpers/cli.js';
import { register } from '../helpers/registration.js';

const PASSWORD = 'escaping-password-123';

/**
 * A client name that tries to talk to the terminal: a right-to-left override that shows `exe.txt`
 * reversed, C1 controls (CSI, NEL), ESC sequences, a carriage return that overwrites its row, the
 * other bidi formatting characters and a line separator.
 */
const HOSTILE = 'Good app\u202etxt.exe\u009b2J\u0085\u001b[31mred\u001b]0;title\u0007\rFAKE\u200e\u200f\u061c\u2066\u2067\u2068\u2069\u202a\u202b\u202c\u202d\u2028end\u007f';
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('what svc-connect prints cannot talk to the terminal', () => {
  let running: RunningApp;
  let clientId = '';

  const cli = (args: string[]): Promise<CliRun> => runCli(args, { SVC_BASE_URL: running.baseUrl, SVC_MANAGEMENT_PASSWORD: PASSWORD });

  beforeAll(async () => {
    running = await startApp({ properties: { 'svc.management.password': PASSWORD } });
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const registered = await register(running, { redirect_uris: ['https://rp.example/cb'], client_name: HOSTILE }, token);
    expect(registered.status).toBe(201);
    clientId = String(registered.body.client_id);
    expect(registered.body.client_name).toBe(HOSTILE);
  });
  afterAll(async () => running.close());

  it('clients list shows the name escaped as \\uXXXX, on one row', async () => {
    const listed = await cli(['clients', 'list', '--all']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(UNSAFE);
    const row = listed.stdout.split('\n').find((l) => l.startsWith(clientId));
    expect(row).toMatch(/ Good app\\u202etxt\.exe\\u009b2J\\u0085\\u001b\[31mred\\u001b\]0;title\\u0007\\u000dFAKE\\u200e\\u200f\\u061c\\u2066\\u2067\\u2068\\u2069\\u202a\\u202b\\u202c\\u202d\\u2028end\\u007f$/);
  });

  it('clients list --json and clients show write every such character as \\uXXXX, and the JSON still holds the name exactly', async () => {
    const asJson = await cli(['clients', 'list', '--all', '--json']);
    const shown = await cli(['clients', 'show', clientId]);
    for (const output of [asJson, shown]) {
      expect({ code: output.code, stderr: output.stderr }).toEqual({ code: 0, stderr: '' });
      expect(output.stdout).not.toMatch(UNSAFE);
      expect(output.stdout).toContain('"Good app\\u202etxt.exe\\u009b2J\\u0085\\u001b[31mred\\u001b]0;title\\u0007\\rFAKE\\u200e\\u200f\\u061c\\u2066');
    }
    const listed = (JSON.parse(asJson.stdout) as { clients: { client_id: string; client_name?: string }[] }).clients.find((c) => c.client_id === clientId);
    expect(listed?.client_name).toBe(HOSTILE);
    expect((JSON.parse(shown.stdout) as { client: { client_name: string } }).client.client_name).toBe(HOSTILE);
  });

  it('escapes what reaches stderr too: an error naming a hostile client id, and a note', async () => {
    const missing = await cli(['clients', 'show', `x${HOSTILE}`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('HTTP 404 not_found');
    expect(missing.stderr).not.toMatch(UNSAFE);
    expect(missing.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    const usage = await cli(['clients', `frob\u202e\u009b`]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('unknown clients command frob\\u202e\\u009b');
    expect(usage.stderr).not.toMatch(UNSAFE);
  });

  it('leaves ordinary text alone: letters of every script, line ends and indentation', async () => {
    const { token } = await issueInitialAccessToken(running.app.svc.provider);
    const name = 'Ärzte-Portal — 診療 عربي';
    const registered = await register(running, { redirect_uris: ['https://rp.example/cb'], client_name: name }, token);
    const shown = await cli(['clients', 'show', String(registered.body.client_id)]);
    expect(shown.stderr).toBe('');
    expect(shown.stdout).toContain(`"client_name": "${name}"`);
    expect(shown.stdout).toMatch(/^{\n {2}"client": {\n/);
  });
});

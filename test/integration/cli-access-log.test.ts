import { readFileSync, mkdtempSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { appPerSuite } from '../helpers/suite-app.js';
import { runCli as cli } from '../helpers/cli.js';
import { register } from '../helpers/registration.js';

const PASSWORD = 'invite-address-password-123';

describe('what svc-connect puts in URLs, which access logs in front of the provider keep', () => {
  const running = appPerSuite({ properties: { 'svc.management.password': PASSWORD, 'svc.mail.outbox-dir': join(mkdtempSync(join(tmpdir(), 'svc-invite-')), 'outbox') } });
  // A reverse proxy in front of the provider that writes an access log line per request, as nginx does.
  const accessLog: string[] = [];
  const proxy = createServer((req, res) => {
    accessLog.push(`${req.method ?? ''} ${req.url ?? ''}`);
    const target = new URL(running.baseUrl);
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  let front = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    front = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  it("attack: invite: the access log of a proxy in front of the provider never holds the invitee's full address (only the provider's log names her domain)", async () => {
    const run = await cli(['invite', '--url', front, '--email', 'erika.mustermann@partner.example'], { SVC_MANAGEMENT_PASSWORD: PASSWORD });
    expect(run.code).toBe(0);
    expect(accessLog.length).toBeGreaterThan(0);
    for (const line of accessLog) expect(decodeURIComponent(line)).not.toContain('erika.mustermann');
  });

  it('honest: invite: the invitation is mailed to that address, with a token, and the answer names her', async () => {
    const run = await cli(['invite', '--url', front, '--email', 'partner@example.com'], { SVC_MANAGEMENT_PASSWORD: PASSWORD });
    expect(run.code).toBe(0);
    const answer = JSON.parse(run.stdout) as { invited: string; mail: { transport: string; file: string } };
    expect(answer).toMatchObject({ invited: 'partner@example.com', mail: { transport: 'outbox' } });
    const mail = readFileSync(answer.mail.file, 'utf8');
    expect(mail).toContain('To: partner@example.com');
    expect(mail).toContain('Initial access token');
  });

  it('attack: invitations revoke: an initial access token pasted where the invitation id belongs never leaves the machine (exit 2), and still registers', async () => {
    const { initial_access_token: token } = await fetch(`${running.baseUrl}/oidc/v1/management/initial-access-tokens`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}` },
    }).then(async (r) => (await r.json()) as { initial_access_token: string });
    accessLog.length = 0;
    const run = await cli(['invitations', 'revoke', token, '--url', front], { SVC_MANAGEMENT_PASSWORD: PASSWORD });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('inv_');
    expect(run.stderr).not.toContain(token);
    expect(accessLog).toEqual([]);
    expect((await register(running, { redirect_uris: ['https://rp.example/cb'] }, token)).status).toBe(201);
  });

  it('honest: invitations revoke: the id from invitations list revokes that invitation', async () => {
    const sent = JSON.parse((await cli(['invite', '--url', front, '--email', 'rp@example.net'], { SVC_MANAGEMENT_PASSWORD: PASSWORD })).stdout) as { invitation: string; mail: { file: string } };
    const run = await cli(['invitations', 'revoke', sent.invitation, '--url', front], { SVC_MANAGEMENT_PASSWORD: PASSWORD });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ id: sent.invitation, revoked: true });
    const listed = await cli(['invitations', 'list', '--json', '--url', front], { SVC_MANAGEMENT_PASSWORD: PASSWORD });
    expect((JSON.parse(listed.stdout) as { invitations: { id: string }[] }).invitations.map((i) => i.id)).not.toContain(sent.invitation);
  });
});

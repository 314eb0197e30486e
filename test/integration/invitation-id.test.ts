import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from '@jest/globals';

import { appPerSuite } from '../helpers/suite-app.js';
import { capturingLogger } from '../helpers/logs.js';
import { managementCalls } from '../helpers/management-calls.js';
import { register } from '../helpers/registration.js';

const AUTH = `Basic ${Buffer.from('operator:invitation-id-password').toString('base64')}`;
const M = '/oidc/v1/management';

describe('an invitation mailed to a wrong address can be revoked alone', () => {
  const { logger, lines } = capturingLogger();
  const running = appPerSuite({
    logger,
    properties: {
      'svc.management.user': 'operator',
      'svc.management.password': 'invitation-id-password',
      'svc.proxy': true,
      'svc.mail.outbox-dir': join(mkdtempSync(join(tmpdir(), 'svc-inv-id-')), 'outbox'),
    },
  });
  const call = managementCalls(running, AUTH);
  const invite = (email: string) => call('POST', `${M}/invite_client`, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ email }).toString() });
  const tokenIn = (file: string): string => /<pre>\n([A-Za-z0-9_-]{20,})\n<\/pre>/.exec(readFileSync(file, 'utf8'))?.[1] ?? '';

  it('attack: of invitations sent in the same second, the one to a typo domain (partner@examp1e.com) is named by the answer and the log line, and revoking it leaves its mailed token dead', async () => {
    const [typo, meant] = [await invite('partner@examp1e.com'), await invite('partner@example.com')];
    expect([typo.status, meant.status]).toEqual([202, 202]);
    const id = typo.body.invitation;
    expect(id).toMatch(/^inv_[A-Za-z0-9_-]{43}$/);
    const sent = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'invitation_sent');
    expect(sent.map((l) => l.invitation)).toEqual([id, meant.body.invitation]);
    expect((await call('DELETE', `${M}/invitations/${String(id)}`)).status).toBe(200);
    const dead = await register(running, { redirect_uris: ['https://rp.example/cb'] }, tokenIn((typo.body.mail as { file: string }).file));
    expect(dead.status).toBe(401);
    expect(dead.body.error).toBe('invalid_token');
  });

  it('honest: the other invitation is still pending under the id its answer named, and its mailed token registers once', async () => {
    const meant = await invite('rp-team@example.org');
    const pending = ((await call('GET', `${M}/invitations`)).body.invitations as { id: string }[]).map((i) => i.id);
    expect(pending).toContain(meant.body.invitation);
    const registered = await register(running, { redirect_uris: ['https://rp.example/cb'] }, tokenIn((meant.body.mail as { file: string }).file));
    expect(registered.status).toBe(201);
    expect(lines.join('\n')).not.toContain(tokenIn((meant.body.mail as { file: string }).file));
  });

  it('names the management user who sent an invitation, as initial_access_token_issued does, and of the invitee only the domain', async () => {
    const sent = await invite('alice.partner@example.net');
    const line = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.e === 'invitation_sent' && l.invitation === sent.body.invitation);
    expect(line).toMatchObject({ user: 'operator', domain: 'example.net' });
    expect(lines.join('\n')).not.toContain('alice.partner');
    expect(lines.join('\n')).not.toContain('invitation-id-password');
  });
});

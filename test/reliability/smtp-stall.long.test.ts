import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { checkConnections } from '../../lib/cli/connection-checks.js';
import { createMailer } from '../../lib/management/mailer.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { register } from '../helpers/registration.js';
import { startSmtp, tokenIn, type TestSmtp } from '../helpers/smtp.js';

const PASSWORD = 'a-management-password';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

/**
 * An SMTP server whose first connection greets, then answers EHLO one byte every second, for ever (a byte resets every
 * socket timeout: smtp-server cannot stall so; `stalling` resolves then); every later connection is passed to `smtp`.
 */
async function stallingFirst(smtp: TestSmtp): Promise<{ url: string; server: Server; sockets: Set<Socket>; stalling: Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  let stalls = (): void => undefined;
  const stalling = new Promise<void>((resolve) => (stalls = resolve));
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (++connections > 1) {
      const upstream = createConnection(Number(new URL(smtp.url).port), '127.0.0.1');
      sockets.add(upstream);
      upstream.on('error', () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
      return;
    }
    socket.write('220 stalling.example ESMTP\r\n');
    socket.once('data', () => {
      stalls();
      const drip = setInterval(() => socket.write('2'), 1000);
      socket.on('close', () => clearInterval(drip));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `smtp://127.0.0.1:${(server.address() as AddressInfo).port}`, server, sockets, stalling };
}

describe('an SMTP server that stalls a delivery by trickling its replies', () => {
  let smtp: TestSmtp;
  let stalling: Awaited<ReturnType<typeof stallingFirst>>;
  let running: RunningApp;

  beforeAll(async () => {
    smtp = await startSmtp();
    stalling = await stallingFirst(smtp);
    // A deadline of 5 s in place of the minute: the bound is the same code path, and the stall outlasts either.
    const mailer = createMailer({ smtpUrl: stalling.url, outboxDir: '/nonexistent', sendDeadlineMs: 5000 });
    running = await startApp({ mailer, properties: { 'svc.mail.from': 'idp@example.com', 'svc.management.password': PASSWORD } });
  });
  afterAll(async () => {
    await running.close();
    for (const socket of stalling.sockets) socket.destroy();
    await new Promise((resolve) => stalling.server.close(resolve));
    await smtp.close();
  });

  const invite = (email: string): Promise<Response> => fetch(`${running.issuer}/management/invite_client?email=${encodeURIComponent(email)}`, { headers: { authorization: AUTH } });

  it('attack: the stalled invitation ends (502, no invitation left), and an honest one beside it is mailed and registers', async () => {
    const stalled = invite('stalled@example.com');
    await stalling.stalling;
    const honest = await invite('partner@example.com');
    expect(honest.status).toBe(202);
    const { invitation } = (await honest.json()) as { invitation: string };
    const token = tokenIn((await smtp.next()).text ?? '');

    const ended = await stalled;
    expect([ended.status, ((await ended.json()) as { error: string }).error]).toEqual([502, 'mail_delivery_failed']);
    const pending = (await (await fetch(`${running.issuer}/management/invitations`, { headers: { authorization: AUTH } })).json()) as { invitations: { id: string }[] };
    expect(pending.invitations.map((i) => i.id)).toEqual([invitation]);
    expect((await register(running, { redirect_uris: ['https://partner.example/cb'] }, token)).status).toBe(201);
    // The pool put a new connection in place of the one given up.
    expect((await invite('second@example.com')).status).toBe(202);
    expect((await smtp.next()).to).toMatchObject({ text: 'second@example.com' });
  });
});

describe('config check --connect against an SMTP server that trickles its replies', () => {
  let smtp: TestSmtp;
  let stalling: Awaited<ReturnType<typeof stallingFirst>>;

  beforeAll(async () => {
    smtp = await startSmtp();
    stalling = await stallingFirst(smtp);
  });
  afterAll(async () => {
    for (const socket of stalling.sockets) socket.destroy();
    await new Promise((resolve) => stalling.server.close(resolve));
    await smtp.close();
  });

  const checkMail = async (): Promise<{ ok: boolean; text: string } | undefined> =>
    (await checkConnections({ redis: {}, mail: { smtpUrl: stalling.url, outboxDir: '/nonexistent' }, claim: { issuer: 'https://idp.example/oidc/v1', store: 'embedded' } }, 2000)).find((c) => c.what === 'mail');

  it('attack: the check fails as timed out and ends its connection (left open, the trickle kept the command from exiting); honest: the next check passes', async () => {
    const checked = checkMail();
    await stalling.stalling;
    const [stalled] = stalling.sockets;
    const closed = new Promise((resolve) => stalled?.once('close', resolve));
    expect(await checked).toEqual({ what: 'mail', ok: false, text: expect.stringMatching(/^SMTP: timed out at 127\.0\.0\.1:\d+: /) });
    await closed;
    expect(await checkMail()).toEqual({ what: 'mail', ok: true, text: expect.stringMatching(/^SMTP at 127\.0\.0\.1:\d+ accepts a connection$/) });
  });
});

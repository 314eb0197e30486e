import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import nodemailer from 'nodemailer';

import type { Mailer, MailMessage } from '../../lib/index.js';
import { startApp, type RunningApp } from '../helpers/app.js';
import { capturingLogger } from '../helpers/logs.js';
import { tokenIn } from '../helpers/smtp.js';

const PASSWORD = 'a-management-password';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;

describe("an embedder's mailer: the answer says where the mail went only as a receipt", () => {
  // What `send` resolves with next; each mail sent is kept, so the test knows its token.
  let resolveWith: (message: MailMessage) => Promise<unknown> = async () => undefined;
  const sent: MailMessage[] = [];
  // As a plain-JavaScript embedder writes it: `send` resolves with whatever it likes.
  const mailer = { kind: 'smtp', send: (message: MailMessage) => (sent.push(message), resolveWith(message)), close: () => undefined } as unknown as Mailer;
  const { logger, lines } = capturingLogger();
  let running: RunningApp;

  beforeAll(async () => {
    running = await startApp({ logger, mailer, properties: { 'svc.management.password': PASSWORD, 'svc.mail.from': 'idp@example.com' } });
  });
  afterAll(() => running.close());

  const invite = async (): Promise<{ status: number; text: string; body: Record<string, unknown> }> => {
    const res = await fetch(`${running.issuer}/management/invite_client?email=partner%40example.com`, { headers: { authorization: AUTH } });
    const text = await res.text();
    return { status: res.status, text, body: JSON.parse(text) as Record<string, unknown> };
  };

  it.each([
    ['jsonTransport', nodemailer.createTransport({ jsonTransport: true })],
    ['streamTransport', nodemailer.createTransport({ streamTransport: true, buffer: true })],
  ])('attack: a mailer resolving with what nodemailer %s answers (the whole message, token included) does not put the token in the answer', async (_name, transport) => {
    resolveWith = (message) => transport.sendMail(message);
    const res = await invite();
    const token = tokenIn(sent[sent.length - 1]?.text ?? '');
    expect(res.status).toBe(202);
    expect(res.text).not.toContain(token);
    expect(res.body.mail).toBeUndefined();
    expect(lines.join('\n')).not.toContain(token);
  });

  it('honest: a mailer resolving with a receipt has it answered as it is, one resolving with nothing has no mail member', async () => {
    resolveWith = async () => ({ transport: 'smtp', host: 'mail.example.com:587' });
    expect((await invite()).body.mail).toEqual({ transport: 'smtp', host: 'mail.example.com:587' });
    resolveWith = async () => ({ transport: 'outbox', file: '/srv/svc/outbox/a.eml' });
    expect((await invite()).body.mail).toEqual({ transport: 'outbox', file: '/srv/svc/outbox/a.eml' });
    resolveWith = async () => undefined;
    const res = await invite();
    expect([res.status, Object.keys(res.body).sort()]).toEqual([202, ['expires_at', 'invitation', 'invited']]);
  });
});

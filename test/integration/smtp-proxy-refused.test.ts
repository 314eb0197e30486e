import { createServer, type Socket } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

import { createMailer } from '../../lib/index.js';
import { runCli as cli } from '../helpers/cli.js';
import { startSmtp, type TestSmtp } from '../helpers/smtp.js';

/**
 * nodemailer's `?proxy=` makes the connection its own: `config check --connect` could not close it at its deadline
 * (the socket it destroyed instead, unused, crashed the process with an unhandled 'error'), and a receipt named the
 * SMTP host the proxy was asked for. The SMTP URL is refused with it, in settings and in `createMailer` alike.
 */
describe('an SMTP URL that routes through a proxy is refused', () => {
  const heard: Socket[] = [];
  // An HTTP CONNECT proxy that says yes, then trickles a greeting that never ends.
  const proxy = createServer((socket) => {
    heard.push(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => socket.write('HTTP/1.1 200 Connection established\r\n\r\n2'));
  });
  let proxyUrl = '';
  let smtp: TestSmtp;
  beforeAll(async () => {
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    smtp = await startSmtp();
  });
  afterAll(async () => {
    for (const socket of heard) socket.destroy();
    await new Promise((resolve) => proxy.close(resolve));
    await smtp.close();
  });

  it('attack: createMailer and config check refuse ?proxy= (exit 1, naming it); the proxy is never connected to', async () => {
    const url = `smtp://mail.example.com:587?proxy=${encodeURIComponent(proxyUrl)}`;
    expect(() => createMailer({ smtpUrl: url, outboxDir: '/nonexistent', sendDeadlineMs: 1000 })).toThrow('the query makes nodemailer reach the SMTP server another way than straight to the host and port of the URL (proxy)');
    const checked = await cli(['config', 'check'], { SVC_MAIL_SMTP_URL: url });
    expect([checked.code, checked.stderr]).toEqual([1, expect.stringContaining('invalid value for svc.mail.smtp-url (from SVC_MAIL_SMTP_URL)')]);
    expect(checked.stderr).toContain('(proxy)');
    expect(heard).toHaveLength(0);
  });

  it('attack: a port or host in the query, which nodemailer takes where the URL names none, is refused: the receipt named port 587 or no host', () => {
    const { port, hostname } = new URL(smtp.url);
    for (const [url, fault] of [[`smtp://${hostname}?port=${port}`, '(port)'], [`smtp:///?host=${hostname}&port=${port}`, 'names no host']] as const) {
      expect(() => createMailer({ smtpUrl: url, outboxDir: '/nonexistent', sendDeadlineMs: 1000 })).toThrow(fault);
    }
  });

  it('honest: a direct SMTP URL, with the query options nodemailer reads for it, is verified and sends', async () => {
    const mailer = createMailer({ smtpUrl: `${smtp.url}?name=idp.example.com&pool=true`, outboxDir: '/nonexistent', sendDeadlineMs: 10_000 });
    try {
      await mailer.verify?.();
      const receipt = await mailer.send({ from: 'idp@example.com', to: 'rp@example.com', subject: 'direct', text: 'direct', html: '<p>direct</p>' });
      expect(receipt).toEqual({ transport: 'smtp', host: new URL(smtp.url).host });
      expect((await smtp.next()).subject).toBe('direct');
    } finally {
      mailer.close();
    }
  });
});

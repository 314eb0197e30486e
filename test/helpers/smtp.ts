import type { AddressInfo } from 'node:net';
import { domainToASCII } from 'node:url';

import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A real SMTP server (smtp-server) on a free loopback port that keeps what it receives. */
export interface TestSmtp {
  url: string;
  /** Parsed messages, in arrival order. */
  mails: ParsedMail[];
  /** Raw messages, also those the server refused after receiving them. */
  raw: string[];
  /**
   * The envelope's recipients (`RCPT TO`) of each message in {@link raw}, their domains in ASCII as they travelled
   * (smtp-server decodes them): who the mail goes to, whatever its header says.
   */
  recipients: string[][];
  /** When set, every message is received and then refused with this SMTP error. */
  refuseWith?: { code: number; message: string };
  /** Every sign-in the server was offered (`user`, and whether the connection was TLS by then). */
  signIns: { user: string; secure: boolean }[];
  /** Resolves with the oldest message not yet taken by `next` (waiting for one if needed). */
  next(): Promise<ParsedMail>;
  close(): Promise<void>;
}

/** Options of {@link startSmtp}. */
export interface TestSmtpOptions {
  /** Requires a sign-in as this user (over plain text too, unless `tls` is set). */
  user?: { name: string; password: string };
  /** Offers STARTTLS with this key and certificate, and signs in only over TLS. */
  tls?: { key: string; cert: string };
}

/** Starts {@link TestSmtp}; by default without sign-in and without STARTTLS. */
export async function startSmtp(options: TestSmtpOptions = {}): Promise<TestSmtp> {
  const waiting: ((mail: ParsedMail) => void)[] = [];
  const unread: ParsedMail[] = [];
  const smtp: TestSmtp = {
    url: '',
    mails: [],
    raw: [],
    recipients: [],
    signIns: [],
    next: () => {
      const mail = unread.shift();
      return mail ? Promise.resolve(mail) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const { user, tls } = options;
  const server = new SMTPServer({
    authOptional: !user,
    allowInsecureAuth: !tls,
    disabledCommands: tls ? [] : ['STARTTLS'],
    ...(tls ? { key: tls.key, cert: tls.cert } : {}),
    logger: false,
    onAuth(auth, session, callback) {
      smtp.signIns.push({ user: auth.username ?? '', secure: session.secure });
      if (auth.username === user?.name && auth.password === user?.password) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        smtp.raw.push(raw);
        smtp.recipients.push(session.envelope.rcptTo.map((r) => r.address.replace(/@([^@]*)$/, (_, domain: string) => `@${domainToASCII(domain)}`)));
        if (smtp.refuseWith) {
          const err = Object.assign(new Error(smtp.refuseWith.message), { responseCode: smtp.refuseWith.code });
          callback(err);
          return;
        }
        void simpleParser(raw).then((mail) => {
          smtp.mails.push(mail);
          const waiter = waiting.shift();
          if (waiter) waiter(mail);
          else unread.push(mail);
          callback();
        });
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  smtp.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  return smtp;
}

/** The initial access token in an invitation mail's text. */
export function tokenIn(text: string): string {
  const match = /Initial access token[^\n]*\n\n(\S+)\n/.exec(text.replace(/\r\n/g, '\n'));
  if (!match?.[1]) throw new Error('no token in the mail');
  return match[1];
}

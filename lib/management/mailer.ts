import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join, resolve } from 'node:path';

import nodemailer from 'nodemailer';

import { parseSmtpUrl } from '../settings/parse.js';

/** One outgoing mail. */
export interface MailMessage {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Where one mail went: the SMTP server that accepted it (`host:port`, never credentials), or the absolute path of the `.eml` file written. */
export type MailReceipt = { transport: 'smtp'; host: string } | { transport: 'outbox'; file: string };

/** Sends mail: over SMTP, or into an outbox folder as `.eml` files. */
export interface Mailer {
  /** Where mail goes, for logs. */
  readonly kind: 'smtp' | 'outbox';
  /**
   * Sends one message; rejects when it was not delivered to the server or written. Embedders' mailers may resolve with
   * nothing: only a {@link MailReceipt} is answered (as `mail`), anything else (nodemailer's `info`) is dropped.
   */
  send(message: MailMessage): Promise<MailReceipt | void>;
  /** Releases pooled connections. */
  close(): void;
  /** The SMTP server's host and port, for logs (never its credentials). */
  readonly where?: { readonly host: string; readonly port: number };
  /** Connects and signs in to the SMTP server, sending nothing (`config check --connect`); the outbox checks nothing. */
  verify?(): Promise<void>;
}

/** Options of {@link createMailer}. */
export interface MailerOptions {
  /** `smtp://` or `smtps://` URL; unset → outbox. */
  smtpUrl?: string;
  /** Folder for `.eml` files when there is no SMTP server. */
  outboxDir: string;
  /**
   * How long one SMTP delivery may take, waiting for a pooled connection included, before it fails; and
   * {@link Mailer.verify}.
   * @default 60000
   */
  sendDeadlineMs?: number;
}

/**
 * The mailer of the management invitations: SMTP through nodemailer (pooled, with timeouts, each delivery given up
 * after {@link MailerOptions.sendDeadlineMs}), or `.eml` files written to the outbox folder (mode 0600) when no SMTP server is configured. An
 * `smtp://` URL with credentials requires STARTTLS (unless its query says `requireTLS=false`):
 * a server that does not offer it gets no credentials and no mail.
 * @throws Error for an SMTP URL `svc.mail.smtp-url` refuses (a proxy in its query, say), naming the fault.
 */
export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl) {
    const timeouts = { connectionTimeout: 5000, greetingTimeout: 5000, socketTimeout: 10000 };
    const smtpUrl = parseSmtpUrl(options.smtpUrl);
    const url = new URL(smtpUrl);
    // Credentials go only over TLS: whoever strips STARTTLS from the server's answer would read them otherwise.
    // A `requireTLS=false` in the URL's query still opts out (nodemailer lets the URL win).
    const requireTLS = url.protocol === 'smtp:' && (url.username !== '' || url.password !== '');
    const transportOptions = { url: smtpUrl, pool: true, maxConnections: 2, requireTLS, ...timeouts };
    const transport = nodemailer.createTransport(transportOptions);
    const where = { host: url.hostname, port: Number(url.port || (url.protocol === 'smtps:' ? 465 : 587)) };
    const deadlineMs = options.sendDeadlineMs ?? 60_000;
    return {
      kind: 'smtp',
      where,
      async send(message) {
        // A server trickling its replies resets every socket timeout: without a deadline it holds the request, and
        // a pooled connection, for as long as it trickles.
        await transport.sendMail({ ...message, signal: AbortSignal.timeout(deadlineMs) });
        return { transport: 'smtp', host: `${where.host}:${where.port}` };
      },
      async verify() {
        // nodemailer's verify takes no signal: it runs on a socket of ours, destroyed at the deadline (left open, a
        // trickling server held it, and the process, for as long as it trickled).
        const socket = new Socket();
        const probe = nodemailer.createTransport({ ...transportOptions, socket });
        const timer = setTimeout(() => socket.destroy(Object.assign(new Error(`SMTP timed out: no answer within ${deadlineMs} ms`), { code: 'ETIMEDOUT' })), deadlineMs);
        try {
          await probe.verify();
        } finally {
          clearTimeout(timer);
          probe.close();
        }
      },
      close: () => transport.close(),
    };
  }
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'outbox',
    async send(message) {
      const info = await transport.sendMail(message);
      // Absolute, so a failure logged as the cause names the folder wherever the server runs.
      const folder = resolve(options.outboxDir);
      await mkdir(folder, { recursive: true, mode: 0o700 });
      const file = join(folder, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(4).toString('hex')}.eml`);
      await writeFile(file, info.message as Buffer, { mode: 0o600 });
      return { transport: 'outbox', file };
    },
    close: () => transport.close(),
  };
}

import { describeFailure, silentLogger, type LogFields } from '../logger.js';
import type { RedisStoreOptions } from '../../adapters/redis.js';
import type { SvcStore } from '../../adapters/store.js';
import type { MailerOptions } from '../management/mailer.js';
import { SettingsError } from '../errors.js';
import { recordedIssuer, type StoreClaim } from '../provider/store-issuer.js';

/** The outcome of one connection check of `config check --connect`. */
export interface ConnectionCheck {
  what: 'store' | 'mail';
  ok: boolean;
  /** One line: what was reached, or why not (cause code, message without credentials, host). */
  text: string;
}

/** What a cause code means, in words an operator searches for. */
function causeKind(code: string | undefined, message: string): string {
  const text = `${code ?? ''} ${message}`;
  if (/ECONNREFUSED/.test(text)) return 'connection refused';
  if (/ENOTFOUND|EAI_AGAIN|EDNS/.test(text)) return 'host not found';
  if (/EAUTH|WRONGPASS|NOAUTH|invalid username-password|authentication/i.test(text)) return 'authentication failed';
  if (/NOPERM/.test(text)) return 'permission denied';
  if (/ETLS|TLS|SSL|CERT|self[- ]signed/i.test(text)) return 'TLS failed';
  if (/ETIMEDOUT|ETIMEOUT|timed? ?out/i.test(text)) return 'timed out';
  if (/ECONNRESET|EPIPE|closed/i.test(text)) return 'connection closed';
  return 'failed';
}

/** One failure as printed: what kind, where, the code and the (safe) message. */
function failureText(fields: LogFields): string {
  const code = typeof fields.cause_code === 'string' ? fields.cause_code : undefined;
  const message = typeof fields.cause === 'string' ? fields.cause : '';
  const where = fields.host === undefined ? '' : ` at ${String(fields.host)}${fields.port === undefined ? '' : `:${String(fields.port)}`}`;
  const status = fields.smtp_status === undefined ? '' : ` (SMTP ${String(fields.smtp_status)})`;
  const detail = [code && !message.includes(code) ? code : undefined, message].filter(Boolean).join(': ');
  return `${causeKind(code, message)}${where}${status}: ${detail || 'no reason given'}`;
}

/** Rejects after `ms` unless `promise` settles first. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(Object.assign(new Error(`${what} did not answer within ${ms} ms`), { code: 'ETIMEDOUT' })), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whose the store's key prefix is, read only: unclaimed, this issuer's, the previous one's (moved at start), or another's (refused). */
async function prefixOwner(store: Pick<SvcStore, 'adapter'>, claim: StoreClaim): Promise<Omit<ConnectionCheck, 'what'>> {
  try {
    const owner = await recordedIssuer(store, claim);
    if (owner === undefined) return { ok: true, text: `${claim.store} is unclaimed: the first start records it for ${claim.issuer}` };
    if (owner === claim.issuer) return { ok: true, text: `${claim.store} belongs to this issuer, ${owner}` };
    return { ok: true, text: `${claim.store} belongs to ${owner} (svc.redis.previous-base-url): the first start moves it to ${claim.issuer}` };
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    return { ok: false, text: err.message };
  }
}

/**
 * Opens the configured store, sends PING and reads whose its key prefix is ({@link prefixOwner}): another issuer's fails
 * as the start would. The embedded store has nothing to connect to.
 */
async function checkStore(redis: Omit<RedisStoreOptions, 'logger'>, claim: StoreClaim, timeoutMs: number): Promise<ConnectionCheck> {
  if (!redis.url && !redis.clusterNodes) return { what: 'store', ok: true, text: 'embedded memory store: nothing to connect to' };
  const { createStore } = await import('../../adapters/index.js');
  const store = createStore(redis, silentLogger);
  const target = redis.clusterNodes ? `Redis Cluster ${redis.clusterNodes.map((n) => `${n.host}:${n.port}`).join(',')}` : 'Redis';
  try {
    await within(store.ping(), timeoutMs, 'Redis');
    const url = redis.url ? new URL(redis.url) : undefined;
    const prefix = await within(prefixOwner(store, claim), timeoutMs, 'Redis');
    return { what: 'store', ok: prefix.ok, text: `${target}${url ? ` at ${url.hostname}:${url.port || 6379}` : ''} answers PING; ${prefix.text}` };
  } catch (err) {
    const where = (err as { where?: { host?: string; port?: number } }).where;
    return { what: 'store', ok: false, text: `${target}: ${failureText(describeFailure(err, where))}` };
  } finally {
    await within(store.close(), 2000, 'closing Redis').catch(() => undefined);
  }
}

/** Connects to the SMTP server and signs in (sends nothing); the outbox has nothing to connect to. */
async function checkMail(mail: MailerOptions, timeoutMs: number): Promise<ConnectionCheck> {
  if (!mail.smtpUrl) return { what: 'mail', ok: true, text: `outbox folder ${mail.outboxDir}: nothing to connect to` };
  const { createMailer } = await import('../management/mailer.js');
  const mailer = createMailer({ ...mail, sendDeadlineMs: timeoutMs });
  const where = mailer.where;
  const at = where ? ` at ${where.host}:${where.port}` : '';
  try {
    await within(mailer.verify?.() ?? Promise.resolve(), timeoutMs, 'SMTP');
    return { what: 'mail', ok: true, text: `SMTP${at} accepts a connection${new URL(mail.smtpUrl).username ? ' and the sign-in' : ''}` };
  } catch (err) {
    return { what: 'mail', ok: false, text: `SMTP: ${failureText(describeFailure(err, where))}` };
  } finally {
    mailer.close();
  }
}

/**
 * `config check --connect`: {@link checkStore} for `slices.claim` and {@link checkMail}, each within `timeoutMs`, each
 * saying what answered or why not, with the error's code and message without credentials or addresses.
 */
export async function checkConnections(slices: { redis: Omit<RedisStoreOptions, 'logger'>; mail: MailerOptions; claim: StoreClaim }, timeoutMs = 10_000): Promise<ConnectionCheck[]> {
  return Promise.all([checkStore(slices.redis, slices.claim, timeoutMs), checkMail(slices.mail, timeoutMs)]);
}

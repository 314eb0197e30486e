import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SMTPServer } from 'smtp-server';

import { describeFailure, reduceEmailAddresses, safeCauseMessage } from '../../lib/logger.js';
import { startApp } from '../helpers/app.js';
import { runCli as cli } from '../helpers/cli.js';
import { capturingLogger } from '../helpers/logs.js';
import { freePort } from '../helpers/processes.js';
import { startOwnRedis, testPrefix, type OwnRedis } from '../helpers/redis.js';

const REDIS_PASSWORD = 'redis-pw-Zq81';
const SMTP_USER = 'idp-mailer';
const SMTP_PASSWORD = 'smtp-pw-Kd27';
const PASSWORDS = /redis-pw-Zq81|smtp-pw-Kd27|wrong-pw-Xy55/;
/** The strict server below offers no STARTTLS: credentials go to it only where the URL says so. */
const IN_CLEAR = '?requireTLS=false';

/** A real SMTP server that signs in one user only and refuses every recipient, echoing the address as servers do. */
async function startStrictSmtp(): Promise<{ port: number; close(): Promise<void> }> {
  const server = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) callback(null, { user: SMTP_USER });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      callback(Object.assign(new Error(`<${address.address}>: Recipient address rejected: mailbox ${address.address} unavailable`), { responseCode: 550 }));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.server.address() as AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const configCheckConnect = (env: Record<string, string>): ReturnType<typeof cli> => cli(['config', 'check', '--connect'], env);
/** A test's wait for a Redis that answers, not the production fail-fast one: on a busy machine a PING may take longer. */
const ANSWERING = { SVC_REDIS_OPERATION_TIMEOUT_MS: '10000' };
const lineOf = (stdout: string, what: 'store' | 'mail'): string => stdout.split('\n').find((l) => l.startsWith(`${what}: `)) ?? '';

describe('what a failure says: its cause, never a credential, an address or a Redis argument', () => {
  let redis: OwnRedis;
  let smtp: Awaited<ReturnType<typeof startStrictSmtp>>;
  beforeAll(async () => {
    redis = await startOwnRedis({ password: REDIS_PASSWORD });
    smtp = await startStrictSmtp();
  });
  afterAll(async () => {
    redis.dispose();
    await smtp.close();
  });

  it('config check --connect reports both connections OK with the right credentials, printing no password', async () => {
    const result = await configCheckConnect({
      ...ANSWERING,
      SVC_REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${redis.port}/0`,
      SVC_MAIL_SMTP_URL: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}${IN_CLEAR}`,
    });
    expect(result.code).toBe(0);
    expect(lineOf(result.stdout, 'store')).toBe(`store: OK: Redis at 127.0.0.1:${redis.port} answers PING; svc.redis.key-prefix "svc:" is unclaimed: the first start records it for http://localhost:3000/oidc/v1`);
    expect(lineOf(result.stdout, 'mail')).toBe(`mail: OK: SMTP at 127.0.0.1:${smtp.port} accepts a connection and the sign-in`);
    expect(result.stdout).toContain(`redis://:***@127.0.0.1:${redis.port}/0`);
    expect(result.stdout + result.stderr).not.toMatch(PASSWORDS);
  });

  it('config check --connect names a wrong password as an authentication failure, with the host, for each', async () => {
    const result = await configCheckConnect({
      ...ANSWERING,
      SVC_REDIS_URL: `redis://:wrong-pw-Xy55@127.0.0.1:${redis.port}/0`,
      SVC_MAIL_SMTP_URL: `smtp://${SMTP_USER}:wrong-pw-Xy55@127.0.0.1:${smtp.port}${IN_CLEAR}`,
    });
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, 'store')).toMatch(new RegExp(`^store: FAILED: Redis: authentication failed at 127\\.0\\.0\\.1:${redis.port}: WRONGPASS `));
    expect(lineOf(result.stdout, 'mail')).toMatch(new RegExp(`^mail: FAILED: SMTP: authentication failed at 127\\.0\\.0\\.1:${smtp.port} \\(SMTP 535\\): EAUTH: `));
    expect(result.stderr).toContain('svc-connect config: cannot connect: store, mail');
    expect(result.stdout + result.stderr).not.toMatch(PASSWORDS);
  });

  it('config check --connect names a server that offers no STARTTLS to credentials as a TLS failure', async () => {
    const result = await configCheckConnect({
      ...ANSWERING,
      SVC_REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${redis.port}/0`,
      SVC_MAIL_SMTP_URL: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`,
    });
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, 'mail')).toMatch(new RegExp(`^mail: FAILED: SMTP: TLS failed at 127\\.0\\.0\\.1:${smtp.port} \\(SMTP 500\\): ETLS: `));
    expect(result.stdout + result.stderr).not.toMatch(PASSWORDS);
  });

  it('config check --connect names TLS spoken to a server that does not speak it: SMTP fails the handshake, Redis never answers it', async () => {
    const result = await configCheckConnect({
      SVC_REDIS_URL: `rediss://:${REDIS_PASSWORD}@127.0.0.1:${redis.port}/0`,
      SVC_MAIL_SMTP_URL: `smtps://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`,
    });
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, 'store')).toMatch(new RegExp(`^store: FAILED: Redis: timed out at 127\\.0\\.0\\.1:${redis.port}: `));
    expect(lineOf(result.stdout, 'mail')).toMatch(new RegExp(`^mail: FAILED: SMTP: TLS failed at 127\\.0\\.0\\.1:${smtp.port}: `));
    expect(result.stdout + result.stderr).not.toMatch(PASSWORDS);
  });

  it('config check --connect against a stopped Redis and a stopped SMTP server says connection refused and where', async () => {
    const [redisPort, smtpPort] = [await freePort(), await freePort()];
    const result = await configCheckConnect({
      SVC_REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:${redisPort}/0`,
      SMTP_URL: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtpPort}?password=${SMTP_PASSWORD}`,
    });
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, 'store')).toBe(`store: FAILED: Redis: connection refused at 127.0.0.1:${redisPort}: connect ECONNREFUSED 127.0.0.1:${redisPort}`);
    expect(lineOf(result.stdout, 'mail')).toMatch(new RegExp(`^mail: FAILED: SMTP: connection refused at 127\\.0\\.0\\.1:${smtpPort}: \\w+: connect ECONNREFUSED 127\\.0\\.0\\.1:${smtpPort}$`));
    expect(result.stdout + result.stderr).not.toMatch(PASSWORDS);
  });

  it('config check without --connect contacts neither and prints no password', async () => {
    const result = await cli(['config', 'check'], { SVC_REDIS_URL: `redis://:${REDIS_PASSWORD}@127.0.0.1:1/0`, SVC_MAIL_SMTP_URL: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:1` });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/^(store|mail): /m);
    expect(result.stdout + result.stderr).not.toMatch(PASSWORDS);
  });

  it('logs a refused recipient with the SMTP status, code and host, the address reduced to its domain', async () => {
    const { logger, lines } = capturingLogger();
    const running = await startApp({ logger, properties: { 'svc.mail.smtp-url': `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}${IN_CLEAR}`, 'svc.management.password': 'mgmt-pw' } });
    try {
      const invited = await fetch(`${running.issuer}/management/invite_client?email=erika.partner@partner.example`, { headers: { authorization: `Basic ${Buffer.from('admin:mgmt-pw').toString('base64')}` } });
      expect(invited.status).toBe(502);
      const failed = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'invitation_mail_failed');
      expect(failed).toEqual([expect.objectContaining({ cause_code: 'EENVELOPE', smtp_status: 550, host: '127.0.0.1', port: smtp.port, cause: expect.stringContaining('*@partner.example') })]);
      expect(lines.join('\n')).not.toContain('erika.partner');
      expect(lines.join('\n')).not.toMatch(PASSWORDS);
    } finally {
      await running.close();
    }
  });

  it.each([
    ['an apostrophe in the local part', "erika'o@partner.example", '*@partner.example'],
    ['a one-label domain (an intranet host)', 'erika.partner@intranet', '*@intranet'],
    // smtp-server, as servers may, echoes the ASCII domain it was sent decoded.
    ['an IDN domain', 'erika.partner@bücher.example', '*@bücher.example'],
  ])('logs a refused recipient with %s reduced to its domain: no part of the local part', async (_what, address, reduced) => {
    const { logger, lines } = capturingLogger();
    const running = await startApp({ logger, properties: { 'svc.mail.smtp-url': `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}${IN_CLEAR}`, 'svc.management.password': 'mgmt-pw' } });
    try {
      const url = new URL(`${running.issuer}/management/invite_client`);
      url.searchParams.set('email', address);
      const invited = await fetch(url, { headers: { authorization: `Basic ${Buffer.from('admin:mgmt-pw').toString('base64')}` } });
      expect(invited.status).toBe(502);
      const failed = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'invitation_mail_failed');
      expect(failed).toEqual([expect.objectContaining({ smtp_status: 550, cause: expect.stringContaining(reduced) })]);
      expect(lines.join('\n')).not.toContain('erika');
    } finally {
      await running.close();
    }
  });

  it('logs an outbox folder that cannot be made with the file system\'s code and its absolute path', async () => {
    const { logger, lines } = capturingLogger();
    const blocker = join(mkdtempSync(join(tmpdir(), 'svc-outbox-')), 'a-file');
    writeFileSync(blocker, '');
    const cwd = process.cwd();
    const running = await startApp({ logger, properties: { 'svc.mail.outbox-dir': relative(cwd, join(blocker, 'outbox')) } });
    try {
      const invited = await fetch(`${running.issuer}/management/invite_client?email=erika.partner@partner.example`, { headers: { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` } });
      expect(invited.status).toBe(502);
      const failed = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'invitation_mail_failed');
      expect(failed).toEqual([expect.objectContaining({ transport: 'outbox', cause_code: 'ENOTDIR', cause: expect.stringContaining(join(blocker, 'outbox')) })]);
      expect(lines.join('\n')).not.toContain('erika.partner');
    } finally {
      await running.close();
    }
  });

  it('logs a Redis that refuses the password with WRONGPASS and its host, in every line, without the password', async () => {
    const { logger, lines } = capturingLogger();
    const running = await startApp({ logger, properties: { 'svc.redis.url': `redis://:wrong-pw-Xy55@127.0.0.1:${redis.port}/0`, 'svc.redis.key-prefix': testPrefix('wrongpass') } });
    try {
      const answer = await fetch(`${running.issuer}/management/invite_client?email=a@partner.example`, { headers: { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` } });
      expect(answer.status).toBe(503);
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(parsed.filter((l) => l.e === 'store_unavailable')).toEqual([expect.objectContaining({ cause_code: 'WRONGPASS', host: '127.0.0.1', port: redis.port })]);
      expect(parsed.filter((l) => l.e === 'request_failed')).toEqual([expect.objectContaining({ status: 503, code: 'SVC_STORE_UNAVAILABLE', cause_code: 'WRONGPASS', host: '127.0.0.1', port: redis.port })]);
      expect(lines.join('\n')).not.toMatch(PASSWORDS);
    } finally {
      await running.close();
    }
  });

  describe('a Redis whose error echoes the command arguments', () => {
    let refusing: OwnRedis;
    beforeAll(async () => {
      // Without SET, every record write fails with "ERR unknown command 'set', with args beginning with: '<key>' '<record>' …".
      refusing = await startOwnRedis({ extra: ['--rename-command', 'SET', ''] });
    });
    afterAll(() => refusing.dispose());

    it('logs the error code and message without the arguments (no key, no record)', async () => {
      const { logger, lines } = capturingLogger();
      const prefix = testPrefix('echoed-args');
      const running = await startApp({ logger, properties: { 'svc.redis.url': refusing.url, 'svc.redis.key-prefix': prefix } });
      try {
        const answer = await fetch(`${running.issuer}/management/invite_client?email=erika.partner@partner.example`, { headers: { authorization: `Basic ${Buffer.from('admin:admin').toString('base64')}` } });
        expect(answer.status).toBe(503);
        const failed = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.e === 'request_failed');
        expect(failed).toEqual([expect.objectContaining({ cause_code: 'ERR', cause: "ERR unknown command 'set'", host: '127.0.0.1', port: refusing.port })]);
        const text = lines.join('\n');
        for (const leaked of [prefix, 'args beginning', 'erika.partner', '"EX"']) expect(text).not.toContain(leaked);
      } finally {
        await running.close();
      }
    });
  });

  it('reduces what a cause says: credentials out of URLs, addresses to their domain, arguments cut, first line only', () => {
    expect(reduceEmailAddresses('550 5.1.1 <Erika.M+tag@Mail.Example.COM>: rejected; cc bob@x.example')).toBe('550 5.1.1 <*@Mail.Example.COM>: rejected; cc *@x.example');
    expect(reduceEmailAddresses("550 <o'hara@x.example> and 'bob@x.example', root@localhost, jörg@bücher.example.")).toBe("550 <*@x.example> and *@x.example', *@localhost, *@bücher.example.");
    expect(safeCauseMessage("ERR unknown command 'set', with args beginning with: 'svc:Session:abc' '{\"accountId\":\"demo\"}'")).toBe("ERR unknown command 'set'");
    expect(safeCauseMessage('cannot reach redis://user:hunter2@db.internal:6379/0?password=hunter2 now\nsecond line')).toBe('cannot reach redis://user:***@db.internal:6379/0?password=*** now');
    // Node's connection to every address of a host fails as one AggregateError without a message.
    const aggregate = Object.assign(new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:6379'), { code: 'ECONNREFUSED', address: '::1', port: 6379 })], ''), { code: 'ECONNREFUSED' });
    expect(describeFailure({ cause: aggregate }, { host: 'localhost', port: 6379 })).toEqual({ cause_code: 'ECONNREFUSED', cause: 'connect ECONNREFUSED ::1:6379', host: '::1', port: 6379 });
    // A Redis Cluster that no node answers: ioredis keeps the last node's error apart from `cause`.
    const cluster = Object.assign(new Error('Failed to refresh slots cache.'), { lastNodeError: Object.assign(new Error('connect ECONNREFUSED 10.0.0.2:7000'), { code: 'ECONNREFUSED', address: '10.0.0.2', port: 7000 }) });
    expect(describeFailure(cluster, { host: '10.0.0.1:7000,10.0.0.2:7000' })).toEqual({ cause_code: 'ECONNREFUSED', cause: 'connect ECONNREFUSED 10.0.0.2:7000', host: '10.0.0.2', port: 7000 });
    // ioredis keeps the command and its arguments on the error: never read.
    const reply = Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), { command: { name: 'get', args: ['svc:Session:secret-key'] } });
    expect(JSON.stringify(describeFailure(reply, { host: 'db', port: 6379 }))).not.toContain('secret-key');
  });
});
